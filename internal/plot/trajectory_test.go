package plot_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plot"
	"github.com/aiperf-go/aiperf/internal/plot/plottest"
	"github.com/aiperf-go/aiperf/internal/search"
)

// slaSearch is plottest's example search: 7 passed, 8 and 9 ambiguous,
// 10 failed.
func slaSearch(t *testing.T) (search.History, search.HistoryDoc) {
	t.Helper()
	h, doc, err := plottest.NoisySLASearch()
	require.NoError(t, err)
	require.NotNil(t, doc.BoundarySummary)
	return h, doc
}

func TestTrajectoryOfSLASearch(t *testing.T) {
	h, doc := slaSearch(t)
	tr, err := plot.TrajectoryOf(doc, plot.TrajectoryOptions{History: &h})
	require.NoError(t, err)
	assert.Equal(t, "search_trajectory", tr.Name)
	assert.Contains(t, tr.Title, "max-concurrency-under-sla: ")
	assert.Equal(t, plot.TrajectoryAxis{Label: "concurrency", Param: "phases.profiling.concurrency", Log: true}, tr.X,
		"[1, 1000] spans three decades")

	require.Len(t, tr.Panels, 1, "a monotonic search draws its one SLA filter, not the objective")
	panel := tr.Panels[0]
	assert.Equal(t, "time_to_first_token.p95", panel.Key)
	assert.Equal(t, "TTFT p95 (ms)", panel.Label)
	require.NotNil(t, panel.SLA)
	assert.Equal(t, 85.0, panel.SLA.Threshold)
	require.Len(t, panel.Probes, len(doc.Iterations), "every probe, in order")

	outcomes := map[search.Outcome]int{}
	for i, m := range panel.Probes {
		it := doc.Iterations[i]
		outcomes[m.Verdict]++
		assert.Equal(t, i, m.Iteration)
		assert.Equal(t, float64(it.VariationValues["phases.profiling.concurrency"].(int64)), m.X)
		assert.Equal(t, *it.SLA[0].Observed, m.Y.Mean)
		assert.Equal(t, it.SLA[0].Verdict, m.Verdict)
		require.Len(t, m.Trials, it.Trials, "a dot per trial")
		assert.InDelta(t, m.Y.Mean, mean(m.Trials), 1e-9)
		// The whisker is the verdict's own interval: a pass lies wholly
		// under the SLA, a fail wholly over it.
		require.True(t, m.Y.HasCI(), "3 trials or more have an interval")
		assert.Equal(t, *it.SLA[0].Lower, m.Y.Low)
		assert.Equal(t, *it.SLA[0].Upper, m.Y.High)
		switch m.Verdict {
		case search.Pass:
			assert.Less(t, m.Y.High, 85.0)
		case search.Fail:
			assert.GreaterOrEqual(t, m.Y.Low, 85.0)
		default:
			assert.True(t, m.Y.Low < 85 && m.Y.High >= 85, "an ambiguous interval straddles the SLA")
		}
	}
	assert.Equal(t, map[search.Outcome]int{search.Pass: 5, search.Ambiguous: 2, search.Fail: 3}, outcomes)

	require.NotNil(t, tr.Bracket)
	b := doc.BoundarySummary
	assert.Equal(t, float64(b.FeasibleMax.Value.(int64)), tr.Bracket.Pass)
	assert.Equal(t, float64(b.InfeasibleMin.Value.(int64)), tr.Bracket.Fail)
	assert.Equal(t, []float64{8, 9}, tr.Bracket.Ambiguous)
	assert.Equal(t, "bracket: 7 passed, 8, 9 ambiguous, 10 failed", tr.Bracket.Label)

	// A failure below the highest pass (not monotonic): the bracket's
	// upper end is the failure above the pass, and the label names both.
	low := *b
	low.InfeasibleAbove, low.InfeasibleMin = b.InfeasibleMin, &search.InfeasibleDoc{Value: int64(2)}
	nm := doc
	nm.BoundarySummary = &low
	tr2, err := plot.TrajectoryOf(nm, plot.TrajectoryOptions{})
	require.NoError(t, err)
	assert.Equal(t, 10.0, tr2.Bracket.Fail)
	assert.Equal(t, "bracket: 7 passed, 8, 9 ambiguous, 10 failed, not monotonic: 2 failed below", tr2.Bracket.Label)

	// Every failure below the highest pass (AIPerf's own history has no
	// infeasible_above): no upper end, and the label says so.
	low.InfeasibleAbove = nil
	tr3, err := plot.TrajectoryOf(nm, plot.TrajectoryOptions{})
	require.NoError(t, err)
	assert.True(t, math.IsNaN(tr3.Bracket.Fail))
	assert.Equal(t, "bracket: 7 passed, 8, 9 ambiguous, nothing failed above it, not monotonic: 2 failed below", tr3.Bracket.Label)

	// Without the history: the same means and intervals, no trial dots.
	bare, err := plot.TrajectoryOf(doc, plot.TrajectoryOptions{Name: "searches/s1/trajectory", Title: "mine"})
	require.NoError(t, err)
	assert.Equal(t, "searches/s1/trajectory", bare.Name)
	assert.Equal(t, "mine", bare.Title)
	for i, m := range bare.Panels[0].Probes {
		assert.Empty(t, m.Trials)
		assert.Equal(t, panel.Probes[i].Y, m.Y)
	}
}

// search_history.json read back (numbers as float64) draws the same.
func TestTrajectoryOfDecodedHistory(t *testing.T) {
	_, doc := slaSearch(t)
	want, err := plot.TrajectoryOf(doc, plot.TrajectoryOptions{})
	require.NoError(t, err)
	b, err := json.Marshal(doc)
	require.NoError(t, err)
	var back search.HistoryDoc
	require.NoError(t, json.Unmarshal(b, &back))
	got, err := plot.TrajectoryOf(back, plot.TrajectoryOptions{})
	require.NoError(t, err)
	assert.Equal(t, want.X, got.X)
	assert.Equal(t, want.Bracket, got.Bracket)
	assert.Equal(t, want.Panels, got.Panels)

	// AIPerf's own history has no verdicts: feasible is a pass.
	for i := range back.Iterations {
		back.Iterations[i].Verdict = ""
	}
	aiperf, err := plot.TrajectoryOf(back, plot.TrajectoryOptions{})
	require.NoError(t, err)
	assert.Equal(t, want.Panels[0].Probes, aiperf.Panels[0].Probes, "the SLA panel reads each filter's verdict")
}

func TestTrajectoryOfMultiDimensionalBO(t *testing.T) {
	cfg := search.Config{
		Planner: search.PlannerBayesian,
		Space: search.Space{{Name: "concurrency", Path: "phases.profiling.concurrency", Lo: 1, Hi: 64, Kind: search.KindInt},
			{Name: "output_tokens_mean", Path: "datasets.main.prompts.osl", Lo: 64, Hi: 1024, Kind: search.KindInt}},
		Objective:     search.Objective{Metric: "output_token_throughput", Stat: "avg", Direction: search.Maximize},
		Filters:       []search.Filter{{Metric: "time_to_first_token", Stat: "p95", Op: "lt", Threshold: 200}},
		MaxIterations: 10, InitialPoints: 4, Seed: 7,
		Trials: search.TrialRule{Min: 2},
	}
	h, doc, err := plottest.Drive(cfg, func(at map[string]float64, _, trial int) map[string]float64 {
		c, osl := at["concurrency"], at["output_tokens_mean"]
		return map[string]float64{
			"time_to_first_token.p95":     5*c + osl/20 + float64(trial),
			"output_token_throughput.avg": 40 * c * osl / (osl + 200),
		}
	})
	require.NoError(t, err)
	tr, err := plot.TrajectoryOf(doc, plot.TrajectoryOptions{History: &h})
	require.NoError(t, err)
	assert.Equal(t, plot.TrajectoryAxis{Label: "iteration"}, tr.X)
	assert.Nil(t, tr.Bracket)
	require.Len(t, tr.Panels, 2, "the objective, then the filter")
	obj := tr.Panels[0]
	assert.Equal(t, "output_token_throughput.avg", obj.Key)
	assert.Equal(t, "output token throughput (tokens/sec), higher is better", obj.Label)
	require.Len(t, obj.Probes, len(doc.Iterations))

	// Best so far: after each iteration, the best objective among the
	// probes that passed so far.
	best, bestSeen := math.Inf(-1), 0
	for i, it := range doc.Iterations {
		assert.Equal(t, float64(i), obj.Probes[i].X)
		assert.True(t, obj.Probes[i].Y.HasCI(), "two trials give the objective an interval")
		if it.Verdict == search.Pass {
			best = math.Max(best, it.ObjectiveValues[0])
		}
		if math.IsInf(best, -1) {
			continue
		}
		require.Less(t, bestSeen, len(obj.BestSoFar))
		assert.Equal(t, plot.XY{X: float64(i), Y: best}, obj.BestSoFar[bestSeen])
		bestSeen++
	}
	require.NotEmpty(t, obj.BestSoFar)
	assert.Equal(t, doc.BestTrials[0].ObjectiveValues[0], obj.BestSoFar[len(obj.BestSoFar)-1].Y, "it ends at best_trials[0]")
	assert.Equal(t, "time_to_first_token.p95", tr.Panels[1].Key)
	assert.Empty(t, tr.Panels[1].BestSoFar)

	// Drawn side by side under one title, the best-so-far line in blue.
	var buf bytes.Buffer
	require.NoError(t, tr.Figure().Encode(&buf, "png", 900, 500))
	img, err := png.Decode(&buf)
	require.NoError(t, err)
	assert.Equal(t, image.Rect(0, 0, 900, 500), img.Bounds())
	assert.Positive(t, pixels(img, color.RGBA{0x00, 0x72, 0xB2, 0xff}), "the best-so-far line")
}

func TestTrajectoryOfPrefillCurve(t *testing.T) {
	r, err := search.ExpandRecipe(search.RecipePrefillCurve, search.RecipeInputs{Streaming: true})
	require.NoError(t, err)
	h, doc, err := plottest.Drive(r.Config, func(at map[string]float64, _, _ int) map[string]float64 {
		return map[string]float64{"time_to_first_token.avg": 9 + 0.048*at["synthetic_input_tokens_mean"]}
	})
	require.NoError(t, err)
	tr, err := plot.TrajectoryOf(doc, plot.TrajectoryOptions{History: &h})
	require.NoError(t, err)
	assert.Equal(t, "input sequence length (tokens)", tr.X.Label)
	assert.True(t, tr.X.Log, "ISL 256 to 32768")
	require.Len(t, tr.Panels, 1)
	assert.Len(t, tr.Panels[0].Probes, 8)
	fit := tr.Panels[0].Fit
	require.NotNil(t, fit)
	_, agg, err := r.Aggregate(h)
	require.NoError(t, err)
	curve := agg.(*search.CurveFit)
	assert.Equal(t, curve.FitForm, fit.Form, "the fit prefill_curve.json has")
	assert.InDeltaSlice(t, curve.Coefficients, fit.Coefficients, 1e-9)
	assert.InEpsilon(t, 0.048, fit.Coefficients[0], 1e-6)
	assert.InDelta(t, 9+0.048*1000, fit.At(1000), 1e-6)
}

func TestTrajectoryOfRefuses(t *testing.T) {
	_, err := plot.TrajectoryOf(search.HistoryDoc{}, plot.TrajectoryOptions{})
	assert.ErrorContains(t, err, "no probe yet")

	_, doc := slaSearch(t)
	delete(doc.Iterations[2].VariationValues, "phases.profiling.concurrency")
	_, err = plot.TrajectoryOf(doc, plot.TrajectoryOptions{})
	assert.ErrorContains(t, err, "iteration 2 of search_history.json has no number for phases.profiling.concurrency")

	_, doc = slaSearch(t)
	doc.Config.Objectives = nil
	for i := range doc.Iterations {
		doc.Iterations[i].SLA = nil
	}
	_, err = plot.TrajectoryOf(doc, plot.TrajectoryOptions{})
	assert.ErrorContains(t, err, "nothing to draw")
}

func TestTrajectoryEncode(t *testing.T) {
	h, doc := slaSearch(t)
	tr, err := plot.TrajectoryOf(doc, plot.TrajectoryOptions{History: &h})
	require.NoError(t, err)
	f := tr.Figure()
	assert.Same(t, tr, f.Data)
	var buf bytes.Buffer
	require.NoError(t, f.Encode(&buf, "png", 900, 500))
	img, err := png.Decode(&buf)
	require.NoError(t, err)
	assert.Equal(t, image.Rect(0, 0, 900, 500), img.Bounds())
	// Pass, fail and ambiguous marks and the bracket's shade are drawn in
	// their colours.
	for name, c := range map[string]color.RGBA{
		"pass (bluish green)": {0x00, 0x9E, 0x73, 0xff}, "fail (vermillion)": {0xD5, 0x5E, 0x00, 0xff},
		"ambiguous (orange)": {0xE6, 0x9F, 0x00, 0xff}, "bracket shade": {0xdc, 0xef, 0xe6, 0xff},
	} {
		assert.Positive(t, pixels(img, c), "%s is drawn", name)
	}

	buf.Reset()
	require.NoError(t, f.Encode(&buf, "svg", 900, 500))
	dec := xml.NewDecoder(strings.NewReader(buf.String()))
	for {
		_, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "well-formed SVG")
	}
	assert.Contains(t, buf.String(), "SLA: &lt; 85")

	// The docs' figure: AIPERF_DOC_PLOTS=1 go test -run TestTrajectoryEncode ./internal/plot
	if os.Getenv("AIPERF_DOC_PLOTS") != "" {
		paths, err := plot.Write(context.Background(), filepath.Join("..", "..", "docs", "plots"), []plot.Figure{f}, []string{"png"}, 800, 450)
		require.NoError(t, err)
		t.Log(paths)
	}
}

// pixels counts the pixels of img within a few levels of c.
func pixels(img image.Image, c color.RGBA) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if near(r>>8, c.R) && near(g>>8, c.G) && near(bl>>8, c.B) {
				n++
			}
		}
	}
	return n
}

func near(a uint32, b uint8) bool { return max(a, uint32(b))-min(a, uint32(b)) <= 3 }

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// A search without SLA filters (concurrency-ramp) has no verdicts to mark
// and no bracket, though every probe "passes" in search_history.json.
func TestTrajectoryOfUnjudgedSearch(t *testing.T) {
	r, err := search.ExpandRecipe(search.RecipeConcurrencyRamp, search.RecipeInputs{})
	require.NoError(t, err)
	_, doc, err := plottest.Drive(r.Config, func(at map[string]float64, _, _ int) map[string]float64 {
		return map[string]float64{"request_latency.p99": 100 * math.Max(1, at["concurrency"]/50)}
	})
	require.NoError(t, err)
	require.NotNil(t, doc.BoundarySummary, "the history has a pass end")
	tr, err := plot.TrajectoryOf(doc, plot.TrajectoryOptions{})
	require.NoError(t, err)
	assert.Nil(t, tr.Bracket)
	require.Len(t, tr.Panels, 1)
	assert.Equal(t, "request latency p99 (ms), lower is better", tr.Panels[0].Label)
	assert.Nil(t, tr.Panels[0].SLA)
	require.Len(t, tr.Panels[0].Probes, 8)
	for _, m := range tr.Panels[0].Probes {
		assert.Empty(t, m.Verdict)
	}
	assert.True(t, tr.X.Log)
}
