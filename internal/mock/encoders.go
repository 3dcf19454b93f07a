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
	// The passages are decoded once their count is known to be within
	// maxEncoderInputs (encoderPassages).
	Passages  json.RawMessage `json:"passages"`
	Texts     json.RawMessage `json:"texts"`
	Documents json.RawMessage `json:"documents"`
}

// embeddingDims is the length of the mock's embedding vectors.
const embeddingDims = 8

// maxEncoderInputs bounds the inputs of an embeddings request and the
// passages of a rankings request: OpenAI's limit on an embeddings input
// list. A request with more is refused with 400 before any is tokenized.
const maxEncoderInputs = 2048

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
		prompt := segmentTokens(segs)
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
// inputs (embeddings) or passages (rankings) it has. Each input, and each
// passage with the query (a cross-encoder reads them as one sequence), is
// checked against --max-model-len as vLLM checks a pooling request's.
func (s *Server) encoderSegments(api int, req *encoderRequest) ([]segment, int, error) {
	if api == apiEmbeddings {
		return s.embeddingSegments(req)
	}
	query, passages, err := encoderPassages(api, req)
	if err != nil {
		return nil, 0, err
	}
	segs := make([]segment, 1, 1+len(passages))
	segs[0] = segment{ids: s.tokens.ids(query)}
	for _, p := range passages {
		sg := segment{ids: s.tokens.ids(p)}
		if err := s.checkPoolingLen(len(segs[0].ids) + len(sg.ids)); err != nil {
			return nil, 0, err
		}
		segs = append(segs, sg)
	}
	return segs, len(passages), nil
}

// embeddingSegments is encoderSegments for an embeddings request: chat
// messages (one input), or input (a string or token ids: one input; a
// list of strings or of token-id lists: one input each).
func (s *Server) embeddingSegments(req *encoderRequest) ([]segment, int, error) {
	var segs []segment
	var err error
	if len(req.Messages) > 0 { // chat embeddings: one vector
		for i, m := range req.Messages {
			if segs, err = s.rawSegments(m.Content, roleTag(m.Role), segs); err != nil {
				return nil, 0, fmt.Errorf("messages[%d].content: %w", i, err)
			}
		}
		return segs, 1, s.checkPoolingLen(segmentTokens(segs))
	}
	if len(req.Input) == 0 {
		return nil, 0, errors.New("input is required")
	}
	list := shape(req.Input) == shapeStrings || shape(req.Input) == shapeBatches
	if list {
		if err := checkInputCount("input", req.Input); err != nil {
			return nil, 0, err
		}
	}
	if segs, err = s.rawSegments(req.Input, 0, nil); err != nil {
		return nil, 0, fmt.Errorf("input: %w", err)
	}
	if !list {
		return segs, max(1, len(segs)), s.checkPoolingLen(segmentTokens(segs))
	}
	for _, sg := range segs { // a list's items are a segment each
		if err := s.checkPoolingLen(len(sg.ids)); err != nil {
			return nil, 0, err
		}
	}
	return segs, len(segs), nil
}

// encoderPassages returns a rankings request's query and passages, each
// API's fields decoded once their count is known to be within bounds.
func encoderPassages(api int, req *encoderRequest) (string, []string, error) {
	field, raw := "documents", req.Documents
	switch api {
	case apiNIMRankings:
		field, raw = "passages", req.Passages
	case apiTEIRankings:
		field, raw = "texts", req.Texts
	}
	if err := checkInputCount(field, raw); err != nil {
		return "", nil, err
	}
	var query string
	var passages []string
	if api == apiNIMRankings {
		var q struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(req.Query, &q) != nil {
			return "", nil, errors.New(`query must be {"text": …}`)
		}
		query = q.Text
		var ps []struct {
			Text string `json:"text"`
		}
		if len(raw) > 0 && json.Unmarshal(raw, &ps) != nil {
			return "", nil, errors.New(`passages must be a list of {"text": …}`)
		}
		for _, p := range ps {
			passages = append(passages, p.Text)
		}
	} else {
		if json.Unmarshal(req.Query, &query) != nil {
			return "", nil, errors.New("query must be a string")
		}
		if len(raw) > 0 && json.Unmarshal(raw, &passages) != nil {
			return "", nil, fmt.Errorf("%s must be a list of strings", field)
		}
	}
	if query == "" || len(passages) == 0 {
		return "", nil, errors.New("a query and at least one passage are required")
	}
	return query, passages, nil
}

// checkInputCount refuses a JSON list of more than maxEncoderInputs items,
// reading no further than one item past the bound.
func checkInputCount(field string, raw json.RawMessage) error {
	if listLen(raw, maxEncoderInputs) > maxEncoderInputs {
		return fmt.Errorf("%s holds more than %d items: the mock takes at most %d a request (OpenAI's limit on an embeddings input list)",
			field, maxEncoderInputs, maxEncoderInputs)
	}
	return nil
}

// checkPoolingLen refuses an input of an embeddings or rankings request
// longer than the context length, with vLLM's message (such an input may
// fill the context: nothing is generated after it).
func (s *Server) checkPoolingLen(tokens int) error {
	if tokens <= s.cfg.MaxModelLen {
		return nil
	}
	return vllmError(fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens in the input for embedding generation. Please reduce the length of the input.",
		s.cfg.MaxModelLen, tokens))
}

// segmentTokens is the number of token ids in segs.
func segmentTokens(segs []segment) int {
	n := 0
	for _, sg := range segs {
		n += len(sg.ids)
	}
	return n
}

// encoderReply is the reply of each API: n embeddings, or n ranked
// passages with descending scores. Its items are structs (their fields in
// the order a map's keys are written), and the embeddings share seven
// vectors, so a reply costs a few words an item.
func encoderReply(api int, g *generation, n int) any {
	u := map[string]int{"prompt_tokens": g.usage.PromptTokens, "total_tokens": g.usage.PromptTokens}
	switch api {
	case apiEmbeddings:
		type embedding struct {
			Embedding []float64 `json:"embedding"`
			Index     int       `json:"index"`
			Object    string    `json:"object"`
		}
		var vecs [7][]float64
		for k := range vecs {
			vecs[k] = make([]float64, embeddingDims)
			for d := range vecs[k] {
				vecs[k][d] = float64((k+d)%7) / 7
			}
		}
		data := make([]embedding, n)
		for i := range data {
			data[i] = embedding{Embedding: vecs[i%7], Index: i, Object: "embedding"}
		}
		return map[string]any{"object": "list", "data": data, "model": g.model, "usage": u}
	case apiNIMRankings:
		type ranking struct {
			Index int     `json:"index"`
			Logit float64 `json:"logit"`
		}
		r := make([]ranking, n)
		for i := range r {
			r[i] = ranking{Index: i, Logit: float64(n - i)}
		}
		return map[string]any{"rankings": r, "usage": u}
	case apiTEIRankings:
		type score struct {
			Index int     `json:"index"`
			Score float64 `json:"score"`
		}
		r := make([]score, n)
		for i := range r {
			r[i] = score{Index: i, Score: 1 / float64(i+1)}
		}
		return r
	}
	type result struct {
		Index          int     `json:"index"`
		RelevanceScore float64 `json:"relevance_score"`
	}
	r := make([]result, n)
	for i := range r {
		r[i] = result{Index: i, RelevanceScore: 1 / float64(i+1)}
	}
	return map[string]any{"id": "rerank-" + strconv.Itoa(n), "results": r,
		"meta": map[string]any{"billed_units": map[string]int{"search_units": 1}}, "usage": u}
}
