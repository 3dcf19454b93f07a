package endpoint

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aiperf-go/aiperf/internal/media"
)

// imageRetrievalBody is image_retrieval's body, AIPerf's (NIM's /v1/infer):
// {"input": [{"type": "image_url", "url": ...}]}, one per image of the
// turn, the extras merged over it.
func imageRetrievalBody(req *Request) (map[string]any, error) {
	var input []any
	if req.parts == nil {
		req.parts = &parts{}
	}
	for _, it := range req.Media {
		if it.Kind != media.Image {
			continue
		}
		input = append(input, map[string]any{"type": "image_url", "url": req.parts.mark(it)})
	}
	if len(input) == 0 {
		return nil, errors.New("build request body: image_retrieval needs at least one image, and this turn has none")
	}
	m := make(map[string]any, 1+len(req.Extra)+len(req.TurnExtra))
	m["input"] = input
	return m, nil
}

// countImages is the images imageRetrievalBody sends.
func countImages(req *Request) int {
	n := 0
	for _, it := range req.Media {
		if it.Kind == media.Image {
			n++
		}
	}
	return n
}

// retrievalFormat reads NIM's object-detection reply: a non-empty data
// list of objects, each with an integer index within the images sent
// (each once).
type retrievalFormat struct {
	images int // the images sent; -1 when not known (a payload sent as it is)
}

func (retrievalFormat) label() string { return "image retrieval" }

func (retrievalFormat) stream() streamDecoder { return nonStreaming{} }

func (f retrievalFormat) whole(b []byte, status int) (piece, string) {
	if e := wholeError(b, status); e != nil {
		return piece{err: e}, ""
	}
	var v struct {
		Data []json.RawMessage `json:"data"`
	}
	if why := decodeObject(b, &v); why != "" {
		return piece{}, why
	}
	if len(v.Data) == 0 {
		return piece{}, "the JSON body has no data"
	}
	idx := indexSet{n: f.images, what: "images"}
	for i, d := range v.Data {
		var x struct {
			Index json.RawMessage `json:"index"`
		}
		if d[0] != '{' || json.Unmarshal(d, &x) != nil {
			return piece{}, fmt.Sprintf("data[%d] is not an object (%s)", i, shortValue(string(d)))
		}
		if why := idx.add(x.Index); why != "" {
			return piece{}, fmt.Sprintf("data[%d] %s", i, why)
		}
	}
	return piece{}, ""
}

// solidoFilters are the filters AIPerf sends to SOLIDO.
var solidoFilters = map[string]string{"family": "Solido", "tool": "SDE"}

// solidoBody is solido_rag's body, AIPerf's: the turn's texts as "query",
// its default filters and the model as "inference_model".
func solidoBody(req *Request) map[string]any {
	m := make(map[string]any, 3+len(req.Extra)+len(req.TurnExtra))
	query := []string{}
	if req.Prompt != "" {
		query = append(query, req.Prompt)
	}
	m["query"], m["filters"], m["inference_model"] = query, solidoFilters, req.Model
	return m
}

// solidoFormat reads SOLIDO's reply: its generated "content" (and its
// "sources").
type solidoFormat struct{}

func (solidoFormat) label() string { return "SOLIDO RAG" }

func (solidoFormat) stream() streamDecoder { return nonStreaming{} }

func (solidoFormat) whole(b []byte, status int) (piece, string) {
	if e := wholeError(b, status); e != nil {
		return piece{err: e}, ""
	}
	var v struct {
		Content *string `json:"content"`
	}
	if why := decodeObject(b, &v); why != "" {
		return piece{}, why
	}
	if v.Content == nil || *v.Content == "" {
		return piece{}, fmt.Sprintf("no %q in the reply", "content")
	}
	return piece{text: *v.Content}, ""
}
