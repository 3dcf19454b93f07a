package mock

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// NIM image retrieval (/v1/infer: object detection, a list of images in,
// bounding boxes out) and SOLIDO RAG (/rag/api/prompt: a query in, content
// and sources out). Both are prefilled as any other request: the images'
// tokens (ImageTokens, as for chat) or the query's.

// retrieve serves POST /v1/infer.
func (s *Server) retrieve(w http.ResponseWriter, r *http.Request) {
	arrival := time.Now()
	x := s.beginRequest(r)
	defer x.end()
	if !s.admitKey(w, r, x) {
		return
	}
	var req struct {
		Input []struct {
			Type string `json:"type"`
			URL  string `json:"url"`
		} `json:"input"`
	}
	if err := decodeBody(http.MaxBytesReader(w, r.Body, maxRequestBytes), &req); err != nil {
		x.fail(w, requestStatus(err), "invalid_request_error", err.Error())
		return
	}
	if len(req.Input) == 0 {
		x.fail(w, http.StatusBadRequest, "invalid_request_error", "input must list at least one image")
		return
	}
	var segs []segment
	for i, in := range req.Input {
		if in.Type != "image_url" {
			x.fail(w, http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("input[%d]: type %q: expected image_url", i, in.Type))
			return
		}
		ids, err := s.imageIDs(in.URL)
		if err != nil {
			x.fail(w, http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("input[%d]: %v", i, err))
			return
		}
		segs = append(segs, segment{ids: ids})
	}
	g := s.prefillGeneration("infer-", segs)
	data := make([]map[string]any, len(req.Input))
	for i := range data {
		data[i] = map[string]any{"index": i, "bounding_boxes": map[string]any{
			"title": []map[string]float64{{"x_min": 0.1, "y_min": 0.02, "x_max": 0.9, "y_max": 0.06, "confidence": 0.97}}}}
	}
	s.prefillOnly(w, r, x, g, arrival, nil, func() any { return map[string]any{"data": data, "usage": map[string]int{"images": len(data)}} })
}

// solido serves POST /rag/api/prompt: the reply's content is 16 words.
func (s *Server) solido(w http.ResponseWriter, r *http.Request) {
	arrival := time.Now()
	x := s.beginRequest(r)
	defer x.end()
	if !s.admitKey(w, r, x) {
		return
	}
	var req struct {
		Query          []string `json:"query"`
		InferenceModel string   `json:"inference_model"`
	}
	if err := decodeBody(http.MaxBytesReader(w, r.Body, maxRequestBytes), &req); err != nil {
		x.fail(w, requestStatus(err), "invalid_request_error", err.Error())
		return
	}
	if len(req.Query) == 0 {
		x.fail(w, http.StatusBadRequest, "invalid_request_error", errors.New("query must hold at least one text").Error())
		return
	}
	g := s.prefillGeneration("rag-", []segment{{ids: s.tokens.ids(strings.Join(req.Query, "\n"))}})
	content := (&generation{}).text(0, 16)
	s.prefillOnly(w, r, x, g, arrival, nil, func() any {
		return map[string]any{"content": content, "sources": []map[string]string{{"title": "mock source", "url": "http://mock/source"}}}
	})
}

// prefillGeneration is the generation of a request that only prefills
// segs.
func (s *Server) prefillGeneration(prefix string, segs []segment) *generation {
	n := segmentTokens(segs)
	g := &generation{ep: endpoint{idPrefix: prefix}, model: s.cfg.Model, finish: "stop",
		blocks: newBlockHasher(s.blockSeed, s.blockSize, n), usage: usage{PromptTokens: n, TotalTokens: n}}
	for _, sg := range segs {
		g.blocks.add(sg)
	}
	return g
}
