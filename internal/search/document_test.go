package search

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// decode marshals v and reads it back as generic JSON, the way AIPerf's
// readers see the file.
func decode(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

func TestSearchHistoryInAIPerfSchema(t *testing.T) {
	t.Parallel()
	r, err := ExpandRecipe(RecipeMaxConcurrency, RecipeInputs{TTFTSLAms: ptr(80.0), Streaming: true, Trials: TrialRule{Min: 2, Max: 4}})
	require.NoError(t, err)
	s, err := New(r.Config)
	require.NoError(t, err)
	h, stop := drive(t, s, ttftAt(boundaryAt(8)))
	doc := decode(t, s.Document(h, stop.Reason))

	cfg := doc["config"].(map[string]any)
	assert.Equal(t, "monotonic_sla", cfg["planner"])
	assert.Equal(t, []any{map[string]any{"metric": "output_token_throughput", "stat": "avg", "direction": "MAXIMIZE", "threshold": nil}}, cfg["objectives"])
	assert.Equal(t, []any{}, cfg["outcome_constraints"])
	assert.Equal(t, 20.0, cfg["max_iterations"])
	assert.Equal(t, []any{map[string]any{"path": "phases.profiling.concurrency", "lo": 1.0, "hi": 1000.0, "kind": "int", "name": "concurrency"}}, cfg["search_space"])
	assert.Equal(t, []any{map[string]any{"metric_tag": "time_to_first_token", "stat": "p95", "op": "lt", "threshold": 80.0}}, cfg["sla_filters"])
	for _, k := range []string{"n_initial_points", "random_seed", "improvement_patience", "plateau_window", "plateau_threshold", "confidence_level", "min_trials", "max_replicates"} {
		assert.Contains(t, cfg, k)
	}

	its := doc["iterations"].([]any)
	require.Len(t, its, len(h.Probes))
	first := its[0].(map[string]any)
	assert.Equal(t, 0.0, first["iteration_idx"])
	assert.Equal(t, map[string]any{"phases.profiling.concurrency": 1.0}, first["variation_values"])
	assert.Len(t, first["objective_values"], 1)
	assert.Equal(t, true, first["feasible"])
	assert.Equal(t, false, first["non_monotonic_warning"])
	assert.Equal(t, "pass", first["verdict"])
	assert.Equal(t, 2.0, first["trials"], "no spread: settled at the first look")

	best := doc["best_trials"].([]any)[0].(map[string]any)
	assert.Equal(t, map[string]any{"phases.profiling.concurrency": 8.0}, best["variation_values"], "the highest feasible throughput")
	assert.Equal(t, true, best["feasible"])
	assert.Equal(t, 0.0, best["pareto_rank"])
	assert.EqualValues(t, 4, best["feasible_count"], "1, 2, 4 and 8 passed")

	bs := doc["boundary_summary"].(map[string]any)
	assert.Equal(t, "phases.profiling.concurrency", bs["swept_dim_path"])
	fmax, imin := bs["feasible_max"].(map[string]any), bs["infeasible_min"].(map[string]any)
	assert.Equal(t, 8.0, fmax["value"])
	assert.Equal(t, 1.0, fmax["confidence"])
	assert.Equal(t, 9.0, imin["value"])
	breach := imin["first_breach"].(map[string]any)
	assert.Equal(t, "time_to_first_token", breach["metric_tag"])
	assert.InDelta(t, 80*9/8.5, breach["observed"], 1e-9)
	assert.Equal(t, "max-concurrency-under-sla", doc["recipe"])
	assert.Equal(t, "monotonic_precision_reached", doc["convergence_reason"])
	assert.Equal(t, float64(h.TrialsSpent()), doc["trials_spent"])
	assert.Equal(t, map[string]any{"cells": 1000.0, "trials": 2000.0}, doc["grid_equivalent"])

	mid := decode(t, s.Document(History{Probes: h.Probes[:2]}, ""))
	assert.Nil(t, mid["convergence_reason"], "null while the search runs")
	assert.Nil(t, mid["boundary_summary"].(map[string]any)["infeasible_min"])
	empty := decode(t, s.Document(History{}, ""))
	assert.Nil(t, empty["best_trials"])
	assert.Nil(t, empty["boundary_summary"])
	assert.Equal(t, []any{}, empty["iterations"])
}

// A multi-dimensional search has no boundary_summary; an ambiguous load
// stays out of the bracket and is listed.
func TestSearchHistoryShapes(t *testing.T) {
	t.Parallel()
	cfg := Config{Planner: PlannerBayesian, Space: Space{{Name: "a", Lo: 0, Hi: 1, Kind: KindReal}, {Name: "b", Lo: 0, Hi: 1, Kind: KindReal}},
		Objective: Objective{Metric: "y", Stat: "avg", Direction: Minimize}, MaxIterations: 6, InitialPoints: 3}
	s, err := New(cfg)
	require.NoError(t, err)
	h, _ := drive(t, s, func(pt Point, _, _ int) Trial {
		return Trial{OK: true, Values: map[string]float64{"y.avg": pt[0] + pt[1]}}
	})
	doc := decode(t, s.Document(h, ReasonMaxIterations))
	assert.Nil(t, doc["boundary_summary"])
	assert.Equal(t, "MINIMIZE", doc["config"].(map[string]any)["objectives"].([]any)[0].(map[string]any)["direction"])

	s1, err := New(slaConfig(PlannerSmoothIsotonic, 100, 10, TrialRule{Min: 2, Max: 2}))
	require.NoError(t, err)
	trial := func(v float64) Trial {
		return Trial{OK: true, Values: map[string]float64{"time_to_first_token.p95": v, "output_token_throughput.avg": 1}}
	}
	h1 := History{Probes: []Probe{
		{Point: Point{1}, Trials: []Trial{trial(1), trial(1.1)}},
		{Point: Point{2}, Trials: []Trial{trial(9), trial(11)}}, // straddles 10: ambiguous
		{Point: Point{4}, Trials: []Trial{trial(40), trial(41)}},
	}}
	bs := decode(t, s1.Document(h1, ""))["boundary_summary"].(map[string]any)
	assert.Equal(t, 1.0, bs["feasible_max"].(map[string]any)["value"])
	assert.Equal(t, 4.0, bs["infeasible_min"].(map[string]any)["value"])
	assert.Equal(t, []any{2.0}, bs["ambiguous"])
	assert.Equal(t, "time_to_first_token:p95", bs["binding_constraint"])
	it := decode(t, s1.Document(h1, ""))["iterations"].([]any)[1].(map[string]any)
	assert.Equal(t, "ambiguous", it["verdict"])
	assert.Equal(t, false, it["feasible"])
	sla := it["sla"].([]any)[0].(map[string]any)
	assert.Equal(t, 10.0, sla["observed"])
	assert.Less(t, sla["lower"], 10.0)
	assert.Greater(t, sla["upper"], 10.0)
}
