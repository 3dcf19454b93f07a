package endpoint

import (
	"encoding/json"
	"fmt"
	"maps"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// askUsage makes a streamed chat or completions body ask for its usage,
// as AIPerf does: its stream_options gain include_usage (and, with
// continuous, --per-chunk-usage's continuous_usage_stats), both true,
// unless the author's own stream_options (--extra-inputs, a turn's extra)
// set them already (Python's setdefault). A stream_options that is not an
// object is left as it is, and a body that does not stream is not changed.
func askUsage(m map[string]any, continuous bool) {
	if stream, _ := m["stream"].(bool); !stream {
		return
	}
	so := map[string]any{}
	switch v := m["stream_options"].(type) {
	case nil: // absent (or null): the options are aiperf's alone
	case map[string]bool: // the body's own (openaiBody): include_usage already
		if !continuous {
			return // nothing to add: no map built per request
		}
		for k, b := range v {
			so[k] = b
		}
	case map[string]any: // the author's, shared by every request: copied, not changed
		maps.Copy(so, v)
	default:
		return
	}
	keys := []string{"include_usage", "continuous_usage_stats"}
	if !continuous {
		keys = keys[:1]
	}
	for _, k := range keys {
		if _, ok := so[k]; !ok {
			so[k] = true
		}
	}
	m["stream_options"] = so
}

// unstreamed drops aiperf's own stream_options from a body whose author
// turned streaming off (--extra-inputs or a turn's extra "stream": false):
// servers refuse stream_options on a request that does not stream. An
// author's own stream_options stay.
func unstreamed(m map[string]any) {
	if stream, ok := m["stream"].(bool); ok && !stream {
		if _, ours := m["stream_options"].(map[string]bool); ours {
			delete(m, "stream_options")
		}
	}
}

// continuousUsage reports whether req's body asks for usage on every chunk
// (--per-chunk-usage, chat only).
func continuousUsage(req *Request) bool {
	return req.PerChunkUsage && req.EndpointType == plan.EndpointChat
}

// streamOptions is the stream_options a chat or completions body sends
// (Body): the body's own, or the author's that replace them, with
// askUsage's defaults.
func streamOptions(req *Request) any {
	m := map[string]any{"stream": req.Streaming}
	if req.Streaming {
		m["stream_options"] = map[string]bool{"include_usage": true}
	}
	for _, extra := range []map[string]any{req.Extra, req.TurnExtra} {
		for _, k := range []string{"stream", "stream_options"} {
			if v, ok := extra[k]; ok {
				m[k] = v
			}
		}
	}
	unstreamed(m)
	askUsage(m, continuousUsage(req))
	return m["stream_options"]
}

// chunkUsage is what a chat stream keeps of its usage under
// --per-chunk-usage, where every chunk carries the cumulative usage: the
// scanner leaves each usage object undecoded (decodeStreamed); the last
// one's bytes are kept, copied into a buffer reused from chunk to chunk,
// and decoded once, when the stream ends (usage); the first response that
// carries both generated text and usage has its completion_tokens read
// (AIPerf's first_content_chunk_completion_tokens). Nothing is allocated
// per chunk.
type chunkUsage struct {
	last  []byte // the last usage object read, when seen
	seen  bool
	found bool // a response with both text and usage arrived
	first *int // its completion_tokens, nil when not a count
	// problem says why the per-chunk counts cannot be believed (the first
	// content chunk's is not a count, or a cumulative count went down):
	// the reply's usage is then not trusted. prev is the last count read.
	problem string
	prev    int
}

// observe notes one response's usage object (raw, nil: none) and whether
// the response carried generated text. Each count is read with a scan of
// its bytes (nothing allocated) to check that it never goes down.
func (c *chunkUsage) observe(raw []byte, text bool) {
	if raw == nil {
		return
	}
	c.last, c.seen = append(c.last[:0], raw...), true
	if n, ok := completionCount(raw); ok && c.problem == "" {
		if n < c.prev {
			c.problem = fmt.Sprintf("its per-chunk completion_tokens went down (%d, then %d): they are not cumulative counts", c.prev, n)
		}
		c.prev = n
	}
	if text && !c.found {
		c.found = true
		var u wireUsage
		if json.Unmarshal(raw, &u) == nil {
			if c.first = u.CompletionTokens.count(); c.first == nil && u.CompletionTokens.Set && c.problem == "" {
				c.problem = "the first content chunk's completion_tokens is " + u.CompletionTokens.Bad
			}
		}
	}
}

// completionCount is the whole number of raw's "completion_tokens" key,
// read without decoding raw; false when there is none or it is not a
// plain whole number (the decoder judges those).
func completionCount(raw []byte) (int, bool) {
	rest, ok := jsonMemberValue(raw, `"completion_tokens"`)
	if !ok {
		return 0, false
	}
	n, digits := 0, 0
	for ; digits < len(rest) && digits < 12 && rest[digits] >= '0' && rest[digits] <= '9'; digits++ {
		n = n*10 + int(rest[digits]-'0')
	}
	if digits == 0 || digits < len(rest) && (rest[digits] == '.' || rest[digits] == 'e' || rest[digits] == 'E' || rest[digits] >= '0' && rest[digits] <= '9') {
		return 0, false
	}
	return n, true
}

// usage is the last usage object read, as the read loop would have taken
// it chunk by chunk, with FirstChunkTokens; nil when no response carried
// one.
func (c *chunkUsage) usage() *metrics.Usage {
	if !c.seen {
		return nil
	}
	var u wireUsage
	if json.Unmarshal(c.last, &u) != nil {
		u = wireUsage{malformed: true} // as the scanner describes it (decode.go)
	}
	out := u.metrics()
	out.FirstChunkTokens = c.first
	if c.problem != "" && out.Untrusted == "" {
		out.Untrusted = c.problem
	}
	return out
}
