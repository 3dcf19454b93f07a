package servermetrics

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exposition is a small text exposition: a counter, a labelled counter
// that appears later, a gauge and a histogram with buckets 0.1, 0.2, 0.5.
func exposition(counter float64, labelled string, gauge float64, hist [4]float64, sum float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# HELP reqs_total Requests.\n# TYPE reqs_total counter\nreqs_total %g\n", counter)
	if labelled != "" {
		fmt.Fprintf(&b, "# TYPE errs_total counter\nerrs_total{code=\"500\"} %s\n", labelled)
	}
	fmt.Fprintf(&b, "# TYPE depth gauge\ndepth %g\n# TYPE lat_seconds histogram\n", gauge)
	for i, le := range []string{"0.1", "0.2", "0.5", "+Inf"} {
		fmt.Fprintf(&b, "lat_seconds_bucket{le=%q} %g\n", le, hist[i])
	}
	fmt.Fprintf(&b, "lat_seconds_sum %g\nlat_seconds_count %g\n", sum, hist[3])
	return b.String()
}

// A counter that falls restarted from zero (the server restarted): its
// total adds what it counted before and after, as Prometheus's increase()
// does, and a histogram's buckets likewise; a series that first appears
// inside the phase counts from zero.
func TestCounterAndHistogramResets(t *testing.T) {
	e := newExporter(t, exposition(10, "", 1, [4]float64{1, 2, 3, 3}, 0.5))
	c := collect(t, Options{Endpoints: []Target{{URL: e.url, Source: SourceServer}}})
	c.Mark("profiling", true) // reqs 10, hist {1,2,3,3}
	e.set(exposition(20, "", 3, [4]float64{3, 6, 8, 9}, 2.0))
	c.Mark("inner", true) // reqs 20: +10; hist +{2,4,5,6}
	e.set(exposition(5, "2", 5, [4]float64{1, 1, 2, 2}, 0.4))
	c.Mark("inner", false) // restarted: +5; errs appears at 2; hist restarted: +{1,1,2,2}
	e.set(exposition(15, "7", 7, [4]float64{2, 4, 4, 5}, 1.0))
	c.Mark("profiling", false) // +10; errs +5; hist +{1,3,2,3}
	r := c.Stop()
	require.Empty(t, r.Warnings)

	reqs := find(t, r, "reqs", "profiling")
	assert.Equal(t, 25.0, reqs.Stats["total"])
	assert.Empty(t, reqs.Unit, "nothing to infer from reqs")
	assert.Equal(t, "seconds", find(t, r, "lat_seconds", "profiling").Unit, "inferred from the name as AIPerf does")
	assert.Equal(t, 7.0, find(t, r, "errs", "profiling", "code=500").Stats["total"], "from zero when it appeared")
	assert.Equal(t, 5.0, find(t, r, "reqs", "inner").Stats["total"], "a reset inside the inner phase")

	h := find(t, r, "lat_seconds", "profiling")
	assert.Equal(t, 11.0, h.Stats["count"])
	assert.InDelta(t, 1.5+0.4+0.6, h.Stats["sum"], 1e-9)
	assert.Equal(t, []Bucket{{"0.1", 4}, {"0.2", 8}, {"0.5", 9}, {"+Inf", 11}}, h.Buckets)
	// p50: rank 5.5 in (0.1, 0.2] holding 4 of the 8 ≤ 0.2 → 0.1 + 0.1·1.5/4.
	assert.InDelta(t, 0.1375, h.Stats["p50_estimate"], 1e-12)
	assert.Equal(t, []float64{0.1, 0.2}, []float64{h.Stats[StatP50BucketLower], h.Stats[StatP50BucketUpper]}, "its resolution")
	assert.Equal(t, 0.5, h.Stats["p99_estimate"], "rank in +Inf: the highest finite bound")

	g := find(t, r, "depth", "profiling") // samples 1, 3, 5, 7
	assert.InDelta(t, math.Sqrt(20.0/3), g.Stats["std"], 1e-12, "n−1")
	// over time, the edges (1, 7) hold for no time: 3 and 5, weighted by the clock
	assert.GreaterOrEqual(t, g.Stats[StatTimeWeightedAvg], 3.0)
	assert.LessOrEqual(t, g.Stats[StatTimeWeightedAvg], 5.0)
	delete(g.Stats, "std")
	delete(g.Stats, StatTimeWeightedAvg)
	assert.Equal(t, map[string]float64{"avg": 4, "min": 1, "max": 7, "count": 4, "p1": 1.06, "p5": 1.3, "p10": 1.6,
		"p25": 2.5, "p50": 4, "p75": 5.5, "p90": 6.4, "p95": 6.7, "p99": 6.94}, roundAll(g.Stats), "numpy's percentiles")
}

// roundAll rounds every stat to 12 significant digits.
func roundAll(m map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		out[k], _ = roundTo(v)
	}
	return out
}

func roundTo(v float64) (float64, error) {
	var r float64
	_, err := fmt.Sscanf(fmt.Sprintf("%.12g", v), "%g", &r)
	return r, err
}

// OpenMetrics is parsed as OpenMetrics when the server says so: the
// counter family is named as AIPerf names it (jobs, its samples jobs_total),
// _created is dropped.
func TestOpenMetricsContentType(t *testing.T) {
	om := func(v int) string {
		return fmt.Sprintf("# HELP jobs Jobs done.\n# TYPE jobs counter\njobs_total{q=\"a\"} %d\njobs_created{q=\"a\"} 1.7e9\n"+
			"# TYPE temp_celsius gauge\n# UNIT temp_celsius celsius\ntemp_celsius 21.5\n# EOF\n", v)
	}
	e := newExporter(t, om(3))
	e.contentType = "application/openmetrics-text; version=1.0.0; charset=utf-8"
	c := collect(t, Options{Endpoints: []Target{{URL: e.url, Source: SourceServer}}})
	c.Mark("profiling", true)
	e.set(om(8))
	c.Mark("profiling", false)
	r := c.Stop()
	require.Empty(t, r.Warnings)
	assert.Equal(t, 5.0, find(t, r, "jobs", "profiling", "q=a").Stats["total"])
	assert.Equal(t, 21.5, find(t, r, "temp_celsius", "profiling").Stats["avg"])
	for _, s := range r.Series {
		assert.NotContains(t, s.Metric, "_created")
	}
	e.mu.Lock()
	assert.True(t, strings.HasPrefix(e.headers[0].Get("Accept"), "text/plain;version=0.0.4"), "the text format is asked for")
	assert.NotContains(t, e.headers[0].Get("Accept"), "openmetrics", "expfmt's OpenMetrics parser is slow")
	e.mu.Unlock()
}

// Time slices cut a phase like AIPerf: fixed slices from its begin, the
// last one partial; a counter's rate statistics come from the complete
// ones.
func TestTimeslices(t *testing.T) {
	assert.Equal(t, []Timeslice{{StartNs: 0, EndNs: 3}, {StartNs: 3, EndNs: 6}, {StartNs: 6, EndNs: 9}, {StartNs: 9, EndNs: 10, Partial: true}},
		cuts(0, 10, 3))
	assert.Len(t, cuts(0, 9, 3), 3)

	var clock int64
	e := newExporter(t, exposition(0, "", 0, [4]float64{}, 0))
	c := collect(t, Options{Endpoints: []Target{{URL: e.url, Source: SourceServer}}, Now: func() int64 { return clock },
		SliceDuration: 2 * time.Second})
	clock = int64(time.Second)
	c.Mark("profiling", true) // t = 1 s: reqs 0
	for i, v := range []float64{4, 10, 10, 16} {
		clock += int64(time.Second)
		e.set(exposition(v, "", v, [4]float64{v, v, v, v}, v/10))
		c.Mark(fmt.Sprint("step", i), true) // t = 2, 3, 4, 5 s
	}
	clock += int64(500 * time.Millisecond)
	c.Mark("profiling", false) // t = 5.5 s
	r := c.Stop()

	reqs := find(t, r, "reqs", "profiling")
	require.Len(t, reqs.Timeslices, 3)
	assert.Equal(t, Timeslice{StartNs: 1e9, EndNs: 3e9, Stats: map[string]float64{"total": 10, "rate": 5}}, reqs.Timeslices[0])
	assert.Equal(t, Timeslice{StartNs: 3e9, EndNs: 5e9, Stats: map[string]float64{"total": 6, "rate": 3}}, reqs.Timeslices[1])
	assert.Equal(t, Timeslice{StartNs: 5e9, EndNs: 5.5e9, Partial: true, Stats: map[string]float64{"total": 0, "rate": 0}}, reqs.Timeslices[2])
	assert.Equal(t, 4.0, reqs.Stats["rate_avg"])
	assert.Equal(t, 3.0, reqs.Stats["rate_min"])
	assert.Equal(t, 5.0, reqs.Stats["rate_max"])
	assert.InDelta(t, math.Sqrt2, reqs.Stats["rate_std"], 1e-12)

	depth := find(t, r, "depth", "profiling")
	require.Len(t, depth.Timeslices, 3)
	assert.Equal(t, map[string]float64{"avg": 2, "min": 0, "max": 4}, depth.Timeslices[0].Stats, "samples at 1 s and 2 s")
	assert.Equal(t, map[string]float64{"avg": 16, "min": 16, "max": 16}, depth.Timeslices[2].Stats, "the end mark at 5.5 s")
	h := find(t, r, "lat_seconds", "profiling")
	assert.Equal(t, map[string]float64{"count": 10, "sum": 1, "avg": 0.1}, h.Timeslices[0].Stats)
	assert.Equal(t, Bucket{"+Inf", 10}, h.Timeslices[0].Buckets[3])
}
