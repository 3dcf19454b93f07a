package servermetrics

import (
	"context"
	"encoding/json"
	"hash/maphash"
	"io"
	"net/http"
	"testing"
)

// FuzzScrape feeds arbitrary bytes as an exposition, in the text format
// and as OpenMetrics, through the series cap, parsing, storage, reduction
// and every export: nothing may panic, what the cap keeps of a body parses
// to at most its number of series, and a reduced Result must export.
func FuzzScrape(f *testing.F) {
	for _, seed := range []string{
		vllmExposition(1),
		dcgmExposition(2),
		exposition(3, "1", 2, [4]float64{1, 2, 3, 4}, 0.5),
		"# HELP jobs Jobs.\n# TYPE jobs counter\njobs_total{q=\"a\"} 3\njobs_created{q=\"a\"} 1.7e9\n# EOF\n",
		"# TYPE h histogram\nh_bucket{le=\"+Inf\"} 0\nh_count 0\nh_sum 0\n",
		"# TYPE h histogram\nh_bucket{le=\"1\"} 5\nh_bucket{le=\"0.5\"} 9\nh_count 2\nh_sum NaN\n",
		"# TYPE s summary\ns{quantile=\"0.99\"} +Inf\ns_sum 1\ns_count 1\n",
		"# TYPE g gauge\ng -Inf\ng{a=\"b\"} NaN\n",
		"x 1\nx 2\n",
		"",
		"hello world\n{{{",
		"# TYPE i info\ni_info{v=\"1\"} 1\n# EOF\n",
	} {
		f.Add([]byte(seed))
	}
	headers := []http.Header{
		{"Content-Type": {"text/plain; version=0.0.4; charset=utf-8"}},
		{"Content-Type": {"application/openmetrics-text; version=1.0.0; charset=utf-8"}},
	}
	seed := maphash.MakeSeed()
	const maxSeries = 8
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, h := range headers {
			if kept, _ := capSeries(data, maxSeries, seed); len(kept) < len(data) {
				if fams, err := parse(context.Background(), kept, h); err == nil {
					n := 0
					for _, mf := range fams {
						n += len(mf.GetMetric())
					}
					if n > maxSeries {
						t.Fatalf("the cap kept %d series of %q, over %d", n, kept, maxSeries)
					}
				}
			}
			fams, err := parse(context.Background(), data, h)
			if err != nil {
				continue
			}
			b := newEndpointBuf(maxSeries, asIs)
			b.add(fams, 1, 0, true)
			b.add(fams, 2, 0, false)
			b.add(fams, 3, 0, true)
			for _, src := range []string{SourceServer, SourceGPU} {
				r := &Result{Endpoints: []Endpoint{{URL: "http://h/metrics", Source: src, Scrapes: 3, FirstNs: 1, LastNs: 3}},
					Phases: []Phase{{Name: "profiling", BeginNs: 1, EndNs: 3}}, StartNs: 0, EndNs: 3,
					timeline: &timeline{endpoints: []*endpointBuf{b}, marks: []mark{{phase: 0, begin: true, ep: 0, t: 1}, {phase: 0, ep: 0, t: 3}}}}
				reduce(r, r.timeline.marks, Options{SliceDuration: 1})
				if _, err := json.Marshal(r); err != nil {
					t.Fatalf("a reduced result does not marshal: %v", err)
				}
				Headline(r)
				ResetEvidence(r, "profiling", nil)
				for _, write := range []func() error{
					func() error { return WriteJSON(io.Discard, r, "", Meta{}) },
					func() error { return WriteCSV(io.Discard, r, "", Meta{}) },
					func() error { return WriteJSONL(io.Discard, r, Meta{}) },
					func() error { return WriteGPUJSON(io.Discard, r, "", Meta{}) },
					func() error { return WriteGPUCSV(io.Discard, r, "") },
					func() error { return WriteGPUJSONL(io.Discard, r, Meta{}) },
				} {
					if err := write(); err != nil {
						t.Fatalf("export of a parsed exposition failed: %v", err)
					}
				}
			}
		}
	})
}
