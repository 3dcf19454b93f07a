package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// Request is one inference request to send.
type Request struct {
	URL          string         // full URL including the path
	EndpointType string         // plan.EndpointChat or plan.EndpointCompletions
	Model        string         // "model" field
	Prompt       string         // the user message (chat) or the bare prompt (completions)
	MaxTokens    int            // 0: no max-tokens field is sent
	Streaming    bool           // ask for SSE with stream_options.include_usage
	Extra        map[string]any // merged into the body last (--extra-inputs); its keys win
	RequestID    string         // sent as X-Request-ID when not empty
	// Body, when set, is the request's JSON body as Body(req) builds it:
	// bodies depend only on the prompt, model and options, so a caller that
	// sends the same prompts again can build each once and reuse it.
	Body []byte
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Body returns the JSON request body, as AIPerf builds it: chat sends
// "messages" with one user message and "max_completion_tokens", completions
// sends "prompt" as a bare string and "max_tokens"; streaming adds
// "stream_options":{"include_usage":true}; Extra is merged last (shallow).
// Keys are sorted and HTML characters are not escaped.
func Body(req Request) ([]byte, error) {
	m := make(map[string]any, 5+len(req.Extra))
	m["model"] = req.Model
	m["stream"] = req.Streaming
	maxKey := "max_completion_tokens"
	switch req.EndpointType {
	case plan.EndpointChat:
		m["messages"] = []chatMessage{{Role: "user", Content: req.Prompt}}
	case plan.EndpointCompletions:
		m["prompt"] = req.Prompt
		maxKey = "max_tokens"
	default:
		return nil, fmt.Errorf("build request body: unknown endpoint type %q (want %s or %s)",
			req.EndpointType, plan.EndpointChat, plan.EndpointCompletions)
	}
	if req.MaxTokens > 0 {
		m[maxKey] = req.MaxTokens
	}
	if req.Streaming {
		m["stream_options"] = map[string]bool{"include_usage": true}
	}
	maps.Copy(m, req.Extra)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, fmt.Errorf("encode request body: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
