package endpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// streamOptionsOf is the stream_options of req's body, as sent.
func streamOptionsOf(t *testing.T, req Request) any {
	t.Helper()
	b, err := Body(req)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	return m["stream_options"]
}

// TestChunkUsageBody: --per-chunk-usage adds continuous_usage_stats (and
// include_usage) to a streamed chat body's stream_options, and every
// streamed chat or completions body include_usage, AIPerf's setdefault:
// an author's own values (--extra-inputs, a turn's extra) win, a
// stream_options that is not an object is left as it is, and a body that
// does not stream sends none of aiperf's. asksUsage reads the same options.
func TestChunkUsageBody(t *testing.T) {
	both := map[string]any{"include_usage": true, "continuous_usage_stats": true}
	author := map[string]any{"continuous_usage_stats": false}
	tests := []struct {
		name      string
		edit      func(*Request)
		want      any
		asksUsage bool
	}{
		{"the flag", func(*Request) {}, both, true},
		{"without it", func(r *Request) { r.PerChunkUsage = false }, map[string]any{"include_usage": true}, true},
		{"the author's value wins", func(r *Request) { r.Extra = map[string]any{"stream_options": author} },
			map[string]any{"include_usage": true, "continuous_usage_stats": false}, true},
		{"the author's include_usage wins", func(r *Request) {
			r.TurnExtra = map[string]any{"stream_options": map[string]any{"include_usage": false, "x": 1.0}}
		}, map[string]any{"include_usage": false, "continuous_usage_stats": true, "x": 1.0}, false},
		{"not an object: left as it is", func(r *Request) { r.Extra = map[string]any{"stream_options": "odd"} }, "odd", false},
		{"extra-inputs stream:true without --streaming", func(r *Request) {
			r.Streaming, r.Extra = false, map[string]any{"stream": true}
		}, both, true},
		// AIPerf reads the merged body: a server refuses stream_options on
		// a request that does not stream.
		{"extra-inputs stream:false", func(r *Request) { r.Extra = map[string]any{"stream": false} }, nil, false},
		{"a turn's stream:false", func(r *Request) { r.TurnExtra = map[string]any{"stream": false} }, nil, false},
		{"stream:false, the author's options stay", func(r *Request) {
			r.Extra = map[string]any{"stream": false, "stream_options": map[string]any{"x": 1.0}}
		}, map[string]any{"x": 1.0}, false},
		{"not streamed", func(r *Request) { r.Streaming = false }, nil, false},
		{"completions", func(r *Request) { r.EndpointType = plan.EndpointCompletions }, map[string]any{"include_usage": true}, true},
		// Without the flag too, an author's stream_options keeps
		// include_usage unless it sets it (AIPerf's setdefault on every
		// streamed chat body).
		{"without it, the author's options", func(r *Request) {
			r.PerChunkUsage, r.Extra = false, map[string]any{"stream_options": author}
		}, map[string]any{"include_usage": true, "continuous_usage_stats": false}, true},
		{"completions, the author's options", func(r *Request) {
			r.EndpointType, r.Extra = plan.EndpointCompletions, map[string]any{"stream_options": map[string]any{"x": 1.0}}
		}, map[string]any{"include_usage": true, "x": 1.0}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := chatReq("http://x/v1/chat/completions", true)
			req.PerChunkUsage = true
			tc.edit(&req)
			assert.Equal(t, tc.want, streamOptionsOf(t, req))
			assert.Equal(t, tc.asksUsage, asksUsage(&req), "asksUsage reads what the body sends")
		})
	}
	assert.Equal(t, map[string]any{"continuous_usage_stats": false}, author, "the author's map, shared by every request, is not changed")
}

// Chunks of a vLLM stream with continuous_usage_stats: each carries the
// usage so far.
const (
	roleU  = `data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""}}],"usage":{"prompt_tokens":5,"completion_tokens":0,"total_tokens":5}}` + "\n\n"
	tokABC = `data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"ABC"}}],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}` + "\n\n"
	tokDU  = `data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"D"}}],"usage":{"prompt_tokens":5,"completion_tokens":4,"total_tokens":9}}` + "\n\n"
	finU   = `data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":4,"total_tokens":9}}` + "\n\n"
	usageU = `data: {"object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":4,"total_tokens":9,"prompt_tokens_details":{"cached_tokens":2}}}` + "\n\n"
)

// TestChunkUsageStream: under --per-chunk-usage the reply's Usage is the
// last usage object, exactly as without the flag, and FirstChunkTokens
// is the completion_tokens of the first response carrying both generated
// text (reasoning included) and usage; nil when none did, or when its
// count is not one, which, as a count that goes down, makes the usage
// untrusted. Completions requests are read as without the flag.
func TestChunkUsageStream(t *testing.T) {
	final := &metrics.Usage{PromptTokens: 5, CompletionTokens: 4, TotalTokens: new(9), CachedTokens: new(2)}
	tests := []struct {
		name       string
		completion bool
		wire       []string
		usage      *metrics.Usage // without the flag; with it, the same plus first
		first      *int
		untrusted  string // with the flag: why the per-chunk counts are not believed
		errType    string
	}{
		{name: "vllm continuous usage", wire: []string{roleU, tokABC, tokDU, finU, usageU, done}, usage: final, first: new(3)},
		{name: "the first content chunk without usage", wire: []string{roleU, tokA, tokDU, usageU, done}, usage: final, first: new(4)},
		{name: "reasoning is generated text", wire: []string{
			`data: {"choices":[{"index":0,"delta":{"reasoning_content":"hm"}}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}` + "\n\n",
			tokDU, usageU, done}, usage: final, first: new(2)},
		{name: "usage only at the end (option ignored)", wire: []string{role, tokA, tokB, usageU, done}, usage: final},
		{name: "no usage at all", wire: []string{role, tokA, done}},
		{name: "the first count is not a count", wire: []string{
			`data: {"choices":[{"index":0,"delta":{"content":"A"}}],"usage":{"prompt_tokens":5,"completion_tokens":-1}}` + "\n\n",
			tokDU, usageU, done}, usage: final, untrusted: "the first content chunk's completion_tokens is negative (-1)"},
		{name: "a count that goes down", wire: []string{
			`data: {"choices":[{"index":0,"delta":{"content":"A"}}],"usage":{"prompt_tokens":5,"completion_tokens":8,"total_tokens":13}}` + "\n\n",
			tokDU, usageU, done}, usage: final, first: new(8), untrusted: "its per-chunk completion_tokens went down (8, then 4): they are not cumulative counts"},
		{name: "a null usage keeps the last", wire: []string{tokABC, tokDU, `data: {"choices":[],"usage":null}` + "\n\n", done},
			usage: &metrics.Usage{PromptTokens: 5, CompletionTokens: 4, TotalTokens: new(9)}, first: new(3)},
		{name: "a malformed last usage", wire: []string{tokABC, `data: {"choices":[],"usage":5}` + "\n\n", done},
			usage: &metrics.Usage{Untrusted: "usage is not an object of token counts"}, first: new(3)},
		{name: "finished with usage, no [DONE]", wire: []string{tokABC, finU}, usage: &metrics.Usage{PromptTokens: 5, CompletionTokens: 4, TotalTokens: new(9)}, first: new(3)},
		{name: "dropped mid-stream", wire: []string{tokABC, tokDU}, usage: &metrics.Usage{PromptTokens: 5, CompletionTokens: 4, TotalTokens: new(9)},
			first: new(3), errType: ErrTypeIncompleteStream},
		{name: "completions: not asked", completion: true, wire: []string{
			`data: {"object":"text_completion","choices":[{"index":0,"text":"x"}],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}` + "\n\n", done},
			usage: &metrics.Usage{PromptTokens: 5, CompletionTokens: 3, TotalTokens: new(8)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, on := range []bool{false, true} {
				srv := newRawServer(t, sseClose(tc.wire...))
				c := newTestClient(t, Options{})
				req := chatReq(srv.url("/v1/chat/completions"), true)
				if tc.completion {
					req.EndpointType = plan.EndpointCompletions
					req.URL = srv.url("/v1/completions")
				}
				req.PerChunkUsage = on
				res := c.Do(context.Background(), req)
				if tc.errType == "" {
					require.Nil(t, res.Err, "flag %v", on)
				} else {
					require.NotNil(t, res.Err)
					assert.Equal(t, tc.errType, res.Err.Type)
				}
				want := tc.usage
				if on && want != nil {
					w := *want
					w.FirstChunkTokens = tc.first
					if tc.untrusted != "" {
						w.Untrusted = tc.untrusted
					}
					want = &w
				}
				assert.Equal(t, want, res.Usage, "flag %v", on)
			}
		})
	}
}

// usageChunk is a vLLM chunk under continuous_usage_stats: text, and the
// usage so far.
var usageChunk = []byte(`{"id":"chatcmpl-0123456789","object":"chat.completion.chunk","created":1700000000,"model":"mock-model",` +
	`"choices":[{"index":0,"delta":{"content":" tok1"},"logprobs":null,"finish_reason":null}],` +
	`"usage":{"prompt_tokens":550,"completion_tokens":3,"total_tokens":553}}`)

// perChunkStream is the decoder of a --per-chunk-usage chat stream.
func perChunkStream() streamDecoder {
	req := chatReq("http://x/v1/chat/completions", true)
	req.PerChunkUsage = true
	return openaiFormat{api: apiChat, req: &req}.stream()
}

// TestChunkUsageNoAllocPerChunk: under --per-chunk-usage a chunk carrying
// text and usage is decoded without allocating; the usage is decoded once,
// at the end.
func TestChunkUsageNoAllocPerChunk(t *testing.T) {
	dec, data := perChunkStream(), usageChunk
	p, kind := dec.event("", data, 200) // the first content chunk: its count read once
	require.Equal(t, kindChunk, kind)
	require.Equal(t, " tok1", p.text)
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	allocs := testing.AllocsPerRun(100, func() {
		if p, _ := dec.event("", data, 200); p.text != " tok1" || p.usage != nil {
			t.Fatal(p)
		}
	})
	assert.Zero(t, allocs, "allocations per chunk")
	u := dec.(usageAtEnd).endUsage()
	assert.Equal(t, &metrics.Usage{PromptTokens: 550, CompletionTokens: 3, TotalTokens: new(553), FirstChunkTokens: new(3)}, u)
}

// chunkUsageAllocs is the allocations of reading one --per-chunk-usage
// stream of n chunks, each with the usage so far, its response sized as
// Do sizes it for max_tokens n.
func chunkUsageAllocs(t *testing.T, n int) float64 {
	var body []byte
	for i := range n {
		body = fmt.Appendf(body, `data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" t%d"}}],`+
			`"usage":{"prompt_tokens":5,"completion_tokens":%d,"total_tokens":%d}}`+"\n\n", i, i+1, i+6)
	}
	body = append(body, done...)
	c := New(Options{})
	defer c.Close()
	req := chatReq("http://x/v1/chat/completions", true)
	req.PerChunkUsage = true
	h := http.Header{"Content-Type": []string{"text/event-stream"}}
	src := bytes.NewReader(body)
	return testing.AllocsPerRun(20, func() {
		src.Reset(body)
		res := Response{Chunks: make([]Chunk, 0, n+1), textHint: n * textPerToken}
		c.readStream(context.Background(), context.Background(), src, h, formatFor(&req), &res, streamHooks{})
		if res.Err != nil || len(res.Chunks) != n || *res.Usage.FirstChunkTokens != 1 || res.Usage.CompletionTokens != n {
			t.Fatalf("bad stream: %v, %d chunks, usage %+v", res.Err, len(res.Chunks), res.Usage)
		}
	})
}

// TestChunkUsageAllocatesNothingPerChunk: under --per-chunk-usage, where
// every chunk carries usage, reading a stream still allocates per
// response, never per chunk (TestReadStreamAllocatesNothingPerChunk).
func TestChunkUsageAllocatesNothingPerChunk(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	short, long := chunkUsageAllocs(t, 64), chunkUsageAllocs(t, 4096)
	assert.Less(t, short, 96.0, "allocations of a 64-chunk stream")
	assert.Less(t, (long-short)/(4096-64), 0.01, "allocations per chunk (%v for 64 chunks, %v for 4,096)", short, long)
}

// A server's per-chunk counts are believed only while they are cumulative:
// a count that goes down, or a first content chunk's count that is not a
// count, makes the reply's usage untrusted (its OSL the client's count, its
// ITL divided by OSL − 1), saying why.
func TestChunkUsageChecksItsCounts(t *testing.T) {
	usageOf := func(counts ...string) *metrics.Usage {
		var c chunkUsage
		c.observe([]byte(`{"prompt_tokens":5,"completion_tokens":0,"total_tokens":5}`), false) // the role chunk
		for _, n := range counts {
			c.observe([]byte(`{"prompt_tokens":5,"completion_tokens":`+n+`,"total_tokens":9}`), true)
		}
		return c.usage()
	}
	u := usageOf("3", "4", "5")
	require.NotNil(t, u.FirstChunkTokens)
	assert.Equal(t, 3, *u.FirstChunkTokens)
	assert.Empty(t, u.Untrusted, "total_tokens aside, cumulative counts are believed")

	u = usageOf("8", "3", "4", "10")
	assert.Contains(t, u.Untrusted, "its per-chunk completion_tokens went down (8, then 3)")
	u = usageOf("-3", "4")
	assert.Contains(t, u.Untrusted, "the first content chunk's completion_tokens is negative")
	u = usageOf("2.5", "4")
	assert.Contains(t, u.Untrusted, "the first content chunk's completion_tokens is")

	for raw, want := range map[string]int{`{"completion_tokens": 12}`: 12, `{"completion_tokens_details":{},"completion_tokens":7}`: 7} {
		n, ok := completionCount([]byte(raw))
		assert.True(t, ok, raw)
		assert.Equal(t, want, n, raw)
	}
	for _, raw := range []string{`{}`, `{"completion_tokens":-1}`, `{"completion_tokens":1.5}`, `{"completion_tokens":"4"}`, `{"completion_tokens":1e3}`} {
		_, ok := completionCount([]byte(raw))
		assert.False(t, ok, raw)
	}
}
