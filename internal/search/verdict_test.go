package search

import (
	"math"
	"testing"

	"github.com/aiperf-go/aiperf/internal/stats"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func probeOf(key string, xs ...float64) Probe {
	p := Probe{Point: Point{1}}
	for _, x := range xs {
		p.Trials = append(p.Trials, Trial{OK: true, Values: map[string]float64{key: x}})
	}
	return p
}

// Values 10, 12, 14: mean 12, s = 2, se = 2/√3. With one look the bound
// is mean ± t(0.95, 2)·se = 12 ± 3.3714.
func TestJudgeOneSidedBounds(t *testing.T) {
	t.Parallel()
	p := probeOf("ttft.p95", 10, 12, 14)
	rule := TrialRule{Min: 3, Max: 3, Confidence: 0.95}
	half := 2.919985580355516 * 2 / math.Sqrt(3)
	tests := []struct {
		op   string
		thr  float64
		want Outcome
	}{
		{"lt", 20, Pass},      // upper 15.37 < 20
		{"lt", 15, Ambiguous}, // 8.63 < 15 ≤ 15.37
		{"lt", 8, Fail},       // lower 8.63 ≥ 8
		{"le", 15.3714, Ambiguous},
		{"gt", 5, Pass},       // lower 8.63 > 5
		{"gt", 10, Ambiguous}, //
		{"ge", 16, Fail},      // upper 15.37 < 16
	}
	for _, tc := range tests {
		f := Filter{Metric: "ttft", Stat: "p95", Op: tc.op, Threshold: tc.thr}
		v := Judge(p, []Filter{f}, rule)
		assert.Equal(t, tc.want, v.Outcome, "%s %g", tc.op, tc.thr)
		fv := v.Filters[0]
		assert.InDelta(t, 12-half, fv.Lower, 1e-9)
		assert.InDelta(t, 12+half, fv.Upper, 1e-9)
		assert.Equal(t, 3, fv.N)
	}
	// The confidence of a pass is 1 − the one-sided p-value of the mean
	// being at or past the threshold.
	v := Judge(p, []Filter{{Metric: "ttft", Stat: "p95", Op: "lt", Threshold: 20}}, rule)
	tStat := (20 - 12) / (2 / math.Sqrt(3))
	assert.InDelta(t, stats.TCDF(tStat, 2), v.Confidence, 1e-12)
}

// Replicates are looks: with Min 2 and Max 4 a probe may be judged at 2, 3
// and 4 trials, so each look uses α/3.
func TestJudgeCorrectsForLooks(t *testing.T) {
	t.Parallel()
	p := probeOf("x.avg", 10, 12, 14)
	f := Filter{Metric: "x", Stat: "avg", Op: "lt", Threshold: 16}
	assert.Equal(t, Pass, Judge(p, []Filter{f}, TrialRule{Min: 3, Max: 3}).Outcome, "one look: upper 15.37")
	v := Judge(p, []Filter{f}, TrialRule{Min: 2, Max: 4})
	assert.Equal(t, Ambiguous, v.Outcome, "three looks widen the bound")
	q := stats.TQuantile(1-0.05/3, 2)
	assert.InDelta(t, 12+q*2/math.Sqrt(3), v.Filters[0].Upper, 1e-9)
}

func TestJudgeEdges(t *testing.T) {
	t.Parallel()
	f := Filter{Metric: "x", Stat: "avg", Op: "lt", Threshold: 10}
	t.Run("no filters pass", func(t *testing.T) {
		assert.Equal(t, Pass, Judge(probeOf("x.avg", 99), nil, TrialRule{}).Outcome)
	})
	t.Run("one value is a point verdict when no replicate may follow", func(t *testing.T) {
		assert.Equal(t, Pass, Judge(probeOf("x.avg", 9), []Filter{f}, TrialRule{}).Outcome)
		assert.Equal(t, Fail, Judge(probeOf("x.avg", 10), []Filter{f}, TrialRule{}).Outcome, "lt is strict")
		v := Judge(probeOf("x.avg", 9), []Filter{f}, TrialRule{Max: 3})
		assert.Equal(t, Ambiguous, v.Outcome, "one value cannot settle while replicates remain")
		assert.Contains(t, v.describe(), "one value")
	})
	t.Run("unmeasured fails", func(t *testing.T) {
		p := Probe{Trials: []Trial{{OK: false}, {OK: true, Values: map[string]float64{"y.avg": 1}}}}
		v := Judge(p, []Filter{f}, TrialRule{Min: 2})
		assert.Equal(t, Fail, v.Outcome)
		require.NotNil(t, v.Breach)
		assert.True(t, math.IsNaN(v.Breach.Mean))
	})
	t.Run("no spread is certain", func(t *testing.T) {
		v := Judge(probeOf("x.avg", 5, 5, 5), []Filter{f}, TrialRule{Min: 3})
		assert.Equal(t, Pass, v.Outcome)
		assert.Equal(t, 1.0, v.Confidence)
	})
	t.Run("first breach in filter order", func(t *testing.T) {
		p := Probe{Trials: []Trial{
			{OK: true, Values: map[string]float64{"a.avg": 50, "b.avg": 50}},
			{OK: true, Values: map[string]float64{"a.avg": 51, "b.avg": 51}},
		}}
		fs := []Filter{{Metric: "a", Stat: "avg", Op: "lt", Threshold: 100}, {Metric: "b", Stat: "avg", Op: "lt", Threshold: 10}, {Metric: "a", Stat: "avg", Op: "lt", Threshold: 20}}
		v := Judge(p, fs, TrialRule{Min: 2})
		assert.Equal(t, Fail, v.Outcome)
		assert.Equal(t, "b", v.Breach.Metric)
	})
}

func TestTrialRuleMore(t *testing.T) {
	t.Parallel()
	f := []Filter{{Metric: "x", Stat: "avg", Op: "lt", Threshold: 13}}
	rule := TrialRule{Min: 2, Max: 5}
	n, why := rule.More(probeOf("x.avg", 10), f)
	assert.Equal(t, 1, n)
	assert.Contains(t, why, "1 of 2 trials")
	n, why = rule.More(probeOf("x.avg", 10, 14), f)
	assert.Equal(t, 1, n, "ambiguous: another trial")
	assert.Contains(t, why, "ambiguous: x.avg")
	n, _ = rule.More(probeOf("x.avg", 10, 14, 12, 11, 13), f)
	assert.Equal(t, 0, n, "Max reached")
	n, _ = rule.More(probeOf("x.avg", 1, 1.1), f)
	assert.Equal(t, 0, n, "settled pass")
}

func TestConvergence(t *testing.T) {
	t.Parallel()
	c := Convergence{Metric: "ttft", Mode: ModeCIWidth, Threshold: 0.10}
	ok, why := c.Converged([]float64{100, 101}, 0.95, 10)
	assert.False(t, ok)
	assert.Contains(t, why, "2 of at least 3")
	// 100, 101, 102: half width t(0.975, 2)·1/√3 = 2.484; width/mean 0.0487.
	ok, _ = c.Converged([]float64{100, 101, 102}, 0.95, 10)
	assert.True(t, ok)
	ok, why = c.Converged([]float64{80, 100, 120}, 0.95, 10)
	assert.False(t, ok)
	assert.Contains(t, why, "ci_width")
	cv := Convergence{Metric: "ttft", Mode: ModeCV}
	ok, _ = cv.Converged([]float64{100, 101, 102}, 0.95, 10)
	assert.True(t, ok, "cv 0.0099 < 0.05")
	ok, _ = cv.Converged([]float64{7}, 0.95, 1)
	assert.True(t, ok, "one run allowed: nothing to wait for")
	// Under a TrialRule the criterion adds trials up to Max.
	rule := TrialRule{Min: 3, Max: 5, Convergence: &Convergence{Metric: "x", Stat: "avg"}}
	n, _ := rule.More(probeOf("x.avg", 80, 100, 120), nil)
	assert.Equal(t, 1, n)
	n, _ = rule.More(probeOf("x.avg", 100, 101, 102), nil)
	assert.Equal(t, 0, n)
	assert.ErrorContains(t, TrialRule{Convergence: &Convergence{Metric: "x", Mode: "distribution"}}.check(), "per-request records")
	assert.NoError(t, Convergence{Metric: "x", Mode: "distribution"}.Check(), "a plain multi-run reads them")
}

// TestProbeWithoutTrialsIsPending: a probe whose first trial never ended
// (the search was interrupted) is neither a pass nor a fail: the bracket
// leaves it out of its ends and says it is pending.
func TestProbeWithoutTrialsIsPending(t *testing.T) {
	t.Parallel()
	f := Filter{Metric: "x", Stat: "avg", Op: "lt", Threshold: 10}
	assert.Equal(t, Pending, Judge(Probe{Point: Point{8}}, []Filter{f}, TrialRule{}).Outcome)
	assert.Equal(t, Pending, Judge(Probe{Point: Point{8}}, nil, TrialRule{}).Outcome)
	s, err := New(Config{Planner: PlannerMonotonic, Space: Space{{Name: "concurrency", Lo: 1, Hi: 64, Kind: KindInt}},
		Filters: []Filter{f}})
	require.NoError(t, err)
	passed := probeOf("x.avg", 5)
	passed.Point = Point{4}
	sum := s.Summarize(History{Probes: []Probe{passed, {Point: Point{8}}}})
	require.NotNil(t, sum.Bracket)
	assert.Nil(t, sum.Bracket.Fail, "nothing failed: the probe at 8 ran no trial")
	assert.Equal(t, []float64{8}, sum.Bracket.Pending)
	assert.Contains(t, sum.String(), "concurrency: 4 passed (one trial), nothing failed, 8 pending (no trial ended); 2 probes, 1 trial against")
}

// TestConvergedDistribution: the latest trial's requests against the
// earlier trials', pooled; a higher threshold is stricter.
func TestConvergedDistribution(t *testing.T) {
	var prior, same, shifted []float64
	for i := range 40 {
		prior = append(prior, float64(i%20))
	}
	for i := range 20 {
		same, shifted = append(same, float64(i)+0.5), append(shifted, float64(i)+15)
	}
	c := Convergence{Metric: "request_latency", Mode: ModeDistribution}
	ok, why := c.ConvergedDistribution(prior, same)
	assert.True(t, ok, why)
	assert.Contains(t, why, "KS p")
	ok, why = c.ConvergedDistribution(prior, shifted)
	assert.False(t, ok, why)
	var near []float64 // D 0.15: converged at 0.05, not at 0.999
	for i := range 20 {
		near = append(near, float64(i)+3)
	}
	ok, why = c.ConvergedDistribution(prior, near)
	assert.True(t, ok, why)
	ok, why = Convergence{Metric: "request_latency", Mode: ModeDistribution, Threshold: 0.999}.ConvergedDistribution(prior, near)
	assert.False(t, ok, why)
	ok, why = c.ConvergedDistribution(prior, []float64{1})
	assert.False(t, ok)
	assert.Contains(t, why, "2 a side")
}
