package endpoint

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// benchTokens is the number of content chunks per streamed response.
const benchTokens = 64

// newFastSSEServer streams benchTokens vLLM-shaped chunks, a usage chunk and
// [DONE], flushing each one, with no delay.
func newFastSSEServer(b *testing.B) *httptest.Server { return newFastSSEServerUsage(b, false) }

// newFastSSEServerUsage is newFastSSEServer whose every chunk carries the
// usage so far when continuous is set (vLLM's continuous_usage_stats).
func newFastSSEServerUsage(b *testing.B, continuous bool) *httptest.Server {
	var body [][]byte
	for i := range benchTokens {
		u := ""
		if continuous {
			u = fmt.Sprintf(`,"usage":{"prompt_tokens":550,"completion_tokens":%d,"total_tokens":%d}`, i+1, 551+i)
		}
		body = append(body, fmt.Appendf(nil, "data: {\"id\":\"chatcmpl-0123456789\",\"object\":\"chat.completion.chunk\","+
			"\"created\":1700000000,\"model\":\"mock-model\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" tok%d\"},"+
			"\"logprobs\":null,\"finish_reason\":null}]%s}\n\n", i, u))
	}
	body = append(body, []byte(usage), []byte(done))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		for _, p := range body {
			_, _ = w.Write(p)
			f.Flush()
		}
	}))
	b.Cleanup(srv.Close)
	return srv
}

// runParallel runs b.N requests from exactly conc goroutines and reports
// requests/s and chunks/s. (b.RunParallel would run a multiple of
// GOMAXPROCS goroutines: 2 for "c=1" on a 2-core machine, which also
// overflows an idle pool sized for 1.)
func runParallel(b *testing.B, conc int, do func() int) {
	var chunks, next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for range conc {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				chunks.Add(int64(do()))
			}
		})
	}
	wg.Wait()
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(b.N)/sec, "req/s")
	b.ReportMetric(float64(chunks.Load())/sec, "chunks/s")
}

// BenchmarkClientStream measures Client.Do against an in-process fast SSE
// server.
func BenchmarkClientStream(b *testing.B) {
	benchClientStream(b, Options{})
}

// BenchmarkClientStreamTraced is BenchmarkClientStream with the HTTP
// exchange traced: times (--show-trace-timing) and, besides, every read
// and write kept (chunks, --export-http-trace).
func BenchmarkClientStreamTraced(b *testing.B) {
	b.Run("times", func(b *testing.B) { benchClientStream(b, Options{Trace: true}) })
	b.Run("chunks", func(b *testing.B) { benchClientStream(b, Options{TraceChunks: true}) })
}

func benchClientStream(b *testing.B, o Options) { benchClientStreamUsage(b, o, false) }

// BenchmarkClientStreamChunkUsage is BenchmarkClientStream under
// --per-chunk-usage: every chunk carries the usage so far.
func BenchmarkClientStreamChunkUsage(b *testing.B) { benchClientStreamUsage(b, Options{}, true) }

func benchClientStreamUsage(b *testing.B, o Options, perChunk bool) {
	for _, conc := range []int{1, 64} {
		b.Run(fmt.Sprintf("c=%d", conc), func(b *testing.B) {
			srv := newFastSSEServerUsage(b, perChunk)
			o.MaxConns = conc
			c := New(o)
			defer c.Close()
			req := chatReq(srv.URL+"/v1/chat/completions", true)
			req.MaxTokens, req.PerChunkUsage = benchTokens, perChunk
			benchDo(b, c, conc, req)
		})
	}
}

// benchDo sends req with c from conc goroutines, b.N times in all,
// reporting allocations; a reply without benchTokens chunks fails b.
func benchDo(b *testing.B, c *Client, conc int, req Request) {
	b.ReportAllocs()
	runParallel(b, conc, func() int {
		res := c.Do(context.Background(), req)
		if res.Err != nil || len(res.Chunks) != benchTokens {
			b.Errorf("bad response: %+v (%d chunks)", res.Err, len(res.Chunks))
		}
		return len(res.Chunks)
	})
}

// BenchmarkBaselineStream is the floor Client.Do is compared with: a
// hand-written loop that posts the same body and counts "data:" lines
// without decoding them.
func BenchmarkBaselineStream(b *testing.B) {
	for _, conc := range []int{1, 64} {
		b.Run(fmt.Sprintf("c=%d", conc), func(b *testing.B) {
			srv := newFastSSEServer(b)
			hc := &http.Client{Transport: newTransport(conc, true)}
			defer hc.CloseIdleConnections()
			req := chatReq(srv.URL+"/v1/chat/completions", true)
			body, _ := Body(req)
			b.ReportAllocs()
			runParallel(b, conc, func() int {
				hr, _ := http.NewRequest(http.MethodPost, req.URL, bytes.NewReader(body))
				hr.Header.Set("Content-Type", "application/json")
				resp, err := hc.Do(hr)
				if err != nil {
					b.Error(err)
					return 0
				}
				br := bufio.NewReaderSize(resp.Body, 16<<10)
				n := 0
				for {
					line, err := br.ReadSlice('\n')
					if err != nil || bytes.HasPrefix(line, []byte("data: [DONE]")) {
						break
					}
					if bytes.HasPrefix(line, []byte("data:")) {
						n++
					}
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				return n - 1 // the usage chunk carries no text
			})
		})
	}
}

// BenchmarkDecodeChunk measures the per-chunk JSON work of the read loop.
func BenchmarkDecodeChunk(b *testing.B) {
	data := []byte(`{"id":"chatcmpl-0123456789","object":"chat.completion.chunk","created":1700000000,"model":"mock-model",` +
		`"choices":[{"index":0,"delta":{"content":" tok1"},"logprobs":null,"finish_reason":null}]}`)
	b.ReportAllocs()
	for b.Loop() {
		var w wireChunk
		if err := decodeChunk(data, &w); err != nil {
			b.Fatal(err)
		}
		if text, _ := w.output(); text != " tok1" {
			b.Fatal(text)
		}
	}
}

// BenchmarkDecodeTransient is BenchmarkDecodeChunk as the read loop
// decodes: into a reused target, its strings aliasing the input.
func BenchmarkDecodeTransient(b *testing.B) {
	data := []byte(`{"id":"chatcmpl-0123456789","object":"chat.completion.chunk","created":1700000000,"model":"mock-model",` +
		`"choices":[{"index":0,"delta":{"content":" tok1"},"logprobs":null,"finish_reason":null}]}`)
	var w wireChunk
	var scratch []byte
	b.ReportAllocs()
	for b.Loop() {
		w.reset()
		if err := decodeTransient(data, &w, &scratch); err != nil {
			b.Fatal(err)
		}
		if text, _ := w.output(); text != " tok1" {
			b.Fatal(text)
		}
	}
}

// BenchmarkDecodeTransientChunkUsage is BenchmarkDecodeTransient of a
// chunk that carries usage, as every chunk does under --per-chunk-usage,
// decoded as the read loop then decodes it (the usage decoded once, at
// the stream's end).
func BenchmarkDecodeTransientChunkUsage(b *testing.B) {
	dec := perChunkStream()
	b.ReportAllocs()
	for b.Loop() {
		if p, _ := dec.event("", usageChunk, 200); p.text != " tok1" {
			b.Fatal(p.text)
		}
	}
}

// BenchmarkBody measures building a streaming chat body with a ~2 KiB prompt.
func BenchmarkBody(b *testing.B) {
	req := chatReq("http://x/v1/chat/completions", true)
	req.Prompt = strings.Repeat("lorem ipsum dolor ", 120)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Body(req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClientStreamCoalesced is BenchmarkClientStream with the
// connections read through the receive-coalescing poller, as aiperf profile
// reads them by default (--rx-coalesce-usecs 20).
func BenchmarkClientStreamCoalesced(b *testing.B) {
	benchClientStream(b, Options{RxCoalesce: 20 * time.Microsecond})
}
