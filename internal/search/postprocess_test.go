package search

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runRecipe expands a recipe and drives it against respond, where respond
// sees the probe's full option values (searched and fixed) by name.
func runRecipe(t *testing.T, name string, in RecipeInputs, respond func(v map[string]float64, probe, trial int) map[string]float64) (*Recipe, History) {
	t.Helper()
	r, err := ExpandRecipe(name, in)
	require.NoError(t, err)
	s, err := New(r.Config)
	require.NoError(t, err)
	h, stop := drive(t, s, func(pt Point, probe, trial int) Trial {
		v := map[string]float64{}
		for _, n := range []string{"concurrency", "synthetic_input_tokens_mean", "output_tokens_mean"} {
			v[n] = r.valueOf(pt, n)
		}
		return Trial{OK: true, Values: respond(v, probe, trial)}
	})
	require.NotEqual(t, ReasonMaxIterations, stop.Reason)
	return r, h
}

// aggregate is the post-process document as JSON decodes it.
func aggregate(t *testing.T, r *Recipe, h History) (string, map[string]any) {
	t.Helper()
	file, doc, err := r.Aggregate(h)
	require.NoError(t, err)
	b, err := json.Marshal(doc)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(b, &out))
	return file, out
}

// A server whose prefill costs 48 µs a token over a 9 ms floor, with 2%
// noise per trial: the fitted slope is the configured cost within 5%.
func TestPrefillCurveRecoversTheSlope(t *testing.T) {
	t.Parallel()
	const usPerToken, floorMs = 48.0, 9.0
	r, h := runRecipe(t, RecipePrefillCurve, RecipeInputs{Streaming: true, Trials: TrialRule{Min: 3}},
		func(v map[string]float64, probe, trial int) map[string]float64 {
			require.Equal(t, 1.0, v["concurrency"], "prefill runs at concurrency 1")
			rng := rand.New(rand.NewPCG(uint64(probe), uint64(trial)))
			ttft := (floorMs + usPerToken/1000*v["synthetic_input_tokens_mean"]) * (1 + 0.02*rng.NormFloat64())
			return map[string]float64{"time_to_first_token.avg": ttft}
		})
	file, doc := aggregate(t, r, h)
	assert.Equal(t, "prefill_curve.json", file)
	assert.Equal(t, "linear", doc["fit_form"])
	coef := doc["coefficients"].([]any)
	assert.InEpsilon(t, usPerToken/1000, coef[0].(float64), 0.05, "ms per token")
	assert.Greater(t, doc["r_squared"].(float64), 0.99)
	assert.Equal(t, false, doc["below_floor"])
	assert.Equal(t, "datasets.main.prompts.isl", doc["swept_param"])
	raw := doc["raw_points"].([]any)
	require.Len(t, raw, 8)
	assert.Equal(t, map[string]any{"isl": 256.0, "ttft_ms": raw[0].(map[string]any)["ttft_ms"]}, raw[0])
}

// A U-shaped TTFT(ISL) fits a line badly (r² < 0.85): the quadratic fallback
// recovers it exactly.
func TestPrefillCurveQuadraticFallback(t *testing.T) {
	t.Parallel()
	r, h := runRecipe(t, RecipePrefillCurve, RecipeInputs{Streaming: true},
		func(v map[string]float64, _, _ int) map[string]float64 {
			x := v["synthetic_input_tokens_mean"]
			return map[string]float64{"time_to_first_token.avg": 1e-6*(x-16000)*(x-16000) + 5}
		})
	doc, ok := must(r.Aggregate(h)).(*CurveFit)
	require.True(t, ok)
	assert.Equal(t, "quadratic", doc.FitForm)
	assert.InEpsilon(t, 1e-6, doc.Coefficients[0], 1e-6)
	assert.InEpsilon(t, -0.032, doc.Coefficients[1], 1e-6)
	assert.InEpsilon(t, 256+5, doc.Coefficients[2], 1e-6)
	assert.InDelta(t, 1, doc.RSquared, 1e-9)
	assert.False(t, doc.BelowFloor)
}

func must(_ string, doc any, err error) any {
	if err != nil {
		panic(err)
	}
	return doc
}

func TestDegradationKnee(t *testing.T) {
	t.Parallel()
	r, h := runRecipe(t, RecipeConcurrencyRamp, RecipeInputs{},
		func(v map[string]float64, _, _ int) map[string]float64 {
			return map[string]float64{"request_latency.p99": 100 * math.Max(1, v["concurrency"]/50)}
		})
	file, doc := aggregate(t, r, h)
	assert.Equal(t, "degradation_knee.json", file)
	assert.Equal(t, 1.0, doc["baseline_concurrency"])
	assert.Equal(t, 100.0, doc["baseline_p99"])
	assert.Equal(t, 139.0, doc["knee_concurrency"], "52 is at 104 (< 120), 139 at 278")
	assert.Equal(t, 278.0, doc["knee_p99"])
	assert.Equal(t, 0.2, doc["threshold_pct"])
	assert.Equal(t, "phases.profiling.concurrency", doc["swept_param"])
	assert.Len(t, doc["all_points"], 8)
	assert.Equal(t, map[string]any{"concurrency": 1.0, "p99": 100.0}, doc["all_points"].([]any)[0])

	r, h = runRecipe(t, RecipeConcurrencyRamp, RecipeInputs{},
		func(map[string]float64, int, int) map[string]float64 {
			return map[string]float64{"request_latency.p99": 100}
		})
	_, doc = aggregate(t, r, h)
	assert.Nil(t, doc["knee_concurrency"], "no knee in range")
}

func TestITLSurface(t *testing.T) {
	t.Parallel()
	r, h := runRecipe(t, RecipeDecodeCurve, RecipeInputs{Streaming: true},
		func(v map[string]float64, _, _ int) map[string]float64 {
			return map[string]float64{"inter_token_latency.avg": 5 + 0.1*v["concurrency"] + 0.001*v["output_tokens_mean"]}
		})
	h.Probes[1].Trials[0].OK = false // one cell unmeasured
	doc, ok := must(r.Aggregate(h)).(*Surface)
	require.True(t, ok)
	assert.Equal(t, []string{"phases.profiling.concurrency", "datasets.main.prompts.osl"}, doc.SweptParams)
	assert.Equal(t, []any{int64(1), int64(3), int64(8), int64(24), int64(69), int64(200)}, doc.Surface.ConcurrencyAxis)
	assert.Equal(t, []any{int64(64), int64(161), int64(406), int64(1024)}, doc.Surface.OSLAxis)
	require.Len(t, doc.Surface.ITLGrid, 6)
	assert.Nil(t, doc.Surface.ITLGrid[0][1], "the failed cell stays null")
	assert.InDelta(t, 5+0.1*200+0.001*1024, *doc.Surface.ITLGrid[5][3], 1e-12)
	assert.Len(t, doc.RawPoints, 23)
}

func TestParetoSweep(t *testing.T) {
	t.Parallel()
	r, h := runRecipe(t, RecipeParetoSweep, RecipeInputs{Streaming: true, ISLOSLPairs: "128/128,2048/512", Concurrency: []int{1, 16}},
		func(v map[string]float64, _, _ int) map[string]float64 {
			c, isl := v["concurrency"], v["synthetic_input_tokens_mean"]
			return map[string]float64{"time_to_first_token.p95": isl/100 + c, "output_token_throughput.avg": 40 * c * 128 / isl}
		})
	doc, ok := must(r.Aggregate(h)).(*ParetoDoc)
	require.True(t, ok)
	// (x, y): 128/1 (2.28, 40), 128/16 (17.28, 640), 2048/1 (21.48, 2.5),
	// 2048/16 (36.48, 40): the big shape is dominated by the small one at 16.
	x := func(isl, c float64) float64 { return isl/100 + c }
	want := []ParetoCell{
		{ISL: 128, OSL: 128, Concurrency: 1, X: x(128, 1), Y: 40, ParetoOptimal: true},
		{ISL: 128, OSL: 128, Concurrency: 16, X: x(128, 16), Y: 640, ParetoOptimal: true},
		{ISL: 2048, OSL: 512, Concurrency: 1, X: x(2048, 1), Y: 2.5, ParetoOptimal: false},
		{ISL: 2048, OSL: 512, Concurrency: 16, X: x(2048, 16), Y: 40, ParetoOptimal: false},
	}
	assert.Equal(t, want, doc.Cells)
	assert.Equal(t, "time_to_first_token", doc.XMetric)
	assert.Equal(t, "avg", doc.YStat)
}

func TestSLABreachGrid(t *testing.T) {
	t.Parallel()
	r, h := runRecipe(t, RecipeMaxConcurrency, RecipeInputs{TTFTSLAms: ptr(80.0), Style: StyleGrid, Streaming: true},
		func(v map[string]float64, _, _ int) map[string]float64 {
			return map[string]float64{"time_to_first_token.p95": boundaryAt(10)(v["concurrency"]), "output_token_throughput.avg": 1}
		})
	file, doc := aggregate(t, r, h)
	assert.Equal(t, "sla_breach.json", file)
	assert.Equal(t, 7.0, doc["max_passing_concurrency"])
	assert.Equal(t, 19.0, doc["first_failing_concurrency"])
	assert.Equal(t, "time_to_first_token", doc["first_failing_breach"].(map[string]any)["metric_tag"])
	assert.Equal(t, true, doc["monotonicity_check"])
	assert.Len(t, doc["all_points"], 8)
}

func TestFitCurve(t *testing.T) {
	t.Parallel()
	fit, ok := FitCurve([]float64{1, 2, 4}, []float64{5, 7, 11}, CurveR2Floor)
	require.True(t, ok)
	assert.Equal(t, "linear", fit.Form)
	assert.InDeltaSlice(t, []float64{2, 3}, fit.Coefficients, 1e-12)
	assert.InDelta(t, 23.0, fit.At(10), 1e-9)
	assert.False(t, fit.BelowFloor)

	q := Fit{Form: "quadratic", Coefficients: []float64{1, -2, 3}}
	assert.Equal(t, 11.0, q.At(-2), "x² − 2x + 3 at −2")

	_, ok = FitCurve([]float64{1}, []float64{5}, CurveR2Floor)
	assert.False(t, ok, "one point fits nothing")
	_, ok = FitCurve([]float64{1, 2}, []float64{5}, CurveR2Floor)
	assert.False(t, ok, "mismatched lengths")
}
