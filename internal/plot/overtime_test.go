package plot

import (
	"image/color"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/artifacts"
)

const t0 = int64(1_700_000_000_000_000_000)

// req is a timed request: sent at start ms after t0, first token ttft ms
// later, ended latency ms after its send, osl tokens.
func req(start, ttft, latency, osl float64) artifacts.Request {
	ns := func(ms float64) int64 { return t0 + int64(math.Round(ms*1e6)) }
	return artifacts.Request{StartNs: ns(start), EndNs: ns(start + latency), Timed: true, TTFTMs: ttft,
		ITLMs: (latency - ttft) / max(osl-1, 1), LatencyMs: latency, OSL: osl, Phase: "profiling"}
}

func failed(start, latency float64) artifacts.Request {
	q := req(start, math.NaN(), latency, math.NaN())
	q.Failed, q.ITLMs, q.LatencyMs = true, math.NaN(), math.NaN()
	return q
}

func TestPerRequest(t *testing.T) {
	reqs := []artifacts.Request{req(0, 10, 40, 4), failed(1, 5), req(2, 30, 90, 7)}
	o := perRequest("ttft_over_time", "t", "TTFT (ms)", reqs, func(q artifacts.Request) float64 { return q.TTFTMs })
	require.NotNil(t, o)
	assert.Equal(t, []XY{{0, 10}, {2, 30}}, o.Points, "the request number is the line's, the failure keeps its number")
	o = perRequest("itl_over_time", "t", "ITL (ms)", reqs, func(q artifacts.Request) float64 { return q.ITLMs })
	assert.Equal(t, []XY{{0, 10}, {2, 10}}, o.Points)
	assert.Nil(t, perRequest("x", "t", "y", []artifacts.Request{failed(0, 1)}, func(q artifacts.Request) float64 { return q.TTFTMs }))
}

func TestLatencyOverTime(t *testing.T) {
	// 12 requests sent together, request i lasting 1000+i ms: they end in
	// order, so the rolling window holds the last 10 latencies.
	var reqs []artifacts.Request
	for i := 11; i >= 0; i-- { // file order is not end order
		reqs = append(reqs, req(0, 5, 1000+float64(i), 4))
	}
	reqs = append(reqs, failed(0, 3))
	o := latencyOverTime(reqs)
	require.NotNil(t, o)
	require.Len(t, o.Points, 12)
	assert.InDelta(t, 1.000, o.Points[0].X, 1e-9, "at its end, since the first send")
	assert.Equal(t, 1000.0, o.Points[0].Y)
	assert.Equal(t, 1011.0, o.Points[11].Y)
	require.Len(t, o.Lines, 3)
	p50, p95, p99 := o.Lines[0], o.Lines[1], o.Lines[2]
	assert.Equal(t, []string{"p50", "p95", "p99"}, []string{p50.Name, p95.Name, p99.Name})
	assert.Equal(t, 1000.0, p50.Points[0].Y, "one request: its own latency")
	assert.Equal(t, 1000.5, p50.Points[1].Y)
	// The last window is 1002…1011: numpy's linear percentiles.
	assert.InDelta(t, 1006.5, p50.Points[11].Y, 1e-9)
	assert.InDelta(t, 1002+0.95*9, p95.Points[11].Y, 1e-9)
	assert.InDelta(t, 1002+0.99*9, p99.Points[11].Y, 1e-9)
}

func TestDispersedThroughput(t *testing.T) {
	reqs := []artifacts.Request{
		req(0, 100, 1100, 10),   // 10 tokens over 0.1 … 1.1 s: 10 tokens/s
		req(500, 100, 600, 20),  // 20 tokens over 0.6 … 1.1 s: 40 tokens/s
		failed(200, 50),         // no tokens
		req(2000, 0, 500, 5),    // no TTFT: from its send, 2.0 … 2.5 s: 10 tokens/s
		req(3000, 200, 200, 10), // nothing after its first token: left out
	}
	l := dispersedThroughput(reqs)
	assert.True(t, l.Step && l.Fill)
	require.Len(t, l.Points, 5)
	want := []XY{{0.1, 10}, {0.6, 50}, {1.1, 0}, {2.0, 10}, {2.5, 0}}
	for i, w := range want {
		assert.InDelta(t, w.X, l.Points[i].X, 1e-9, "point %d", i)
		assert.InDelta(t, w.Y, l.Points[i].Y, 1e-6, "point %d", i)
	}
	assert.Nil(t, dispersedOverTime([]artifacts.Request{failed(0, 1)}))
}

func TestGPUOverTime(t *testing.T) {
	r := &artifacts.Run{Requests: []artifacts.Request{req(0, 100, 1100, 10)}, GPU: []artifacts.GPUSample{
		{TimestampNs: t0 + 5e8, GPU: "a", Values: map[string]float64{"nvidia_gpu_utilization": 40}},
		{TimestampNs: t0 + 5e8, GPU: "b", Values: map[string]float64{"nvidia_gpu_utilization": 60}},
		{TimestampNs: t0 - 5e8, GPU: "a", Values: map[string]float64{"nvidia_gpu_utilization": 0}},
		{TimestampNs: t0 + 9e8, GPU: "a", Values: map[string]float64{"nvidia_power_usage": 300}},
	}}
	o := gpuOverTime(r)
	require.NotNil(t, o)
	require.NotNil(t, o.Lower)
	assert.Equal(t, []XY{{-0.5, 0}, {0.5, 50}}, o.Lower.Lines[0].Points, "the mean over GPUs, per scrape, on the requests' clock")
	assert.Equal(t, "output tokens/s", o.Lines[0].Name)
	assert.Nil(t, gpuOverTime(&artifacts.Run{Requests: r.Requests}), "no telemetry, no figure")
}

func TestRequestSpans(t *testing.T) {
	bad := req(300, 50, 40, 4) // a TTFT past its end: left out, as AIPerf
	s := requestSpans([]artifacts.Request{req(100, 20, 80, 4), failed(150, 10), bad})
	require.NotNil(t, s)
	require.Len(t, s.Spans, 1)
	assert.InDelta(t, 0, s.Spans[0].Start, 1e-9)
	assert.InDelta(t, 0.02, s.Spans[0].FirstToken, 1e-9)
	assert.InDelta(t, 0.08, s.Spans[0].End, 1e-9)
	assert.Equal(t, 20.0, s.Spans[0].TTFTMs)
}

func TestTimesliceBars(t *testing.T) {
	r := &artifacts.Run{SliceSeconds: 0.5, Slices: []artifacts.SliceRow{
		{Index: 0, Metric: "Time to First Token", Unit: "ms", Stat: "avg", Value: 12}, {Index: 0, Metric: "Time to First Token", Unit: "ms", Stat: "p99", Value: 30},
		{Index: 2, Metric: "Time to First Token", Unit: "ms", Stat: "avg", Value: 14}, {Index: 1, Metric: "Request Throughput", Unit: "requests/sec", Stat: "avg", Value: 7},
		{Index: 99999, Metric: "Request Latency", Unit: "ms", Stat: "avg", Value: 1},
	}}
	bs := timesliceBars(r)
	require.Len(t, bs, 2, "TTFT and throughput; a slice index past the bound is left out")
	b := bs[0]
	assert.Equal(t, "timeslices_ttft", b.Name)
	assert.Equal(t, []string{"0 s", "0.5 s", "1 s"}, b.Categories)
	require.Len(t, b.Series, 1)
	assert.Equal(t, 12.0, b.Series[0].Values[0].Mean)
	assert.True(t, math.IsNaN(b.Series[0].Values[1].Mean), "slice 1 has no TTFT")
	assert.Equal(t, "TTFT (ms)", b.Y.Label)
	assert.Equal(t, "timeslices_throughput", bs[1].Name)
	assert.Equal(t, []string{"slice 0", "slice 1"}, timesliceBars(&artifacts.Run{Slices: r.Slices[3:4]})[0].Categories)
}

func TestComparisons(t *testing.T) {
	run := func(model string, conc, gpus int, lat, tput, perUser float64) *artifacts.Run {
		return &artifacts.Run{Model: model, Concurrency: conc, GPUs: gpus, N: 1, Units: map[string]string{"request_latency": "ms"},
			Stats: map[string]artifacts.Value{
				"request_latency.avg":                  {Mean: lat, Low: math.NaN(), High: math.NaN()},
				"output_token_throughput.avg":          {Mean: tput, Low: math.NaN(), High: math.NaN()},
				"output_token_throughput_per_user.avg": {Mean: perUser, Low: math.NaN(), High: math.NaN()},
				"time_to_first_token.avg":              {Mean: lat / 10, Low: lat/10 - 1, High: lat/10 + 1},
				"request_throughput.avg":               {Mean: tput / 10, Low: math.NaN(), High: math.NaN()},
			}}
	}
	runs := []*artifacts.Run{run("b", 1, 2, 100, 200, 50), run("b", 4, 2, 300, 300, 30), run("b", 2, 2, 200, 600, 40),
		run("a", 8, 0, 50, 100, 10)}
	labels := []string{"x1", "x4", "x2", "x8"}

	sc := comparisonOf(comparisons[0], runs, labels)
	require.NotNil(t, sc)
	assert.Equal(t, "pareto_curve_throughput_per_gpu_vs_latency", sc.Name)
	assert.Equal(t, "output token throughput per GPU (tokens/sec/gpu)", sc.Y.Label)
	require.Len(t, sc.Series, 1, "model a has no GPU telemetry: no throughput per GPU")
	s := sc.Series[0]
	assert.Equal(t, "b", s.Name)
	assert.Equal(t, []string{"1", "4", "2"}, []string{s.Points[0].Label, s.Points[1].Label, s.Points[2].Label})
	assert.Equal(t, 100.0, s.Points[0].Y.Mean, "200 tokens/s over 2 GPUs")
	// Latency lower is better, throughput higher: c=4 (300 ms, 150/GPU) is
	// beaten by c=2 (200 ms, 300/GPU).
	assert.Equal(t, []string{"1", "2"}, []string{s.Frontier[0].Label, s.Frontier[1].Label})

	sc = comparisonOf(comparisons[2], runs, labels)
	require.Len(t, sc.Series, 2, "a series per model, in name order")
	assert.Equal(t, "a", sc.Series[0].Name)
	b := sc.Series[1]
	assert.Equal(t, "line: in x order", sc.Line)
	var xs []float64
	for _, p := range b.Frontier {
		xs = append(xs, p.X.Mean)
	}
	assert.Equal(t, []float64{10, 20, 30}, xs, "scatter_line joins every point in TTFT order")
	assert.True(t, b.Points[0].X.HasCI(), "an interval is kept")

	runs[3].Concurrency = 0
	sc = comparisonOf(comparisons[2], runs, labels)
	assert.Equal(t, "x8", sc.Series[0].Points[0].Label, "without a concurrency, the run's label")
	assert.Nil(t, comparisonOf(comparisons[0], runs[3:], labels[3:]))
}

func TestDarkColor(t *testing.T) {
	rgb := func(c interface{ RGBA() (r, g, b, a uint32) }) [3]uint32 {
		r, g, b, _ := c.RGBA()
		return [3]uint32{r >> 8, g >> 8, b >> 8}
	}
	assert.Equal(t, rgb(darkText), rgb(darkColor(colorBlack)), "text turns light")
	assert.Equal(t, rgb(darkBackground), rgb(darkColor(colorWhite)), "the background turns dark")
	for _, c := range palette[:6] {
		assert.Equal(t, rgb(c), rgb(darkColor(c)), "series keep their colours")
	}
	shade := rgb(darkColor(profilingShade))
	assert.Less(t, shade[0]+shade[1]+shade[2], uint32(3*0x40), "a pale shade turns dark")
	assert.Greater(t, shade[2], shade[0], "and keeps its hue")
}

var (
	colorBlack = color.Black
	colorWhite = color.White
)
