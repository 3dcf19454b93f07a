package servermetrics

import (
	"context"
	"fmt"
	"hash/maphash"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// The scraping overhead, per scrape: fetching over loopback HTTP, parsing
// with expfmt and storing the sample. The CPU share at the default interval
// is the time of one scrape over 333 ms of one core.
//
//	go test -run '^$' -bench Scrape -benchmem ./internal/servermetrics/

// mockBody is the mock's /metrics after some traffic, so that its
// histograms have observations in many buckets.
func mockBody(b *testing.B) string {
	base := startMock(b, mock.Config{TTFT: 1, ITL: 0.2, BlockSize: 4})
	for i := range 12 {
		chat(b, base, words(i, 40), 8)
	}
	resp, err := http.Get(base + "/metrics")
	require.NoError(b, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(b, err)
	return string(body)
}

// wideBody is a synthetic exposition of 10,000 series: 60 gauge and 40
// counter families of 100 label sets each, and 20 histograms of 20 buckets.
func wideBody() string {
	var sb strings.Builder
	for f := range 100 {
		typ, name := "gauge", fmt.Sprintf("engine:metric_%d", f)
		if f >= 60 {
			typ, name = "counter", name+"_total"
		}
		fmt.Fprintf(&sb, "# HELP %s A metric.\n# TYPE %s %s\n", name, name, typ)
		for l := range 100 {
			fmt.Fprintf(&sb, "%s{model_name=\"meta-llama/Llama-3.1-8B-Instruct\",engine=\"%d\",rank=\"%d\"} %d\n", name, l%8, l, f*l)
		}
	}
	for h := range 20 {
		name := fmt.Sprintf("engine:latency_%d_seconds", h)
		fmt.Fprintf(&sb, "# HELP %s A histogram.\n# TYPE %s histogram\n", name, name)
		for k := range 19 {
			fmt.Fprintf(&sb, "%s_bucket{model_name=\"m\",le=\"%g\"} %d\n", name, 0.001*float64(int(1)<<k), 10*k)
		}
		fmt.Fprintf(&sb, "%s_bucket{model_name=\"m\",le=\"+Inf\"} 190\n%s_sum{model_name=\"m\"} 12.5\n%s_count{model_name=\"m\"} 190\n", name, name, name)
	}
	return sb.String()
}

// serve serves body as the text format.
func serve(b *testing.B, body string) string {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = io.WriteString(w, body)
	}))
	b.Cleanup(ts.Close)
	return ts.URL + "/metrics"
}

// benchScrape scrapes url b.N times into one endpoint's storage.
func benchScrape(b *testing.B, url string) {
	client := newClient(DefaultTimeout)
	buf := newEndpointBuf(DefaultMaxSeries, asIs)
	seed := maphash.MakeSeed()
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		f, err := fetch(ctx, client, url, nil, DefaultMaxSeries, seed)
		if err != nil {
			b.Fatal(err)
		}
		buf.add(f.fams, int64(i), 0, false)
	}
	b.StopTimer()
	perScrape := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(float64(perScrape.Microseconds()), "µs/scrape")
	b.ReportMetric(100*float64(perScrape)/float64(DefaultInterval), "%cpu@333ms")
}

// benchParse parses and stores body b.N times, without HTTP, as the text
// format (h nil) or as h says.
func benchParse(b *testing.B, body string, h http.Header) {
	if h == nil {
		h = http.Header{"Content-Type": {"text/plain; version=0.0.4"}}
	}
	buf := newEndpointBuf(DefaultMaxSeries, asIs)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		fams, err := parse(context.Background(), []byte(body), h)
		if err != nil {
			b.Fatal(err)
		}
		buf.add(fams, int64(i), 0, false)
	}
}

func BenchmarkScrapeMock(b *testing.B) { benchScrape(b, serve(b, mockBody(b))) }
func BenchmarkScrape10k(b *testing.B)  { benchScrape(b, serve(b, wideBody())) }
func BenchmarkParseMock(b *testing.B)  { benchParse(b, mockBody(b), nil) }
func BenchmarkParse10k(b *testing.B)   { benchParse(b, wideBody(), nil) }

// BenchmarkParseOpenMetrics parses (and stores) OpenMetrics bodies of
// lines gauge series whose label values are label bytes long: 10 times
// the lines, or 10 times the label, costs at most 10 times as much (a
// cost per line and one per byte), linear in the body. expfmt's own
// OpenMetrics parser took 0.3 s for 20 lines of 100-byte labels, 13 s for
// 20 of 800 bytes and 254 s for one of 4,096.
func BenchmarkParseOpenMetrics(b *testing.B) {
	for _, size := range []struct{ lines, label int }{{1000, 100}, {10000, 100}, {100, 1000}, {100, 10000}} {
		b.Run(fmt.Sprintf("lines=%d,label=%d", size.lines, size.label), func(b *testing.B) {
			var sb strings.Builder
			sb.WriteString("# HELP g A gauge.\n# TYPE g gauge\n")
			label := strings.Repeat("x", size.label)
			for i := range size.lines {
				fmt.Fprintf(&sb, "g{a=\"%d\",b=\"%s\"} %d\n", i, label, i)
			}
			sb.WriteString("# EOF\n")
			benchParse(b, sb.String(), omHeader)
		})
	}
}

// BenchmarkScrapeLiveMock scrapes the mock itself: its rendering included.
func BenchmarkScrapeLiveMock(b *testing.B) {
	base := startMock(b, mock.Config{Fast: true})
	for i := range 12 {
		chat(b, base, words(i, 40), 8)
	}
	benchScrape(b, base+"/metrics")
}

// hugeBody is an exposition of n gauge series (one family, a label per
// series), as an exporter with a label per request or per user serves it:
// about 20 bytes a series (under maxBody for 10^6).
func hugeBody(n int) string {
	var sb strings.Builder
	sb.WriteString("# HELP inflight Requests in flight.\n# TYPE inflight gauge\n")
	for i := range n {
		fmt.Fprintf(&sb, "inflight{id=\"%d\"} %d\n", i, i%7)
	}
	return sb.String()
}

// BenchmarkScrapeMillionSeries scrapes an endpoint of 10^6 series over
// loopback and stores each sample: what one scrape costs in time and
// allocations (a body of 21 MB). With the series cap: 0.14 s and 65 MB a
// scrape (reading the body is most of it); without it (all parsed and
// stored): 8.2 s and 740 MB in 19 million allocations.
func BenchmarkScrapeMillionSeries(b *testing.B) { benchScrape(b, serve(b, hugeBody(1_000_000))) }

// BenchmarkCollectMillionSeries runs a collector on an endpoint of 10^6
// series for one phase of b.N scrapes and reports the heap it holds then
// (after a collection) and the series it reduced: the series cap bounds
// both. With it, 20 scrapes: 67 ms a scrape, 30 MiB held, 20,000 series;
// without it, 3 scrapes: 22 s a scrape, 1,350 MiB held, 10^6 series.
func BenchmarkCollectMillionSeries(b *testing.B) {
	url := serve(b, hugeBody(1_000_000))
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c, err := Start(context.Background(), Options{Endpoints: []Target{{URL: url, Source: SourceServer}}, Interval: time.Hour,
		MarkTimeout: time.Minute})
	require.NoError(b, err)
	b.ResetTimer()
	c.Mark("profiling", true)
	for range b.N {
		c.scrapeAll(false, nil)
	}
	c.Mark("profiling", false)
	b.StopTimer()
	r := c.Stop()
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(r)
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/(1<<20), "MiB-held")
	b.ReportMetric(float64(len(r.Series)), "series")
}
