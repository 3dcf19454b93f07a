package search

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// probeAt is one single-trial probe at concurrency c measuring a TTFT p95
// and an output throughput.
type probeAt struct{ c, ttft, tput float64 }

func historyOf(ps ...probeAt) History {
	var h History
	for _, p := range ps {
		h.Probes = append(h.Probes, Probe{Point: Point{p.c}, Trials: []Trial{{OK: true, Values: map[string]float64{
			"time_to_first_token.p95": p.ttft, "output_token_throughput.avg": p.tput}}}})
	}
	return h
}

// A grid whose lowest load fails a throughput floor and whose highest
// breaks the TTFT SLA: the passes above the low failure are the answer
// (AIPerf's feasible_max is the highest passing value), the low failure
// is named as below it, and boundary_summary agrees (infeasible_min, as
// AIPerf derives it, the lowest failure; infeasible_above the bracket's
// upper end). Before, the pass at 4 after the failure at 1 was dropped
// as non-monotonic: "nothing passed, 1 failed", feasible_max null.
func TestGridAnswerKeepsPassesAboveAFailure(t *testing.T) {
	t.Parallel()
	cfg := slaConfig(PlannerGrid, 9, 80, TrialRule{})
	cfg.Filters = append(cfg.Filters, Filter{Metric: "output_token_throughput", Stat: "avg", Op: "gt", Threshold: 500})
	cfg.Grid = []Point{{1}, {4}, {8}, {9}}
	s, err := New(cfg)
	require.NoError(t, err)
	h := historyOf(probeAt{1, 20, 100}, probeAt{4, 25, 600}, probeAt{8, 40, 900}, probeAt{9, 150, 950})

	assert.Equal(t, "concurrency: 8 passed (one trial), 9 failed (one trial: time_to_first_token:p95:lt:80); "+
		"not monotonic: 1 failed below 8 (output_token_throughput:avg:gt:500); "+
		"best feasible: concurrency 8 (output_token_throughput.avg 900); 4 probes, 4 trials against 4 for a 4-cell grid",
		s.Summarize(h).String())

	doc := decode(t, s.Document(h, ReasonGridComplete))
	bs := doc["boundary_summary"].(map[string]any)
	fmax := bs["feasible_max"].(map[string]any)
	assert.Equal(t, 8.0, fmax["value"])
	assert.Equal(t, 2.0, fmax["iteration_idx"])
	imin := bs["infeasible_min"].(map[string]any)
	assert.Equal(t, 1.0, imin["value"])
	assert.Equal(t, "output_token_throughput", imin["first_breach"].(map[string]any)["metric_tag"])
	above := bs["infeasible_above"].(map[string]any)
	assert.Equal(t, 9.0, above["value"])
	assert.Equal(t, "time_to_first_token", above["first_breach"].(map[string]any)["metric_tag"])
	its := doc["iterations"].([]any)
	for i, want := range []bool{true, false, false, false} {
		assert.Equal(t, want, its[i].(map[string]any)["non_monotonic_warning"], "iteration %d", i)
	}
	best := doc["best_trials"].([]any)[0].(map[string]any)
	assert.Equal(t, map[string]any{"phases.profiling.concurrency": 8.0}, best["variation_values"])

	// monotonic loads: no infeasible_above, nothing flagged
	h = historyOf(probeAt{4, 25, 600}, probeAt{8, 40, 900}, probeAt{9, 150, 950})
	bs = decode(t, s.Document(h, ""))["boundary_summary"].(map[string]any)
	assert.Equal(t, 9.0, bs["infeasible_min"].(map[string]any)["value"])
	assert.NotContains(t, bs, "infeasible_above")
}

// A best-probe search (Bayesian, as max-throughput-ttft-sla runs) leads its
// answer with the best feasible probe, best_trials[0]; a noisy failure
// below it does not hide it. Before, the answer was "5 passed, 6 failed"
// though 7 passed with the highest throughput.
func TestBestProbeSearchAnswerNamesTheBestFeasible(t *testing.T) {
	t.Parallel()
	r, err := ExpandRecipe(RecipeMaxThroughputTTFT, RecipeInputs{TTFTSLAms: ptr(80.0), Streaming: true})
	require.NoError(t, err)
	s, err := New(r.Config)
	require.NoError(t, err)
	h := historyOf(probeAt{1, 20, 100}, probeAt{5, 60, 500}, probeAt{6, 85, 600}, probeAt{7, 70, 700}, probeAt{20, 300, 800})
	sum := s.Summarize(h)
	assert.Equal(t, 7.0, sum.Best.Point[0])
	assert.Regexp(t, `^best feasible: concurrency 7 \(output_token_throughput.avg 700\); `+
		`concurrency: 7 passed \(one trial\), 20 failed \(one trial: time_to_first_token:p95:lt:80\); `+
		`not monotonic: 6 failed below 7 \(time_to_first_token:p95:lt:80\); 5 probes`, sum.String())
	bs := decode(t, s.Document(h, ""))["boundary_summary"].(map[string]any)
	assert.Equal(t, 7.0, bs["feasible_max"].(map[string]any)["value"])
	assert.Equal(t, 6.0, bs["infeasible_min"].(map[string]any)["value"])

	// nothing passed: the best measured probe, said to be infeasible
	h = historyOf(probeAt{5, 90, 500}, probeAt{9, 95, 900})
	assert.Contains(t, s.Summarize(h).String(), "best (nothing passed): concurrency 9 (output_token_throughput.avg 900); concurrency: nothing passed, 5 failed")

	// a probe passed but measured no objective: the best is a failure,
	// not said to be the only kind there is
	sum = s.Summarize(h)
	sum.Feasible = 1
	assert.Contains(t, sum.String(), "best measured (no probe that passed measured the objective): concurrency 9")
}

// A failure at the very load of the highest pass (two probes of one load,
// a Starlark planner's say) is "at or below" it.
func TestBracketFailureAtTheHighestPass(t *testing.T) {
	t.Parallel()
	b := Bracket{Param: Param{Name: "concurrency"}, Pass: &Bound{Value: 8, Confidence: 0.99},
		Below: []Bound{{Value: 8, Breach: &FilterVerdict{Filter: Filter{Metric: "request_latency", Stat: "p99", Op: "lt", Threshold: 9}, N: 1}}}}
	assert.Equal(t, "concurrency: 8 passed (99.0%), nothing failed above it; not monotonic: 8 failed at or below 8 (request_latency:p99:lt:9)", b.String())
}
