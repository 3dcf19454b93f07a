package endpoint

import (
	"encoding/json"
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
	case map[string]bool: // the body's own (openaiBody)
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
}

// observe notes one response's usage object (raw, nil: none) and whether
// the response carried generated text.
func (c *chunkUsage) observe(raw []byte, text bool) {
	if raw == nil {
		return
	}
	c.last, c.seen = append(c.last[:0], raw...), true
	if text && !c.found {
		c.found = true
		var u wireUsage
		if json.Unmarshal(raw, &u) == nil {
			c.first = u.CompletionTokens.count()
		}
	}
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
	return out
}
