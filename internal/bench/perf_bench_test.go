package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// sseTokens is the content chunks of sseServer's replies.
const sseTokens = 64

// sseServer streams a role chunk, sseTokens one-token content chunks, a
// usage chunk and [DONE], each flushed: the pinned measurement's neutral
// server, in process.
func sseServer(b *testing.B) string {
	const head = `data: {"id":"chatcmpl-0123456789abcdef","object":"chat.completion.chunk","created":1700000000,"model":"mock-model",`
	chunks := [][]byte{[]byte(head + `"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}` + "\n\n")}
	for i := range sseTokens {
		chunks = append(chunks, fmt.Appendf(nil, head+`"choices":[{"index":0,"delta":{"content":" w%d"},"finish_reason":null}]}`+"\n\n", i%10))
	}
	chunks = append(chunks, []byte(head+`"choices":[],"usage":{"prompt_tokens":64,"completion_tokens":64,"total_tokens":128}}`+"\n\n"),
		[]byte("data: [DONE]\n\n"))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range chunks {
			_, _ = w.Write(c)
			w.(http.Flusher).Flush()
		}
	}))
	b.Cleanup(srv.Close)
	return srv.URL
}

// BenchmarkRunPerRequest measures what one more request costs the whole
// path (scheduler, client, SSE reading, records, token counts, metrics):
// the difference between runs of 100 and 600 requests, so that the run's
// start-up is left out. The allocations include the in-process server's;
// ns/req is the wall time of the extra requests (8 in flight, the server
// in process), so it is as noisy as the machine.
func BenchmarkRunPerRequest(b *testing.B) {
	benchRunPerRequest(b, func(*plan.Profile) {})
}

// BenchmarkRunPerRequestTraced is BenchmarkRunPerRequest with every HTTP
// exchange traced: --show-trace-timing (times), and --export-http-trace
// (every read and write kept besides).
func BenchmarkRunPerRequestTraced(b *testing.B) {
	b.Run("times", func(b *testing.B) { benchRunPerRequest(b, func(p *plan.Profile) { p.ShowTraceTiming = true }) })
	b.Run("chunks", func(b *testing.B) { benchRunPerRequest(b, func(p *plan.Profile) { p.ExportHTTPTrace = true }) })
}

func benchRunPerRequest(b *testing.B, set func(*plan.Profile)) {
	url := sseServer(b)
	run := func(n int) (allocs, bytes uint64, took time.Duration) {
		p := plan.NewProfile()
		set(&p)
		p.Model, p.URL, p.Streaming = []string{"mock-model"}, []string{url}, true
		p.SyntheticInputTokensMean, p.OutputTokensMean = 64, plan.Ptr(sseTokens)
		p.Concurrency, p.RequestCount = plan.Ptr(8), plan.Ptr(n)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		if _, err := Run(context.Background(), Options{Profile: p, Version: "bench"}); err != nil {
			b.Fatal(err)
		}
		took = time.Since(start)
		runtime.ReadMemStats(&after)
		return after.Mallocs - before.Mallocs, after.TotalAlloc - before.TotalAlloc, took
	}
	run(10) // what is loaded once per process (the tokenizer) is loaded
	var allocs, bytes, ns float64
	for b.Loop() {
		a0, b0, t0 := run(100)
		a1, b1, t1 := run(600)
		allocs += (float64(a1) - float64(a0)) / 500
		bytes += (float64(b1) - float64(b0)) / 500
		ns += float64(t1-t0) / 500
	}
	b.ReportMetric(allocs/float64(b.N), "allocs/req")
	b.ReportMetric(bytes/float64(b.N), "B/req")
	b.ReportMetric(ns/float64(b.N), "ns/req")
}
