package endpoint

import (
	"encoding/json"
	"maps"
)

// tgiBody is a Hugging Face TGI /generate body: {"inputs", "parameters":
// {"max_new_tokens", …--extra-inputs}}, a turn's extra at the top level.
// The path (/generate or /generate_stream) says whether it streams.
func tgiBody(req *Request) map[string]any {
	params := make(map[string]any, 1+len(req.Extra))
	if req.MaxTokens > 0 {
		params["max_new_tokens"] = req.MaxTokens
	}
	maps.Copy(params, req.Extra)
	m := map[string]any{"inputs": req.Prompt, "parameters": params}
	maps.Copy(m, req.TurnExtra)
	return m
}

// tgiEvent is a /generate_stream event or a /generate reply.
type tgiEvent struct {
	Token *struct {
		Text string `json:"text"`
	} `json:"token"`
	GeneratedText *string         `json:"generated_text"`
	Details       json.RawMessage `json:"details"`
	Error         json.RawMessage `json:"error"`
}

// tgiFormat reads TGI: each stream event's token.text (never the final
// generated_text, which repeats them all), the stream ending with the
// event that carries generated_text; a whole reply's generated_text.
type tgiFormat struct{}

func (tgiFormat) label() string { return "TGI" }

func (tgiFormat) stream() streamDecoder { return tgiStream{} }

func (tgiFormat) whole(b []byte, status int) (piece, string) {
	if e := wholeError(b, status); e != nil {
		return piece{err: e}, ""
	}
	var ev tgiEvent
	switch b[0] {
	case '[':
		var list []tgiEvent
		if err := json.Unmarshal(b, &list); err != nil || len(list) == 0 {
			return piece{}, jsonProblem(err, "the body is not a list of generations")
		}
		ev = list[0]
	case '{':
		if why := decodeObject(b, &ev); why != "" {
			return piece{}, why
		}
	default:
		return piece{}, "the body is not a JSON object"
	}
	if e := errorField(ev.Error, status); e != nil { // a list's first generation's
		return piece{err: e}, ""
	}
	if ev.GeneratedText == nil {
		return piece{}, "the JSON body has no generated_text"
	}
	return piece{text: *ev.GeneratedText}, ""
}

type tgiStream struct{}

func (tgiStream) eofEnds() bool { return false }

func (tgiStream) event(_ string, data []byte, status int) (piece, eventKind) {
	var ev tgiEvent
	if data[0] != '{' || json.Unmarshal(data, &ev) != nil {
		return piece{}, kindMalformed
	}
	if e := errorField(ev.Error, status); e != nil {
		return piece{err: e}, kindChunk
	}
	if ev.Token == nil && ev.GeneratedText == nil {
		return piece{}, kindMalformed
	}
	p := piece{end: ev.GeneratedText != nil}
	if ev.Token != nil {
		p.text = ev.Token.Text
	}
	return p, kindChunk
}
