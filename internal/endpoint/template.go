package endpoint

import (
	"encoding/json"
	"fmt"
	"maps"

	"github.com/aiperf-go/aiperf/internal/payload"
)

// templateBody renders a template endpoint request's body from its
// payload_template, then merges the extras over it.
func templateBody(req *Request) ([]byte, error) {
	if req.Template == nil {
		return nil, fmt.Errorf("build request body: --endpoint-type template needs --extra-inputs payload_template")
	}
	texts := req.Inputs
	if texts == nil {
		texts = []string{req.Prompt}
	}
	b, err := req.Template.Render(payload.Vars{Model: req.Model, Texts: texts, MaxTokens: req.MaxTokens,
		Stream: req.Streaming, Role: "user", Query: req.Query, Passages: req.Passages})
	if err != nil {
		return nil, fmt.Errorf("build request body: payload_template %w", err)
	}
	if len(req.Extra) == 0 && len(req.TurnExtra) == 0 {
		return b, nil
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("build request body: %w", err)
	}
	maps.Copy(m, req.Extra)
	maps.Copy(m, req.TurnExtra)
	return encode(m)
}

// detectFormat reads the replies of template and raw endpoints, whose API
// aiperf does not know: the text at response_field when it is set, else
// the first of the usual places (an embeddings or rankings list; text,
// content, response, output, result, generated_text; an OpenAI choice).
// A stream's events are read the same way and may end without a marker;
// an error object (wrapped in "error", or vLLM's with "object": "error")
// and an "event: error" frame fail the request.
// Embeddings found in a whole reply must be valid (detectvec.go).
type detectFormat struct{ field *payload.Field }

func (detectFormat) label() string { return "recognised" }

func (f detectFormat) stream() streamDecoder { return detectStream{f} }

func (f detectFormat) whole(b []byte, status int) (piece, string) {
	v, err := payload.Decode(b)
	if err != nil {
		if isHTML(b) { // a gateway's page, whatever its Content-Type
			return piece{}, "the reply is an HTML page"
		}
		return piece{text: string(b)}, "" // a plain-text reply is its text (AIPerf's)
	}
	p, ok := f.detect(v, status)
	if !ok {
		if f.field != nil {
			return piece{}, fmt.Sprintf("response_field %s matched nothing in the reply", f.field)
		}
		return piece{}, "no generated text, embeddings or rankings found in the reply (set --extra-inputs response_field:<path>)"
	}
	if p.err == nil && f.field == nil {
		if why := f.checkEmbeddings(v); why != "" {
			return piece{}, why
		}
	}
	return p, ""
}

// detect finds the reply's error, usage and output.
func (f detectFormat) detect(v any, status int) (piece, bool) {
	obj, _ := v.(map[string]any)
	var p piece
	if obj != nil {
		if e, ok := obj["error"]; ok && e != nil {
			raw, _ := json.Marshal(e)
			return piece{err: errorField(raw, status)}, true
		}
		if obj["object"] == "error" { // vLLM's ErrorResponse, unwrapped
			raw, _ := json.Marshal(obj)
			return piece{err: flatError(&wireChunk{errorObject: true}, raw, status)}, true
		}
		if u, ok := obj["usage"].(map[string]any); ok {
			raw, _ := json.Marshal(u)
			var w wireUsage
			if json.Unmarshal(raw, &w) == nil && w.PromptTokens.Set {
				p.usage = promptUsage(&w)
			}
		}
	}
	if f.field != nil {
		x, ok := f.field.Find(v)
		if s, isText := x.(string); ok && isText {
			p.text = s
		}
		return p, ok
	}
	for _, path := range detectPaths {
		x, ok := path.Find(v)
		if !ok {
			continue
		}
		if s, isText := x.(string); isText {
			p.text = s
		}
		return p, true
	}
	return p, p.usage != nil
}

// detectPaths are where replies usually hold their output, in the order
// AIPerf's auto-detection tries them: embeddings, rankings, then text.
var detectPaths = func() []*payload.Field {
	var out []*payload.Field
	for _, s := range []string{"data[0].embedding", "embeddings", "embedding", "rankings", "results",
		"choices[0].delta.content", "choices[0].message.content", "choices[0].text",
		"text", "content", "response", "output", "result", "generated_text", "token.text"} {
		f, err := payload.ParseField(s)
		if err != nil {
			panic(err)
		}
		out = append(out, f)
	}
	return out
}()

type detectStream struct{ f detectFormat }

func (detectStream) eofEnds() bool { return true }

func (s detectStream) event(name string, data []byte, status int) (piece, eventKind) {
	if name == "error" {
		return piece{err: eventError(data, status)}, kindChunk
	}
	if isDone(data) {
		return piece{end: true}, kindEnd
	}
	v, err := payload.Decode(data)
	if err != nil {
		return piece{text: string(data)}, kindChunk
	}
	p, _ := s.f.detect(v, status)
	return p, kindChunk
}
