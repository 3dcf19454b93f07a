package mock

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
)

// tokenWire is how one API writes a generation: a streamed reply's frames
// (opening frames before the first token, one frame per token, closing
// frames, the end marker) or a whole reply. A wire serves one request.
type tokenWire interface {
	start(g *generation)
	open(g *generation) []byte // nil: none
	token(g *generation, k int) []byte
	tail(g *generation) []byte // nil: none
	end() []byte
	whole(g *generation) any
	release()
}

// newWire is the wire of ep's API (OpenAI's chunker by default).
// continuous is stream_options.continuous_usage_stats, which only
// OpenAI's chunker honours (chunkusage.go).
func newWire(ep endpoint, includeUsage, continuous bool) tokenWire {
	if ep.wire != nil {
		return ep.wire(includeUsage)
	}
	c := chunkers.Get().(*chunker)
	c.includeUsage, c.continuous = includeUsage, includeUsage && continuous
	return c
}

// readRequest decodes an inference request into OpenAI terms: a JSON
// body, or a multipart/form-data one whose fields are the JSON body's keys
// (AIPerf's --request-content-type multipart/form-data).
func readRequest(w http.ResponseWriter, r *http.Request, ep endpoint) (*completionRequest, error) {
	r.Body = http.MaxBytesReader(w, r.Body, maxRequestBytes)
	var body io.Reader = r.Body
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" {
		b, err := formToJSON(r)
		if err != nil {
			return nil, fmt.Errorf("decode multipart request body: %w", err)
		}
		body = bytes.NewReader(b)
	}
	if ep.parse == nil {
		var req completionRequest
		if err := decodeBody(body, &req); err != nil {
			return nil, err
		}
		return &req, nil
	}
	var raw json.RawMessage
	if err := decodeBody(body, &raw); err != nil {
		return nil, err
	}
	req, err := ep.parse(raw, ep.stream)
	if err != nil {
		return nil, err
	}
	return req, nil
}

// formToJSON is a multipart/form-data body as the JSON object it encodes:
// each field a key, its value JSON when it parses as JSON, else a string.
func formToJSON(r *http.Request) ([]byte, error) {
	if err := r.ParseMultipartForm(maxRequestBytes); err != nil {
		return nil, err
	}
	defer r.MultipartForm.RemoveAll()
	obj := make(map[string]json.RawMessage, len(r.MultipartForm.Value))
	for k, vs := range r.MultipartForm.Value {
		v := vs[len(vs)-1]
		if json.Valid([]byte(v)) {
			obj[k] = json.RawMessage(v)
			continue
		}
		s, _ := json.Marshal(v)
		obj[k] = s
	}
	return json.Marshal(obj)
}

// whole is OpenAI's non-streaming reply.
func (c *chunker) whole(g *generation) any {
	type message struct {
		Role             string `json:"role"`
		Content          string `json:"content"`
		ReasoningContent string `json:"reasoning_content,omitempty"`
	}
	type choice struct {
		Index        int      `json:"index"`
		Message      *message `json:"message,omitempty"`
		Text         *string  `json:"text,omitempty"`
		Logprobs     any      `json:"logprobs"`
		FinishReason string   `json:"finish_reason"`
	}
	ch := choice{FinishReason: g.finish}
	if g.ep.chat {
		ch.Message = &message{Role: "assistant", Content: g.text(g.reasoning, g.tokens), ReasoningContent: g.text(0, g.reasoning)}
	} else {
		text := g.text(0, g.tokens)
		ch.Text = &text
	}
	var m *specMetrics
	if g.spec != nil {
		m = &specMetrics{SpeculativeDecoding: g.spec.encode()}
	}
	return struct {
		ID      string       `json:"id"`
		Object  string       `json:"object"`
		Created int64        `json:"created"`
		Model   string       `json:"model"`
		Choices []choice     `json:"choices"`
		Usage   usage        `json:"usage"`
		Metrics *specMetrics `json:"metrics,omitempty"`
	}{g.id, g.ep.object, g.created, g.model, []choice{ch}, g.usage, m}
}

// sseFrame is one SSE event: an optional name and a JSON data line.
func sseFrame(name string, v any) []byte {
	data, _ := json.Marshal(v) // the mock's own values always encode
	var b []byte
	if name != "" {
		b = append(append(append(b, "event: "...), name...), '\n')
	}
	b = append(append(append(b, "data: "...), data...), "\n\n"...)
	return b
}
