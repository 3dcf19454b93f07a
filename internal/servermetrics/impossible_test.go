package servermetrics

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scrapeEach serves each page in turn, one per mark scrape (the baseline
// scrape gets pages[0]), inside one profiling phase; it returns the result.
func scrapeEach(t *testing.T, pages ...string) Result {
	t.Helper()
	e := newExporter(t, pages[0])
	c := collect(t, Options{Endpoints: []Target{{URL: e.url, Source: SourceServer}}})
	c.Mark("profiling", true)
	for i, p := range pages[1:] {
		e.set(p)
		c.Mark(fmt.Sprintf("step%d", i), true)
	}
	c.Mark("profiling", false)
	return c.Stop()
}

// headlineWhy maps each headline row (name and stat) to its Impossible.
func headlineWhy(r *Result) map[string]string {
	why := map[string]string{}
	for _, row := range Headline(r) {
		why[row.Name+" "+row.Stat] = row.Impossible
	}
	return why
}

// exportJSON is the profiling span's JSON export.
func exportJSON(t *testing.T, r *Result) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, WriteJSON(&b, r, "", Meta{}))
	return b.String()
}

func genTokens(v float64) string {
	return fmt.Sprintf("# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total %g\n", v)
}

// A counter that falls on every scrape is no restarting server: its series
// is impossible, its total and rate are refused (out of Stats, the exports),
// a warning says why, and the console's row is marked.
func TestCounterFallingMoreThanOnceIsImpossible(t *testing.T) {
	r := scrapeEach(t, genTokens(1e15), genTokens(0), genTokens(3e15), genTokens(0))
	s := find(t, r, "vllm:generation_tokens", "profiling")
	assert.Contains(t, s.Impossible, "fell 2 times")
	assert.NotContains(t, s.Stats, "rate")
	assert.NotContains(t, s.Stats, "total")
	assert.Greater(t, s.Refused["rate"], 1e15, "kept aside, as computed")
	require.Len(t, r.Warnings, 1)
	assert.Contains(t, r.Warnings[0], "vllm:generation_tokens cannot be what the server measured (the counter fell 2 times")
	assert.Contains(t, headlineWhy(&r)["Generation throughput rate"], "fell 2 times")
	out := exportJSON(t, &r)
	assert.Contains(t, out, `"impossible": "the counter fell 2 times`)
	assert.NotContains(t, out, `"rate"`)

	once := scrapeEach(t, genTokens(10), genTokens(20), genTokens(5), genTokens(15)) // one restart
	assert.Empty(t, once.Warnings)
	assert.Equal(t, 25.0, find(t, once, "vllm:generation_tokens", "profiling").Stats["total"])
	assert.Empty(t, headlineWhy(&once)["Generation throughput rate"])
}

// A gauge or counter sample of ±Inf is no measurement: the series is
// impossible, its figures refused, a warning says why; a gauge's NaN is
// its exporter's "no value", skipped silently.
func TestInfiniteSampleIsImpossible(t *testing.T) {
	running := func(v string) string {
		return "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running " + v + "\n"
	}
	r := scrapeEach(t, running("1"), running("+Inf"), running("1"), running("-Inf"))
	s := find(t, r, "vllm:num_requests_running", "profiling")
	assert.Equal(t, "a sample of +Inf", s.Impossible)
	assert.Empty(t, s.Stats)
	require.Len(t, r.Warnings, 1)
	assert.Contains(t, r.Warnings[0], "vllm:num_requests_running cannot be what the server measured (a sample of +Inf)")
	assert.Contains(t, r.Warnings[0], "its statistics are left out")
	assert.Contains(t, headlineWhy(&r)["Running requests max"], "a sample of +Inf")

	r = scrapeEach(t, genTokens(1), genTokens(5), genTokens(math.Inf(1)), genTokens(9))
	assert.Equal(t, "a sample of +Inf", find(t, r, "vllm:generation_tokens", "profiling").Impossible, "not a fall")

	nan := scrapeEach(t, running("1"), running("NaN"), running("3"))
	assert.Empty(t, nan.Warnings)
	assert.Equal(t, 3.0, find(t, nan, "vllm:num_requests_running", "profiling").Stats["max"])
}

// ttft is a vLLM TTFT histogram page: cumulative counts for le 0.01, 0.1,
// 1, then +Inf when inf ≥ 0.
func ttft(b1, b2, b3, inf, sum, count string) string {
	var b strings.Builder
	b.WriteString("# TYPE vllm:time_to_first_token_seconds histogram\n")
	for i, c := range []string{b1, b2, b3, inf} {
		if c != "" {
			fmt.Fprintf(&b, "vllm:time_to_first_token_seconds_bucket{le=%q} %s\n", []string{"0.01", "0.1", "1", "+Inf"}[i], c)
		}
	}
	fmt.Fprintf(&b, "vllm:time_to_first_token_seconds_sum %s\nvllm:time_to_first_token_seconds_count %s\n", sum, count)
	return b.String()
}

// A histogram that contradicts itself — cumulative counts that fall, a
// bucket above _count or a +Inf bucket below it, a negative or non-finite
// sum — is impossible: no average or percentile estimate is reported as
// true. A difference of float rounding between +Inf and _count is none.
func TestContradictoryHistogramIsImpossible(t *testing.T) {
	good := ttft("1", "2", "3", "3", "0.5", "3")
	for _, tc := range []struct {
		name, bad, why string
	}{
		{"falling buckets", ttft("200", "20", "2", "", "1", "2"), "cumulative bucket counts that fall (le=0.01 holds 200, le=0.1 20)"},
		{"bucket above count", ttft("5", "6", "8", "8", "1", "7"), "a bucket above the histogram's count (le=1 holds 8, _count is 7)"},
		{"+Inf below count", ttft("5", "6", "8", "8", "1", "16"), "a +Inf bucket below the histogram's count (le=+Inf holds 8, _count is 16)"},
		{"+Inf below count, fractional", ttft("0", "50.67", "101.34", "101.34", "2.53", "202.68"),
			"a +Inf bucket below the histogram's count (le=+Inf holds 101.34, _count is 202.68)"},
		{"negative sum", ttft("5", "6", "8", "8", "-10", "8"), "a negative histogram sum (-10)"},
		{"NaN sum", ttft("5", "6", "8", "8", "NaN", "8"), "a histogram sum of NaN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := scrapeEach(t, good, tc.bad, good)
			s := find(t, r, "vllm:time_to_first_token_seconds", "profiling")
			assert.Equal(t, tc.why, s.Impossible)
			assert.Contains(t, s.Stats, "count", "the server's own count stays")
			for _, k := range []string{"avg", "sum", "sum_rate", "p50_estimate", "p99_estimate", StatP50BucketLower} {
				assert.NotContains(t, s.Stats, k)
			}
			require.Len(t, r.Warnings, 1)
			assert.Contains(t, r.Warnings[0], tc.why)
			out := exportJSON(t, &r)
			assert.Contains(t, out, `"impossible"`)
			assert.NotContains(t, out, "_estimate")
			assert.NotContains(t, out, `"avg"`)
			for row, why := range headlineWhy(&r) {
				assert.Contains(t, why, tc.why, row)
			}
		})
	}
	r := scrapeEach(t, good, ttft("2", "4", "6", "6", "1.5", "6"), ttft("3", "6", "9", "9", "2", "9"),
		ttft("3", "6", "9.1", "9.1", "2", "9.100000000000001"), ttft("3", "6", "9.3", "9.300000000000001", "2", "9.3"))
	assert.Empty(t, r.Warnings, "a plausible histogram")
	s := find(t, r, "vllm:time_to_first_token_seconds", "profiling")
	assert.Empty(t, s.Impossible)
	assert.Contains(t, s.Stats, "p50_estimate")
}

// A series a scrape holds twice (the same family and labels) has two
// values at one time, and which one the server measured is not said:
// Prometheus refuses the duplicate. The series is impossible (the first
// sample kept, its figures refused, a warning naming it), the family's
// other series stay; a histogram held twice (expfmt merges it into one
// sample with every bucket twice) is refused the same way.
func TestDuplicatedSeriesIsImpossible(t *testing.T) {
	page := func(i int) string {
		return fmt.Sprintf("# TYPE h_dup gauge\nh_dup{a=\"1\"} %d\nh_dup{a=\"2\"} %d\nh_dup{a=\"1\"} %d\n"+
			"# TYPE h_lat histogram\nh_lat_bucket{le=\"1\"} %d\nh_lat_bucket{le=\"+Inf\"} %d\nh_lat_sum 1\nh_lat_count %d\n"+
			"h_lat_bucket{le=\"1\"} 1\nh_lat_bucket{le=\"+Inf\"} 1\nh_lat_sum 1\nh_lat_count 1\n", i, i, 1000+i, i, i, i)
	}
	r := scrapeEach(t, page(25), page(30), page(35))
	dup := find(t, r, "h_dup", "profiling", "a=1")
	assert.Contains(t, dup.Impossible, "the scrape held it twice")
	assert.Empty(t, dup.Stats, "no statistic of a series whose values are not known")
	assert.Equal(t, 35.0, dup.Refused["max"], "the first sample kept aside, never the duplicate's 1035")
	other := find(t, r, "h_dup", "profiling", "a=2")
	assert.Empty(t, other.Impossible)
	assert.Equal(t, 35.0, other.Stats["max"])
	for _, s := range r.Series {
		assert.NotEqual(t, "h_lat", s.Metric, "no sample of it kept: which buckets were whose is not said")
	}
	require.Len(t, r.Warnings, 2)
	joined := strings.Join(r.Warnings, "\n")
	assert.Contains(t, joined, `h_dup{a="1"} cannot be what the server measured (the scrape held it twice`)
	assert.Contains(t, joined, "h_lat cannot be what the server measured (the scrape held it twice")
	assert.Contains(t, exportJSON(t, &r), `"impossible": "the scrape held it twice`)
	assert.NotContains(t, exportJSON(t, &r), "1035")

	clean := scrapeEach(t, "# TYPE g gauge\ng{a=\"1\"} 1\ng{a=\"2\"} 2\n", "# TYPE g gauge\ng{a=\"2\"} 2\ng{a=\"1\"} 1\n")
	assert.Empty(t, clean.Warnings, "every series once a scrape, in any order")
}
