package servermetrics

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// between is a phase the tests mark inside the profiling phase, for a
// scrape between its edges; named in Options.Warmup, it is not part of the
// profiling span.
const between = "between"

// scrapeBetween takes a scrape of every endpoint between the profiling
// phase's marks.
func scrapeBetween(c *Collector) {
	c.Mark(between, true)
	c.Mark(between, false)
}

const ms = int64(time.Millisecond)

// The samples of the finding: concurrency 4 for about a second, the begin
// mark (before the first request) and the end mark (after the last reply)
// reading 0, the scrapes between 4, 4 and 2 (the drain).
var (
	findingTimes = []int64{35 * ms, 336 * ms, 668 * ms, 1000 * ms, 1136 * ms}
	findingVals  = []float64{0, 4, 4, 2, 0}
	// 4 from the begin mark to 668 ms, 4 to 1000 ms, 2 to the end mark.
	findingOverTime = (4*(668-35) + 4*(1000-668) + 2*(1136-1000)) / float64(1136-35)
)

func TestTimeWeightedAvg(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name  string
		times []int64
		vals  []float64
		want  float64
		ok    bool
	}{
		{"the finding: the marks hold for no time", findingTimes, findingVals, findingOverTime, true},
		{"uneven scrapes weigh by how long each held", []int64{0, 100, 400, 500}, []float64{9, 1, 3, 9}, (1*400 + 3*100) / 500.0, true},
		{"a constant is itself, exactly", []int64{3, 17, 401, 733, 1200}, []float64{0.1, 0.1, 0.1, 0.1, 0.1}, 0.1, true},
		{"one scrape between the edges: its value", []int64{0, 5, 1000}, []float64{0, 7, 0}, 7, true},
		{"an absent sample is skipped: the one before holds on", []int64{0, 100, 200, 300, 400}, []float64{0, 2, nan, 6, 0},
			(2*300 + 6*100) / 400.0, true},
		{"absent at the begin mark: from the first scrape it was in", []int64{0, 100, 200, 300}, []float64{nan, 5, 1, 5}, 1, true},
		{"only the edges: nothing seen between them", []int64{0, 1000}, []float64{0, 0}, 0, false},
		{"one sample", []int64{0}, []float64{3}, 0, false},
		{"none", nil, nil, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := timeWeightedAvg(tc.vals, tc.times, 0, len(tc.vals)-1)
			require.Equal(t, tc.ok, ok)
			if ok {
				assert.InDelta(t, tc.want, got, 1e-12)
			}
		})
	}
	got, _ := timeWeightedAvg([]float64{0.1, 0.1, 0.1, 0.1, 0.1}, []int64{3, 17, 401, 733, 1200}, 0, 4)
	assert.Equal(t, 0.1, got, "no rounding drift")
	got, ok := timeWeightedAvg(findingVals, findingTimes, 1, 3)
	assert.True(t, ok)
	assert.Equal(t, 4.0, got, "a sub-range: its own first and last are its edges")
}

// A gauge reduced over a marked phase keeps AIPerf's avg (the mean of its
// samples in the window, marks included: 10/6 here) and adds its average
// over time from the begin mark to the end mark, which the console shows
// as its avg. A periodic scrape that landed after the phase began but
// before the begin mark (while the mark was taken) is before the load.
func TestReduceGaugeOverTime(t *testing.T) {
	b := newEndpointBuf(DefaultMaxSeries, asIs)
	page := func(v float64) string {
		return fmt.Sprintf("# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m\"} %g\n", v)
	}
	const begin = 1000 * ms
	scrapes := []struct {
		t      int64
		v      float64
		pinned bool
	}{
		{0, 0, false},         // the baseline, before the phase
		{1010 * ms, 0, false}, // a periodic scrape while the begin mark was taken
		{begin + findingTimes[0], 0, true},
		{begin + findingTimes[1], 4, false},
		{begin + findingTimes[2], 4, false},
		{begin + findingTimes[3], 2, false},
		{begin + findingTimes[4], 0, true},
	}
	for _, s := range scrapes {
		b.add(families(t, page(s.v)), s.t, ms, s.pinned)
	}
	marks := []mark{{phase: 0, begin: true, ep: 0, t: begin + findingTimes[0]}, {phase: 0, ep: 0, t: begin + findingTimes[4]}}
	const url = "http://127.0.0.1:8000/metrics"
	r := &Result{Endpoints: []Endpoint{{URL: url, Source: SourceServer}}, StartNs: 0, EndNs: 3000 * ms,
		Phases:   []Phase{{Name: "profiling", BeginNs: begin, EndNs: begin + findingTimes[4]}},
		timeline: &timeline{endpoints: []*endpointBuf{b}, marks: marks}}
	reduce(r, marks, Options{Interval: 333 * time.Millisecond})
	require.Empty(t, r.Warnings)

	g := find(t, *r, "vllm:num_requests_running", "profiling")
	assert.InDelta(t, 10.0/6, g.Stats["avg"], 1e-12, "AIPerf's: every sample in the window once")
	assert.Equal(t, 6.0, g.Stats["count"])
	assert.InDelta(t, findingOverTime, g.Stats[StatTimeWeightedAvg], 1e-12)

	rows := map[string]float64{}
	for _, row := range Headline(r) {
		rows[row.Name+" "+row.Stat] = row.Value
	}
	assert.InDelta(t, 3.753, rows["Running requests avg"], 5e-4, "the concurrency the server ran, not 2")
	assert.Equal(t, 4.0, rows["Running requests max"])
}

// The console's gauge rows: avg is the average over time, and a series
// without one (no scrape between the edges, or a result of an older
// version) has no avg row rather than the samples' mean.
func TestHeadlineGaugeAvgIsOverTime(t *testing.T) {
	const url = "http://127.0.0.1:8000/metrics"
	rows := func(stats map[string]float64) map[string]float64 {
		r := &Result{Span: "profiling", Endpoints: []Endpoint{{URL: url, Source: SourceServer}}, Series: []Series{{Source: SourceServer,
			Endpoint: url, Metric: "vllm:num_requests_running", Type: TypeGauge, Phase: "profiling", Stats: stats}}}
		out := map[string]float64{}
		for _, row := range Headline(r) {
			out[row.Name+" "+row.Stat] = row.Value
		}
		return out
	}
	assert.Equal(t, map[string]float64{"Running requests avg": 3.75, "Running requests max": 4},
		rows(map[string]float64{"avg": 2, StatTimeWeightedAvg: 3.75, "max": 4}))
	assert.Equal(t, map[string]float64{"Running requests max": 4}, rows(map[string]float64{"avg": 2, "max": 4}))
}
