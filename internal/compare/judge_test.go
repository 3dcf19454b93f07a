package compare_test

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/compare"
	istats "github.com/aiperf-go/aiperf/internal/stats"
)

// offsets is a fixed noise pattern: mean 0, sample standard deviation
// √(5.18/9) ≈ 0.759.
var offsets = []float64{-0.9, 0.4, 1.3, -0.2, 0.7, -1.1, 0.1, 0.6, -0.5, -0.4}

// sample is ten trials of mean + scale × offsets, the pattern reversed when
// flip is set (so two groups do not share their noise).
func sample(mean, scale float64, flip bool) []float64 {
	out := make([]float64, len(offsets))
	for i, o := range offsets {
		if flip {
			o = offsets[len(offsets)-1-i]
		}
		out[i] = mean + scale*o
	}
	return out
}

func TestJudgeVerdicts(t *testing.T) {
	t.Parallel()
	base := sample(100, 0.1, false)
	tests := []struct {
		name        string
		base, other []float64
		dir         compare.Direction
		threshold   float64
		want        string
		significant bool
		cell        string // the table cell, when checked
	}{
		{name: "+0.9% with tiny noise is equivalent within 2%, though significant",
			base: base, other: sample(100.9, 0.1, true), dir: compare.LowerIsBetter, threshold: 2,
			want: compare.Equivalent, significant: true, cell: "equivalent ±2% (TOST p<0.001)"},
		{name: "the same at threshold 0 is the plain test: worse",
			base: base, other: sample(100.9, 0.1, true), dir: compare.LowerIsBetter, threshold: 0,
			want: compare.Worse, significant: true, cell: "worse (p<0.001)"},
		{name: "+10% is worse for a latency",
			base: base, other: sample(110, 0.1, true), dir: compare.LowerIsBetter, threshold: 2,
			want: compare.Worse, significant: true},
		{name: "+10% is better for a throughput",
			base: base, other: sample(110, 0.1, true), dir: compare.HigherIsBetter, threshold: 2,
			want: compare.Better, significant: true},
		{name: "+10% is higher without a direction",
			base: base, other: sample(110, 0.1, true), dir: compare.Neutral, threshold: 2,
			want: compare.Higher, significant: true},
		{name: "−10% is lower without a direction",
			base: base, other: sample(90, 0.1, true), dir: compare.Neutral, threshold: 2,
			want: compare.Lower, significant: true},
		{name: "+3% with moderate noise is worse: significant and beyond the threshold",
			base: sample(100, 1.5, false), other: sample(103, 1.5, true), dir: compare.LowerIsBetter, threshold: 2,
			want: compare.Worse, significant: true},
		{name: "+0.9% in large noise is inconclusive",
			base: sample(100, 5, false), other: sample(100.9, 5, true), dir: compare.LowerIsBetter, threshold: 2,
			want: compare.Inconclusive},
		{name: "+1.5%, significant, but its interval reaches past 2%: inconclusive, not worse",
			base: sample(100, 1.5, false), other: sample(101.5, 1.5, true), dir: compare.LowerIsBetter, threshold: 2,
			want: compare.Inconclusive, significant: true},
		{name: "identical samples are equivalent",
			base: base, other: base, dir: compare.LowerIsBetter, threshold: 2,
			want: compare.Equivalent, cell: "equivalent ±2% (TOST p<0.001)"},
		{name: "identical samples at threshold 0: no significant difference",
			base: base, other: base, dir: compare.LowerIsBetter, threshold: 0,
			want: compare.NoDifference, cell: "no significant difference (p=1.000)"},
		{name: "identical without a direction are equivalent too",
			base: base, other: base, dir: compare.Neutral, threshold: 2, want: compare.Equivalent},
		{name: "trials that agree exactly on both sides have no spread: identical, no p-value (was equivalent, TOST p<0.001)",
			base: []float64{16, 16, 16}, other: []float64{16, 16}, dir: compare.HigherIsBetter, threshold: 2,
			want: compare.Identical, cell: "identical, no spread"},
		{name: "the same at threshold 0 (was no significant difference, p=1.000)",
			base: []float64{0, 0, 0}, other: []float64{0, 0}, dir: compare.LowerIsBetter, threshold: 0,
			want: compare.Identical, cell: "identical, no spread"},
		{name: "sides that differ without spread are not tested (was worse, p<0.001)",
			base: []float64{0, 0}, other: []float64{1, 1}, dir: compare.LowerIsBetter, threshold: 0,
			want: compare.Differs, cell: "differs, no spread"},
		{name: "a difference within the threshold without spread is not shown equivalent (was TOST p<0.001)",
			base: []float64{100, 100, 100}, other: []float64{100.5, 100.5, 100.5}, dir: compare.LowerIsBetter, threshold: 2,
			want: compare.Differs, cell: "differs, no spread"},
		{name: "a zero baseline has no relative margin: the plain test",
			base: []float64{0, 0, 0}, other: []float64{2, 2, 3, 2}, dir: compare.LowerIsBetter, threshold: 2,
			want: compare.Worse, significant: true},
		{name: "one trial is unreplicated whatever the threshold",
			base: []float64{100}, other: sample(110, 0.1, true), dir: compare.LowerIsBetter, threshold: 2,
			want: compare.Unreplicated, cell: compare.Unreplicated},
		{name: "no value is n/a",
			base: nil, other: base, dir: compare.LowerIsBetter, threshold: 2, want: compare.NoData},
		{name: "values beyond 1e154 are judged as their scaled-down selves (p=0.021): worse",
			base: []float64{1e160, 2e160, 3e160}, other: []float64{4e160, 5e160, 6e160}, dir: compare.LowerIsBetter,
			threshold: 2, want: compare.Worse, significant: true, cell: "worse (p=0.021)"},
		{name: "a spread past float64's range is n/a, not inconclusive",
			base: []float64{math.MaxFloat64, -math.MaxFloat64}, other: []float64{1, 2}, dir: compare.LowerIsBetter,
			want: compare.NoData},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, cell := compare.JudgeForTest(tc.base, tc.other, tc.dir, 0.95, tc.threshold)
			assert.Equal(t, tc.want, v.Verdict)
			assert.Equal(t, tc.significant, v.Significant, "Welch's test alone")
			assert.InDelta(t, tc.threshold, float64(v.ThresholdPct), 0)
			spread := istats.StdDev(tc.base) != 0 || istats.StdDev(tc.other) != 0
			tested := tc.threshold > 0 && len(tc.base) > 1 && len(tc.other) > 1 && istats.Mean(tc.base) != 0 && spread
			assert.Equal(t, tested, !math.IsNaN(float64(v.TOSTP)), "a TOST p-value exactly when tested")
			if len(tc.base) > 1 && len(tc.other) > 1 && !spread {
				assert.True(t, math.IsNaN(float64(v.P)), "no Welch p-value without spread")
			}
			if tc.cell != "" {
				assert.Equal(t, tc.cell, cell)
			}
		})
	}
}

// TestJudgeTOSTByHand: the example, +0.9% that Welch's test calls
// significant at p ≈ 0.04, is equivalent within ±2% by TOST p-values
// derived here from the trials with the t distribution alone.
func TestJudgeTOSTByHand(t *testing.T) {
	t.Parallel()
	a, b := sample(100, 1.2, false), sample(100.9, 1.2, true)
	meanVar := func(xs []float64) (float64, float64) {
		m := 0.0
		for _, x := range xs {
			m += x
		}
		m /= float64(len(xs))
		ss := 0.0
		for _, x := range xs {
			ss += (x - m) * (x - m)
		}
		return m, ss / float64(len(xs)-1)
	}
	ma, sa := meanVar(a)
	mb, sb := meanVar(b)
	va, vb := sa/10, sb/10
	se := math.Sqrt(va + vb)
	df := (va + vb) * (va + vb) / (va*va/9 + vb*vb/9) // 18: equal variances and sizes
	require.InDelta(t, 18, df, 1e-9)
	delta := 0.02 * ma
	welchP := 2 * istats.TCDF(-math.Abs(mb-ma)/se, df)
	pLower := 1 - istats.TCDF((mb-ma+delta)/se, df) // H0: b − a ≤ −δ
	pUpper := istats.TCDF((mb-ma-delta)/se, df)     // H0: b − a ≥ +δ
	wantTOST := math.Max(pLower, pUpper)

	v, cell := compare.JudgeForTest(a, b, compare.LowerIsBetter, 0.95, 2)
	assert.InDelta(t, 0.9, float64(v.DeltaPct), 1e-9)
	assert.InDelta(t, welchP, float64(v.P), 1e-12)
	assert.Greater(t, welchP, 0.01)
	assert.Less(t, welchP, 0.05, "significant: the plain test would say worse")
	assert.InDelta(t, wantTOST, float64(v.TOSTP), 1e-12)
	assert.Less(t, wantTOST, 0.05)
	assert.True(t, v.Significant)
	assert.Equal(t, compare.Equivalent, v.Verdict)
	assert.Regexp(t, `^equivalent ±2% \(TOST p=0\.00\d\)$`, cell)

	plain, cell := compare.JudgeForTest(a, b, compare.LowerIsBetter, 0.95, 0)
	assert.Equal(t, compare.Worse, plain.Verdict)
	assert.InDelta(t, welchP, float64(plain.P), 1e-12)
	assert.Regexp(t, `^worse \(p=0\.0[1-4]\d\)$`, cell)

	// A margin the 90% interval of the difference does not fit in.
	narrow, _ := compare.JudgeForTest(a, b, compare.LowerIsBetter, 0.95, 1)
	assert.Equal(t, compare.Inconclusive, narrow.Verdict, "+0.9% ± noise is not shown within ±1%")
}

func TestDefaultThresholds(t *testing.T) {
	t.Parallel()
	want := map[string]float64{
		"time_to_first_token.avg":         2,
		"time_to_first_token.p99":         2,
		"inter_token_latency.avg":         2,
		"request_latency.p99":             2,
		"output_token_throughput.avg":     2,
		"request_throughput.avg":          2,
		"output_sequence_length.avg":      2,
		"error_request_count.avg":         0,
		"server.preemptions.delta":        0,
		"server.ttft.p50":                 5,
		"server.kv_cache_usage.max":       5,
		"server.vllm:num_requests.max":    5,
		"gpu.utilization.avg":             5,
		"gpu.DCGM_FI_DEV_POWER_USAGE.avg": 5,
	}
	for spec, pct := range want {
		k := keys(t, spec)[0]
		assert.InDelta(t, pct, compare.DefaultThreshold(k), 0, spec)
	}
	assert.Equal(t, "other client statistics: latencies, throughputs, token lengths, counts",
		compare.DefaultThresholds[len(compare.DefaultThresholds)-1].What, "the last row takes every other key")
}

// TestGroupsThreshold: ten trials per group, +0.9% TTFT with tiny noise,
// through the store: equivalent by default, worse with --threshold 0.5, and
// the threshold and TOST p-value in the JSON.
func TestGroupsThreshold(t *testing.T) {
	t.Parallel()
	db := openStore(t, ":memory:")
	saveGroup(t, db, setup{name: "base"}, ttfts(sample(100, 0.1, false)...)...)
	saveGroup(t, db, setup{name: "shifted"}, ttfts(sample(100.9, 0.1, true)...)...)
	key := "time_to_first_token.avg"

	rep := groups(t, db, compare.Options{}, "base", "shifted")
	v := metric(t, rep, key).Versus[0]
	assert.True(t, v.Significant)
	assert.Equal(t, compare.Equivalent, v.Verdict)
	tb := rep.Table()
	row := tb.Rows[slices.IndexFunc(tb.Rows, func(r []string) bool { return r[0] == key })]
	assert.Equal(t, "equivalent ±2% (TOST p<0.001)", row[len(row)-1])
	assert.Contains(t, tb.Notes, "threshold: ±2% of the baseline mean; 0 for error_request_count.avg")

	strict := groups(t, db, compare.Options{Threshold: ptr(0.5)}, "base", "shifted")
	assert.Equal(t, compare.Worse, metric(t, strict, key).Versus[0].Verdict, "0.9% is beyond ±0.5%")
	errs := metric(t, strict, "error_request_count.avg").Versus[0]
	assert.InDelta(t, 0.5, float64(errs.ThresholdPct), 0, "--threshold applies to every statistic")
	assert.Equal(t, compare.Identical, errs.Verdict, "0 errors in every trial of both sides: nothing to test")
	assert.Contains(t, strict.Table().Notes, "threshold: ±0.5% of the baseline mean")
	plain := groups(t, db, compare.Options{Threshold: ptr(0.0)}, "base", "shifted")
	assert.Equal(t, compare.Worse, metric(t, plain, key).Versus[0].Verdict, "Welch alone: significant is worse")
	assert.Contains(t, plain.Table().Notes, "threshold: 0 (Welch alone)")

	var buf bytes.Buffer
	require.NoError(t, compare.Render(&buf, rep, compare.FormatJSON))
	type metricJSON struct {
		Metric string
		Versus []map[string]any
	}
	var out struct{ Metrics []metricJSON }
	require.NoError(t, json.Unmarshal(buf.Bytes(), &out))
	i := slices.IndexFunc(out.Metrics, func(m metricJSON) bool { return m.Metric == key })
	require.GreaterOrEqual(t, i, 0)
	js := out.Metrics[i].Versus[0]
	assert.Equal(t, "equivalent", js["verdict"])
	assert.Equal(t, 2.0, js["threshold_pct"])
	require.IsType(t, 0.0, js["tost_p_value"])
	assert.Less(t, js["tost_p_value"].(float64), 0.001)
	assert.Equal(t, true, js["significant"], "the existing fields stay")
}

// TestFormatFloatShowsSmallValues: a value below 1 keeps two significant
// digits, so a delta of +300% never stands beside two values that print
// alike as 0.00; larger values keep AIPerf's two decimals.
func TestFormatFloatShowsSmallValues(t *testing.T) {
	for in, want := range map[float64]string{
		0: "0.00", 1: "1.00", 12.345: "12.35", 0.5: "0.50", 0.05: "0.050", 0.0025: "0.0025", 0.01: "0.010",
		-0.0031: "-0.0031", 0.999: "1.00", 1e-12: "1e-12", 1e300: "1.00e+300", -6e15: "-6.00e+15",
	} {
		assert.Equal(t, want, compare.FormatFloat(in), "%v", in)
	}
	assert.NotEqual(t, compare.FormatFloat(0.0025), compare.FormatFloat(0.01), "the +300% of a 0.0025 → 0.01 change shows in the values")
}

// A server quantile interpolated inside one histogram bucket agrees almost
// to the digit across trials; TOST would show equivalence from that spread
// although the server may differ by up to the bucket's width (here one side
// is 20% slower, inside the 20–40 ms bucket). The verdict is inconclusive;
// the client's own percentile of the same trials is equivalent. Trials
// that agree exactly on both sides are not identical for such a quantile
// either: inconclusive.
func TestServerQuantileEquivalenceIsInconclusive(t *testing.T) {
	base, other := []float64{30.00, 30.00, 30.01}, []float64{30.03, 30.03, 30.02}
	v := compare.JudgeKeyForTest(compare.Key{Metric: "server.ttft", Stat: "p50"}, base, other, compare.LowerIsBetter, 0.95, 5)
	assert.Equal(t, compare.Inconclusive, v.Verdict)
	v = compare.JudgeKeyForTest(compare.Key{Metric: "time_to_first_token", Stat: "p50"}, base, other, compare.LowerIsBetter, 0.95, 5)
	assert.Equal(t, compare.Equivalent, v.Verdict)

	same := []float64{30, 30, 30}
	v = compare.JudgeKeyForTest(compare.Key{Metric: "server.ttft", Stat: "p50"}, same, same, compare.LowerIsBetter, 0.95, 5)
	assert.Equal(t, compare.Inconclusive, v.Verdict)
	v = compare.JudgeKeyForTest(compare.Key{Metric: "time_to_first_token", Stat: "p50"}, same, same, compare.LowerIsBetter, 0.95, 5)
	assert.Equal(t, compare.Identical, v.Verdict)
}

// A gauge's percentile is taken over its samples, not interpolated: an
// equivalence shown from its trials stands.
func TestServerGaugePercentileEquivalenceStands(t *testing.T) {
	base, other := []float64{30.00, 30.01, 30.02}, []float64{30.01, 30.02, 30.03}
	v := compare.JudgeKeyForTest(compare.Key{Metric: "server.kv_cache_usage", Stat: "p50"}, base, other, compare.LowerIsBetter, 0.95, 5)
	assert.Equal(t, compare.Equivalent, v.Verdict)
	v = compare.JudgeKeyForTest(compare.Key{Metric: "server.vllm:e2e_request_latency_seconds", Stat: "p99"}, base, other, compare.LowerIsBetter, 0.95, 5)
	assert.Equal(t, compare.Inconclusive, v.Verdict, "a raw histogram family")
}

// TestThresholdBounds: --threshold is a finite % from 0 to 1000; a wider
// one left float64's range on large means (1e308 % of a mean of 200), and
// two metrics with one Δ got different verdicts.
func TestThresholdBounds(t *testing.T) {
	t.Parallel()
	for _, ok := range []float64{0, 2, 1000} {
		assert.NoError(t, compare.Options{Threshold: ptr(ok)}.Validate(), "%g", ok)
	}
	for bad, want := range map[float64]string{-1: "must be 0 or more", 1000.5: "must be at most 1000", 1e308: "must be at most 1000",
		math.Inf(1): "finite", math.NaN(): "finite"} {
		err := compare.Options{Threshold: ptr(bad)}.Validate()
		if assert.Error(t, err, "%g", bad) {
			assert.Contains(t, err.Error(), want)
			assert.Contains(t, err.Error(), "threshold")
		}
	}
}
