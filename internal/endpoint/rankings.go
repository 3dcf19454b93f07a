package endpoint

import (
	"encoding/json"
	"fmt"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// rankingsBody is the body of a rankings request, per API:
// nim_rankings {"model", "query": {"text"}, "passages": [{"text"}]},
// hf_tei_rankings {"query", "texts"}, cohere_rankings {"model", "query",
// "documents"}.
func rankingsBody(req *Request) map[string]any {
	m := make(map[string]any, 3+len(req.Extra)+len(req.TurnExtra))
	passages := req.Passages
	if passages == nil {
		passages = []string{}
	}
	switch req.EndpointType {
	case plan.EndpointNIMRankings:
		m["model"] = req.Model
		m["query"] = map[string]string{"text": req.Query}
		ps := make([]map[string]string, len(passages))
		for i, p := range passages {
			ps[i] = map[string]string{"text": p}
		}
		m["passages"] = ps
	case plan.EndpointHFTEIRankings:
		m["query"] = req.Query
		m["texts"] = passages
	default:
		m["model"] = req.Model
		m["query"] = req.Query
		m["documents"] = passages
	}
	return m
}

// rankingsFormat reads a rankings reply: NIM {"rankings": [...]}, TEI a
// bare list (or {"results": [...]}), Cohere {"results": [...]}; each
// result an object with an integer index within the passages sent (each
// once) and a finite numeric score. An empty list is not an answer.
type rankingsFormat struct {
	typ      string
	passages int // the passages sent; -1 when not known (a payload sent as it is)
}

func (rankingsFormat) label() string { return "rankings" }

func (rankingsFormat) stream() streamDecoder { return nonStreaming{} }

func (f rankingsFormat) whole(b []byte, status int) (piece, string) {
	if e := wholeError(b, status); e != nil {
		return piece{err: e}, ""
	}
	var list []json.RawMessage
	var v struct {
		Rankings []json.RawMessage `json:"rankings"`
		Results  []json.RawMessage `json:"results"`
		Usage    *wireUsage        `json:"usage"`
	}
	switch {
	case b[0] == '[' && f.typ == plan.EndpointHFTEIRankings:
		if json.Unmarshal(b, &list) != nil {
			return piece{}, "the body is not a JSON list"
		}
	case b[0] == '{' && json.Unmarshal(b, &v) == nil:
		list = v.Results
		if f.typ == plan.EndpointNIMRankings {
			list = v.Rankings
		}
	case b[0] == '{':
		return piece{}, decodeObject(b, &v) // why v did not decode
	default:
		return piece{}, "the body is not a JSON object"
	}
	if len(list) == 0 {
		return piece{}, "the JSON body has no rankings"
	}
	idx := indexSet{n: f.passages, what: "passages"}
	for i, r := range list {
		if why := f.result(r, &idx); why != "" {
			return piece{}, fmt.Sprintf("result %d %s", i, why)
		}
	}
	return piece{usage: promptUsage(v.Usage)}, ""
}

// scoreNames are the score fields of each rankings API, in the order
// read: NIM's logit; TEI's score (or relevance_score, as vLLM's /rerank
// answers); Cohere's relevance_score.
var scoreNames = map[string][]string{
	plan.EndpointNIMRankings:    {"logit"},
	plan.EndpointHFTEIRankings:  {"score", "relevance_score"},
	plan.EndpointCohereRankings: {"relevance_score"},
}

// result checks one ranking: an object, its index, its score.
func (f rankingsFormat) result(r json.RawMessage, idx *indexSet) string {
	var x map[string]json.RawMessage
	if json.Unmarshal(r, &x) != nil || x == nil {
		return "is not an object with an index"
	}
	if why := idx.add(x["index"]); why != "" {
		return why
	}
	names := scoreNames[f.typ]
	for _, name := range names {
		s, ok := x[name]
		if !ok {
			continue
		}
		if !isFiniteNumber(s) {
			return fmt.Sprintf("%s %s is not a finite number", name, shortValue(string(s)))
		}
		return ""
	}
	return fmt.Sprintf("has no %s score", names[0])
}

// isFiniteNumber reports whether raw is a JSON number within float64.
func isFiniteNumber(raw json.RawMessage) bool {
	return len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') && finiteLiteral(raw)
}
