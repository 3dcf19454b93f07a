package mock

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// The APIs that generate nothing: embeddings (OpenAI, NIM, vLLM's chat
// embeddings) and rankings (NIM, TEI, Cohere). A request is prefilled (its
// reply is due after --ttft plus --prefill-us-per-token per uncached prompt
// token, under the same slots and prefix cache as generations), its prompt
// tokens count in vllm:prompt_tokens_total, and the reply reports them.
const (
	apiEmbeddings = iota
	apiNIMRankings
	apiTEIRankings
	apiCohereRankings
)

// encoderRequest is the union of the request shapes read.
type encoderRequest struct {
	Model    string          `json:"model"`
	Input    json.RawMessage `json:"input"`
	Messages []chatMessage   `json:"messages"`
	Query    json.RawMessage `json:"query"`
	Passages []struct {
		Text string `json:"text"`
	} `json:"passages"`
	Texts     []string `json:"texts"`
	Documents []string `json:"documents"`
}

// embeddingDims is the length of the mock's embedding vectors.
const embeddingDims = 8

// encoder serves one embeddings or rankings route.
func (s *Server) encoder(api int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		arrival := time.Now()
		x := s.beginRequest(r)
		defer x.end()
		if !s.admitKey(w, r, x) {
			return
		}
		var req encoderRequest
		if err := decodeBody(http.MaxBytesReader(w, r.Body, maxRequestBytes), &req); err != nil {
			x.fail(w, requestStatus(err), "invalid_request_error", err.Error())
			return
		}
		segs, items, err := s.encoderSegments(api, &req)
		if err != nil {
			x.fail(w, http.StatusBadRequest, "invalid_request_error", err.Error())
			return
		}
		prompt := 0
		for _, sg := range segs {
			prompt += len(sg.ids)
		}
		g := &generation{ep: endpoint{idPrefix: "emb-"}, model: req.Model, finish: "stop",
			blocks: newBlockHasher(s.blockSeed, s.blockSize, prompt),
			usage:  usage{PromptTokens: prompt, TotalTokens: prompt}}
		for _, sg := range segs {
			g.blocks.add(sg)
		}
		if g.model == "" {
			g.model = s.cfg.Model
		}
		s.prefillOnly(w, r, x, g, arrival, nil, func() any { return encoderReply(api, g, items) })
	}
}

// prefillOnly serves a request that generates no tokens (embeddings,
// rankings, images): an injected error, else a generation slot, the
// prompt's prefill, then work (nil: none; false if the client went away)
// and the reply.
func (s *Server) prefillOnly(w http.ResponseWriter, r *http.Request, x *exchange, g *generation, arrival time.Time,
	work func() bool, reply func() any) {
	if s.injectError() {
		x.fail(w, http.StatusInternalServerError, "InternalServerError", "injected by --error-rate")
		return
	}
	x.status = http.StatusOK
	f := s.admit(r.Context(), x, g, arrival)
	if f == nil {
		return
	}
	defer f.finish()
	if !f.pacer.wait(r.Context(), 0) || (work != nil && !work()) {
		x.status = statusClientGone
		return
	}
	s.metrics.promptTokens.Add(uint64(g.usage.PromptTokens))
	f.complete = true
	x.end()
	writeJSON(w, http.StatusOK, reply())
}

// encoderSegments returns the request's token segments and how many
// inputs (embeddings) or passages (rankings) it has.
func (s *Server) encoderSegments(api int, req *encoderRequest) ([]segment, int, error) {
	var segs []segment
	var err error
	switch api {
	case apiEmbeddings:
		if len(req.Messages) > 0 { // chat embeddings: one vector
			for i, m := range req.Messages {
				if segs, err = s.rawSegments(m.Content, roleTag(m.Role), segs); err != nil {
					return nil, 0, fmt.Errorf("messages[%d].content: %w", i, err)
				}
			}
			return segs, 1, nil
		}
		if len(req.Input) == 0 {
			return nil, 0, errors.New("input is required")
		}
		if segs, err = s.rawSegments(req.Input, 0, nil); err != nil {
			return nil, 0, fmt.Errorf("input: %w", err)
		}
		return segs, max(1, len(segs)), nil
	}
	var query string
	var passages []string
	switch api {
	case apiNIMRankings:
		var q struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(req.Query, &q) != nil {
			return nil, 0, errors.New(`query must be {"text": …}`)
		}
		query = q.Text
		for _, p := range req.Passages {
			passages = append(passages, p.Text)
		}
	case apiTEIRankings:
		passages = req.Texts
	default:
		passages = req.Documents
	}
	if api != apiNIMRankings && json.Unmarshal(req.Query, &query) != nil {
		return nil, 0, errors.New("query must be a string")
	}
	if query == "" || len(passages) == 0 {
		return nil, 0, errors.New("a query and at least one passage are required")
	}
	segs = append(segs, segment{ids: s.tokens.ids(query)})
	for _, p := range passages {
		segs = append(segs, segment{ids: s.tokens.ids(p)})
	}
	return segs, len(passages), nil
}

// encoderReply is the reply of each API: n embeddings, or n ranked
// passages with descending scores.
func encoderReply(api int, g *generation, n int) any {
	u := map[string]int{"prompt_tokens": g.usage.PromptTokens, "total_tokens": g.usage.PromptTokens}
	switch api {
	case apiEmbeddings:
		data := make([]any, n)
		for i := range data {
			vec := make([]float64, embeddingDims)
			for d := range vec {
				vec[d] = float64((i+d)%7) / 7
			}
			data[i] = map[string]any{"object": "embedding", "index": i, "embedding": vec}
		}
		return map[string]any{"object": "list", "data": data, "model": g.model, "usage": u}
	case apiNIMRankings:
		r := make([]any, n)
		for i := range r {
			r[i] = map[string]any{"index": i, "logit": float64(n - i)}
		}
		return map[string]any{"rankings": r, "usage": u}
	case apiTEIRankings:
		r := make([]any, n)
		for i := range r {
			r[i] = map[string]any{"index": i, "score": 1 / float64(i+1)}
		}
		return r
	}
	r := make([]any, n)
	for i := range r {
		r[i] = map[string]any{"index": i, "relevance_score": 1 / float64(i+1)}
	}
	return map[string]any{"id": "rerank-" + strconv.Itoa(n), "results": r,
		"meta": map[string]any{"billed_units": map[string]int{"search_units": 1}}, "usage": u}
}
