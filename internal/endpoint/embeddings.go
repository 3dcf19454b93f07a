package endpoint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// embeddingsBody is the body of embeddings and nim_embeddings
// ({"model", "input": [texts]}, never max tokens nor stream) and of
// chat_embeddings (chat messages, vLLM's multimodal embeddings).
func embeddingsBody(req *Request) map[string]any {
	m := make(map[string]any, 2+len(req.Extra)+len(req.TurnExtra))
	m["model"] = req.Model
	if req.EndpointType == plan.EndpointChatEmbeddings {
		m["messages"] = messages(req)
		return m
	}
	inputs := req.Inputs
	if inputs == nil {
		inputs = []string{req.Prompt}
	}
	m["input"] = inputs
	return m
}

// embeddingsFormat reads an OpenAI embeddings list: one non-empty numeric
// vector per input sent (a base64 string when the request asked for
// encoding_format base64), all of one length, their indices covering the
// inputs exactly once; and usage with prompt_tokens (no completion tokens).
type embeddingsFormat struct {
	inputs int  // the inputs sent; -1 when not known (a payload sent as it is)
	base64 bool // the request asked for encoding_format base64
}

func (embeddingsFormat) label() string { return "embeddings" }

func (embeddingsFormat) stream() streamDecoder { return nonStreaming{} }

func (f embeddingsFormat) whole(b []byte, status int) (piece, string) {
	if e := wholeError(b, status); e != nil {
		return piece{err: e}, ""
	}
	var v struct {
		Data []struct {
			Object    string          `json:"object"`
			Index     json.RawMessage `json:"index"`
			Embedding json.RawMessage `json:"embedding"`
		} `json:"data"`
		Usage *wireUsage `json:"usage"`
	}
	if why := decodeObject(b, &v); why != "" {
		return piece{}, why
	}
	if len(v.Data) == 0 {
		return piece{}, "the JSON body has no data"
	}
	if f.inputs >= 0 && len(v.Data) != f.inputs {
		return piece{}, fmt.Sprintf("%d embeddings came back for %d inputs", len(v.Data), f.inputs)
	}
	idx := indexSet{n: f.inputs, what: "inputs"}
	dims := 0
	for i, d := range v.Data {
		if d.Object != "embedding" || len(d.Embedding) == 0 {
			return piece{}, fmt.Sprintf("data[%d] is not an embedding object", i)
		}
		n, why := embeddingDims(d.Embedding, f.base64)
		if why != "" {
			return piece{}, fmt.Sprintf("data[%d].embedding %s", i, why)
		}
		if i > 0 && n != dims {
			return piece{}, fmt.Sprintf("data[%d].embedding has %d dimensions, data[0].embedding %d", i, n, dims)
		}
		dims = n
		index := d.Index
		if len(index) == 0 { // absent: its position
			index = json.RawMessage(strconv.Itoa(i))
		}
		if why := idx.add(index); why != "" {
			return piece{}, fmt.Sprintf("data[%d] %s", i, why)
		}
	}
	return piece{usage: promptUsage(v.Usage)}, ""
}

// asksBase64 reports whether the request asks for base64 embeddings: its
// payload sent as it is, or its extras (the turn's winning over
// --extra-inputs).
func asksBase64(req *Request) bool {
	if len(req.Payload) > 0 {
		if !bytes.Contains(req.Payload, []byte("encoding_format")) { // most payloads: not parsed
			return false
		}
		var p struct {
			EncodingFormat string `json:"encoding_format"`
		}
		return json.Unmarshal(req.Payload, &p) == nil && p.EncodingFormat == "base64"
	}
	v, ok := req.TurnExtra["encoding_format"]
	if !ok {
		v = req.Extra["encoding_format"]
	}
	return v == "base64"
}

// promptUsage converts the usage of an API that generates nothing: its
// completion count is 0 when absent.
func promptUsage(u *wireUsage) *metrics.Usage {
	if u != nil && !u.CompletionTokens.Set {
		u.CompletionTokens = usageCount{Set: true}
	}
	return u.metrics()
}

// errorField is the failure an "error" member reports, nil when it is
// absent or null.
func errorField(raw json.RawMessage, status int) *metrics.Error {
	if len(raw) == 0 || isNull(raw) {
		return nil
	}
	return &metrics.Error{Code: errorCode(raw, status), Type: ErrTypeStream, Message: errorText(raw)}
}

// nonStreaming is the stream decoder of an API that never streams: a
// server that streams anyway is not answering the request.
type nonStreaming struct{}

func (nonStreaming) eofEnds() bool { return false }

func (nonStreaming) event(string, []byte, int) (piece, eventKind) { return piece{}, kindMalformed }
