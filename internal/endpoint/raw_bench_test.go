package endpoint

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/aiperf-go/aiperf/internal/metrics"
)

// sseBody is a stream of benchTokens chat chunks, the usage and [DONE].
func sseBody() []byte {
	var b bytes.Buffer
	for i := range benchTokens {
		fmt.Fprintf(&b, "data: {\"id\":\"chatcmpl-0123456789\",\"object\":\"chat.completion.chunk\","+
			"\"created\":1700000000,\"model\":\"mock-model\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" tok%d\"},"+
			"\"logprobs\":null,\"finish_reason\":null}]}\n\n", i)
	}
	b.WriteString(usage + done)
	return b.Bytes()
}

// BenchmarkReadStreamRaw reads one stream from memory (no network, so the
// numbers are the client's own): "off" is every run without --export-level
// raw (a nil check per event), "raw" keeps every event.
func BenchmarkReadStreamRaw(b *testing.B) {
	body := sseBody()
	c := New(Options{})
	defer c.Close()
	req := chatReq("http://x/v1/chat/completions", true)
	h := http.Header{"Content-Type": []string{"text/event-stream"}}
	for _, raw := range []bool{false, true} {
		name := map[bool]string{false: "off", true: "raw"}[raw]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				res := Response{Chunks: make([]Chunk, 0, benchTokens+1)}
				if raw {
					res.raw = &metrics.Raw{}
				}
				c.readStream(context.Background(), context.Background(), bytes.NewReader(body), h, formatFor(&req), &res, streamHooks{})
				if res.Err != nil || len(res.Chunks) != benchTokens {
					b.Fatalf("bad stream: %v", res.Err)
				}
			}
		})
	}
}
