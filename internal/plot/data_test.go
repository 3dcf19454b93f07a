package plot

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/hooks"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
)

func TestCDFLine(t *testing.T) {
	l := cdfLine("x", []float64{3, 1, 2, 4}, 100)
	assert.Equal(t, []float64{1, 2, 3, 4}, l.X)
	assert.Equal(t, []float64{0.25, 0.5, 0.75, 1}, l.P)

	// Thinned: at most maxPoints, both ends kept, P increasing to 1.
	var vs []float64
	for i := range 10001 {
		vs = append(vs, float64(10000-i))
	}
	l = cdfLine("big", vs, 200)
	require.Len(t, l.X, 200)
	assert.Equal(t, 0.0, l.X[0])
	assert.Equal(t, 10000.0, l.X[199])
	assert.Equal(t, 1.0, l.P[199])
	for i := 1; i < len(l.X); i++ {
		assert.Greater(t, l.X[i], l.X[i-1])
		assert.Greater(t, l.P[i], l.P[i-1])
		assert.InDelta(t, l.X[i]/10000, l.P[i], 0.001, "uniform values: P ≈ x")
	}
	assert.Empty(t, cdfLine("none", nil, 10).X)
}

// rec is a streamed request: sent at sent ms, first token ttft ms later,
// last one at latency ms, osl tokens.
func rec(i int, phase string, sent, ttft, latency float64, osl int) metrics.Record {
	ns := func(ms float64) int64 { return int64(ms * 1e6) }
	kind := plan.KindProfiling
	if phase == "warmup" {
		kind = plan.KindWarmup
	}
	return metrics.Record{Index: i, Phase: phase, PhaseKind: kind, SentNs: ns(sent), EndNs: ns(sent + latency + 1),
		WallStartNs: 1_000_000_000_000, ResponseNs: metrics.StampsOf(ns(sent+ttft), ns(sent+latency)), OutputTokens: osl}
}

func TestRequestTimes(t *testing.T) {
	failed := rec(3, "profiling", 0, 5, 10, 4)
	failed.Error = &metrics.Error{Code: 500}
	r := &result.Run{Records: []metrics.Record{
		rec(0, "warmup", 0, 100, 200, 5),   // warmup: left out
		rec(1, "profiling", 10, 20, 50, 4), // ITL (50−20)/3 = 10
		rec(2, "profiling", 20, 30, 30, 1), // one token: no ITL
		failed,                             // failed: left out
	}}
	ttft, itl := requestTimes([]*result.Run{r})
	assert.InDeltaSlice(t, []float64{20, 30}, ttft, 1e-9)
	assert.InDeltaSlice(t, []float64{10}, itl, 1e-9)
}

func TestTimelineOf(t *testing.T) {
	failed := rec(3, "profiling", 300, 0, 0, 0)
	failed.ResponseNs, failed.Error, failed.EndNs = metrics.Stamps{}, &metrics.Error{Code: 500}, 350e6
	r := &result.Run{
		Records: []metrics.Record{
			rec(0, "warmup", 0, 10, 100, 4),
			rec(1, "profiling", 200, 20, 100, 4),
			rec(2, "profiling", 250, 20, 100, 4),
			failed,
		},
		ControlHooks: []hooks.Call{
			{Hook: "reset_kv_cache", OK: true, StartedAt: 1_000_000_000_000 - 5e6},
			{Hook: "profiler_start", OK: true, StartedAt: 1_000_000_000_000 + 190e6},
			{Hook: "profiler_stop", OK: false, StartedAt: 1_000_000_000_000 + 400e6},
		},
	}
	tl := TimelineOf("t", "title", r)
	require.Len(t, tl.Requests, 4)
	assert.InDelta(t, 0.2, tl.Requests[1].T, 1e-9)
	assert.InDelta(t, 20, tl.Requests[1].TTFTMs, 1e-9)
	assert.InDelta(t, 100, tl.Requests[1].LatencyMs, 1e-9)
	assert.True(t, tl.Requests[3].Failed)
	assert.True(t, math.IsNaN(tl.Requests[3].TTFTMs))
	assert.InDelta(t, 50, tl.Requests[3].LatencyMs, 1e-9, "a failure's latency runs to its end")

	require.Len(t, tl.Phases, 2)
	assert.Equal(t, Span{Name: "warmup", Kind: plan.KindWarmup, From: 0, To: 0.101}, roundSpan(tl.Phases[0]))
	assert.Equal(t, Span{Name: "profiling", Kind: plan.KindProfiling, From: 0.2, To: 0.351}, roundSpan(tl.Phases[1]))

	require.Len(t, tl.Events, 3)
	assert.InDelta(t, -0.005, tl.Events[0].T, 1e-9)
	assert.Equal(t, "profiler_start", tl.Events[1].Hook)
	assert.InDelta(t, 0.19, tl.Events[1].T, 1e-9)
	assert.False(t, tl.Events[2].OK)

	// In flight: the warmup request, none, then sends at 200, 250, 300 and
	// ends at 301, 350, 351.
	var ns []int
	for _, s := range tl.InFlight {
		ns = append(ns, s.N)
	}
	assert.Equal(t, []int{1, 0, 1, 2, 3, 2, 1, 0}, ns)
}

func roundSpan(s Span) Span {
	s.From, s.To = math.Round(s.From*1e6)/1e6, math.Round(s.To*1e6)/1e6
	return s
}

func TestBinStepsKeepsPeaks(t *testing.T) {
	var steps []Step
	for i := range 10000 {
		steps = append(steps, Step{T: float64(i), N: i % 7})
	}
	steps[5000].N = 99
	out := binSteps(steps, 400)
	assert.LessOrEqual(t, len(out), 201)
	peak := 0
	for _, s := range out {
		peak = max(peak, s.N)
	}
	assert.Equal(t, 99, peak)
	assert.Equal(t, 9999.0, out[len(out)-1].T)
	assert.Len(t, binSteps(steps[:10], 400), 10, "few steps are kept as they are")
}
