package servermetrics

import (
	"context"
	"fmt"
	"hash/maphash"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// capSeries keeps at most max series (sample lines), cutting before the
// line that would go over, and never between the lines of one histogram
// or summary series; it counts the whole body's series when it cut.
func TestCapSeries(t *testing.T) {
	const body = "# HELP g A gauge.\n# TYPE g gauge\ng{a=\"1\"} 1\ng{a=\"2\"} 2\n" +
		"# TYPE h histogram\n" +
		"h_bucket{m=\"x\",le=\"1\"} 1\nh_bucket{m=\"x\",le=\"+Inf\"} 2\nh_sum{m=\"x\"} 3\nh_count{m=\"x\"} 2\n" +
		"h_bucket{le=\"1\",m=\"y\"} 0\nh_bucket{le=\"+Inf\",m=\"y\"} 0\nh_sum{m=\"y\"} 0\nh_count{m=\"y\"} 0\n" +
		"# TYPE s summary\ns{quantile=\"0.5\"} 1\ns_sum 1\ns_count 1\nafter_s 7\n"
	cut := func(s string) string { return body[:strings.Index(body, s)] }
	seed := maphash.MakeSeed()
	for _, tt := range []struct {
		max   int
		kept  string
		total int
	}{
		{max: 14, kept: body},
		{max: 100, kept: body},
		{max: 13, kept: cut("after_s"), total: 14},
		{max: 12, kept: cut("s{quantile"), total: 14}, // not half of the summary
		{max: 10, kept: cut("s{quantile"), total: 14},
		{max: 9, kept: cut("h_bucket{le=\"1\",m=\"y\"}"), total: 14}, // nor of a histogram, its labels in any order
		{max: 6, kept: cut("h_bucket{le=\"1\",m=\"y\"}"), total: 14},
		{max: 5, kept: cut("h_bucket{m=\"x\""), total: 14},
		{max: 2, kept: cut("h_bucket{m=\"x\""), total: 14},
		{max: 1, kept: cut("g{a=\"2\"}"), total: 14},
	} {
		kept, total := capSeries([]byte(body), tt.max, seed)
		assert.Equal(t, tt.kept, string(kept), "max %d", tt.max)
		assert.Equal(t, tt.total, total, "max %d", tt.max)
		if tt.total > 0 {
			fams, err := parse(context.Background(), kept, nil)
			require.NoError(t, err, "max %d: what is kept parses", tt.max)
			assert.NotEmpty(t, fams)
		}
	}
}

// millionBody is an exposition of n gauge series, then a counter.
func millionBody(n int) string {
	var sb strings.Builder
	sb.WriteString("# TYPE inflight gauge\n")
	for i := range n {
		fmt.Fprintf(&sb, "inflight{id=\"%d\"} 1\n", i)
	}
	sb.WriteString("# TYPE done_total counter\ndone_total 5\n")
	return sb.String()
}

// An endpoint with more series than --server-metrics-max-series keeps the
// first of every scrape; an endpoint whose labels change every scrape keeps
// the first it saw. Each is said once as it happens (Warn) and once in the
// result, with what was dropped. Without the cap 10^5 series were all
// parsed and stored at every scrape.
func TestSeriesCap(t *testing.T) {
	wide := newExporter(t, millionBody(100_000))
	churn := newExporter(t, "# TYPE user_requests gauge\nuser_requests{user=\"u0\"} 1\n")
	var mu sync.Mutex
	var warned []string
	c := collect(t, Options{Endpoints: []Target{{URL: wide.url, Source: SourceServer}, {URL: churn.url, Source: SourceServer}},
		MaxSeries: 1000, MarkTimeout: time.Minute, Warn: func(msg string) {
			mu.Lock()
			warned = append(warned, msg)
			mu.Unlock()
		}})
	c.Mark("profiling", true)
	for i := range 5 {
		var sb strings.Builder
		sb.WriteString("# TYPE user_requests gauge\n")
		for j := range 400 {
			fmt.Fprintf(&sb, "user_requests{user=\"u%d\"} 1\n", i*400+j)
		}
		churn.set(sb.String())
		c.scrapeAll(false, nil)
	}
	c.Mark("profiling", false)
	r := c.Stop()

	perEndpoint := map[string]int{}
	for _, s := range r.Series {
		if s.Phase == "profiling" {
			perEndpoint[s.Endpoint]++
		}
	}
	assert.Equal(t, map[string]int{wide.url: 1000, churn.url: 1000}, perEndpoint)
	assert.Equal(t, []string{
		"server metrics: scrape " + wide.url + ": more than 1000 series (--server-metrics-max-series): the first are kept, the others dropped; collection goes on",
		"server metrics: scrape " + churn.url + ": more than 1000 series (--server-metrics-max-series): the first are kept, the others dropped; collection goes on",
	}, warned)
	assert.Equal(t, []string{
		"server metrics: scrape " + wide.url + ": its largest scrape held 100001 series, more than the 1000 kept (--server-metrics-max-series): the others were dropped; collection goes on",
		"server metrics: scrape " + churn.url + ": its series changed from scrape to scrape: after 1000 distinct ones (--server-metrics-max-series), new ones were dropped (1400 samples); collection goes on",
	}, r.Warnings)
}
