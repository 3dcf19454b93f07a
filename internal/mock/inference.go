package mock

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// statusClientGone is recorded in request_end when the client went away
// before the reply was complete (nginx's convention).
const statusClientGone = 499

// maxRequestBytes bounds an inference request body.
const maxRequestBytes = 64 << 20

// defaultMaxModelLen is --max-model-len's default: it bounds the tokens a
// reply can hold (a non-streaming one is built whole in memory).
const defaultMaxModelLen = 1 << 20

// endpoint describes one inference route's wire shapes.
type endpoint struct {
	chat        bool
	idPrefix    string
	object      string // non-streaming reply object
	chunkObject string // streaming chunk object
	// parse reads the request into OpenAI terms (nil: it is OpenAI's);
	// wire writes the reply (nil: OpenAI's). See apis.go.
	parse func(body []byte, streamPath bool) (*completionRequest, error)
	wire  func(includeUsage bool) tokenWire
	// stream: the route always streams (TGI's /generate_stream).
	stream bool
	// errorReply writes the route's reply to a request it refuses (nil:
	// writeError, OpenAI's shape).
	errorReply func(w http.ResponseWriter, status int, typ, msg string)
}

var (
	chatEndpoint        = endpoint{chat: true, idPrefix: "chatcmpl-", object: "chat.completion", chunkObject: "chat.completion.chunk"}
	completionsEndpoint = endpoint{idPrefix: "cmpl-", object: "text_completion", chunkObject: "text_completion"}
)

// completionRequest is the part of an OpenAI chat or completions request the
// mock reads.
type completionRequest struct {
	Model               string          `json:"model"`
	Messages            []chatMessage   `json:"messages"`
	Prompt              json.RawMessage `json:"prompt"`
	MaxTokens           *intParam       `json:"max_tokens"`
	MaxCompletionTokens *intParam       `json:"max_completion_tokens"`
	MinTokens           *intParam       `json:"min_tokens"` // vLLM's extra parameter
	N                   *intParam       `json:"n"`
	// Logprobs (chat: a boolean; completions: a count) and TopLogprobs
	// ask for log probabilities, which the mock does not compute: refused.
	Logprobs      json.RawMessage `json:"logprobs"`
	TopLogprobs   *intParam       `json:"top_logprobs"`
	Stream        bool            `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
		// ContinuousUsageStats asks for the cumulative usage on every
		// chunk, as vLLM: honoured with IncludeUsage (chunkusage.go).
		ContinuousUsageStats bool `json:"continuous_usage_stats"`
	} `json:"stream_options"`
}

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// usage is OpenAI's token accounting. PromptDetails is absent under
// --no-cache-report, like vLLM without --enable-prompt-tokens-details.
type usage struct {
	PromptTokens     int            `json:"prompt_tokens"`
	CompletionTokens int            `json:"completion_tokens"`
	TotalTokens      int            `json:"total_tokens"`
	PromptDetails    *promptDetails `json:"prompt_tokens_details,omitempty"`
	Details          *usageDetails  `json:"completion_tokens_details,omitempty"`
}

type promptDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

type usageDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

// generation is what one request produces.
type generation struct {
	ep        endpoint
	id        string
	created   int64
	model     string
	tokens    int // output tokens, one per chunk but the first (first)
	first     int // the tokens the first content chunk carries (--first-chunk-tokens), at least 1
	reasoning int // the first `reasoning` tokens are reasoning_content (chat only)
	finish    string
	blocks    *blockHasher // the prompt's block hashes, then the reply's
	usage     usage
	spec      *specDecoding // vLLM's metrics.speculative_decoding (--spec-decode-stats), nil without
}

// text returns output tokens [from, to) concatenated.
func (g *generation) text(from, to int) string {
	var b strings.Builder
	for k := from; k < to; k++ {
		b.WriteString(word(k))
	}
	return b.String()
}

// exchange tracks one inference request for the event log.
type exchange struct {
	s       *Server
	path    string
	headers []string
	status  int
	ended   bool
}

// beginRequest counts an inference request and records its request_start.
func (s *Server) beginRequest(r *http.Request) *exchange {
	x := &exchange{s: s, path: r.URL.Path, headers: headerNames(r.Header)}
	ev := Event{Kind: EventRequestStart, Path: x.path, HeaderNames: x.headers, TNs: time.Since(s.start).Nanoseconds()}
	s.ctl.mu.Lock()
	s.ctl.state.InferenceRequests++
	s.appendLocked(ev)
	s.ctl.mu.Unlock()
	return x
}

// end records request_end once. Handlers call it just before writing their
// final bytes, so anything a client does after reading the whole reply is
// logged after it.
func (x *exchange) end() {
	if x.ended {
		return
	}
	x.ended = true
	x.s.record(Event{Kind: EventRequestEnd, Path: x.path, HeaderNames: x.headers, Status: x.status})
}

// fail ends the exchange with an OpenAI-shaped error reply.
func (x *exchange) fail(w http.ResponseWriter, status int, typ, msg string) {
	x.status = status
	x.end()
	writeError(w, status, typ, msg)
}

// reject ends the exchange with the route's error reply to a request it
// refuses.
func (x *exchange) reject(w http.ResponseWriter, ep endpoint, err error) {
	if ep.errorReply == nil {
		x.fail(w, requestStatus(err), "invalid_request_error", err.Error())
		return
	}
	x.status = requestStatus(err)
	x.end()
	ep.errorReply(w, x.status, "invalid_request_error", err.Error())
}

// inference serves one inference route.
func (s *Server) inference(ep endpoint) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		arrival := time.Now()
		x := s.beginRequest(r)
		defer x.end()
		if !s.admitKey(w, r, x) {
			return
		}
		req, err := readRequest(w, r, ep)
		if err != nil {
			x.reject(w, ep, err)
			return
		}
		g, err := s.plan(ep, req)
		if err != nil {
			x.reject(w, ep, err)
			return
		}
		if s.injectError() {
			x.fail(w, http.StatusInternalServerError, "InternalServerError", "injected by --error-rate")
			return
		}
		x.status = http.StatusOK
		so := req.StreamOptions
		wire := newWire(ep, so != nil && so.IncludeUsage, so != nil && so.ContinuousUsageStats)
		defer wire.release()
		if req.Stream {
			s.stream(r.Context(), w, x, g, arrival, wire)
		} else {
			s.respond(r.Context(), w, x, g, arrival, wire)
		}
	}
}

// injectError draws whether this request fails under --error-rate.
func (s *Server) injectError() bool {
	if s.cfg.ErrorRate <= 0 {
		return false
	}
	s.rngMu.Lock()
	defer s.rngMu.Unlock()
	return s.rng.Float64()*100 < s.cfg.ErrorRate
}

// drawLength draws an output length between 0.8× and 1.2× the prompt's
// token count (at least 1), as AIPerf's mock does without max_tokens.
func (s *Server) drawLength(promptTokens int) int {
	s.rngMu.Lock()
	f := 0.8 + 0.4*s.rng.Float64()
	s.rngMu.Unlock()
	return max(1, int(math.Round(f*float64(promptTokens))))
}

// plan decides what a request produces. max_completion_tokens wins over
// max_tokens when both are set (vLLM's rule). Without either, the output
// length is drawn (drawLength) and stops at the context limit; min_tokens
// raises it to at least that many, as vLLM generates min_tokens before it
// lets the model stop. The checks and their messages are vLLM's.
func (s *Server) plan(ep endpoint, req *completionRequest) (*generation, error) {
	limit := req.MaxCompletionTokens
	if limit == nil {
		limit = req.MaxTokens
	}
	if limit != nil && *limit < 1 {
		return nil, vllmError(fmt.Sprintf("max_tokens must be at least 1, got %d.", *limit))
	}
	minTokens := 0
	if req.MinTokens != nil {
		if minTokens = int(*req.MinTokens); minTokens < 0 {
			return nil, vllmError(fmt.Sprintf("min_tokens must be greater than or equal to 0, got %d.", minTokens))
		}
	}
	if limit != nil && minTokens > int(*limit) {
		return nil, vllmError(fmt.Sprintf("min_tokens must be less than or equal to max_tokens=%d, got %d.", *limit, minTokens))
	}
	if req.N != nil && *req.N != 1 {
		if *req.N < 1 {
			return nil, vllmError(fmt.Sprintf("n must be at least 1, got %d.", *req.N))
		}
		return nil, fmt.Errorf("n must be 1: the mock returns one choice per request, got n=%d", *req.N)
	}
	if err := checkLogprobs(req); err != nil {
		return nil, err
	}
	segs, prompt, err := s.promptSegments(ep, req)
	if err != nil {
		return nil, err
	}
	g := &generation{ep: ep, model: req.Model, created: time.Now().Unix(), finish: "stop",
		blocks: newBlockHasher(s.blockSeed, s.blockSize, prompt)}
	for _, sg := range segs {
		g.blocks.add(sg)
	}
	if g.model == "" {
		g.model = s.cfg.Model
	}
	g.id = ep.idPrefix + strconv.FormatUint(s.nextID.Add(1), 16)
	room := s.cfg.MaxModelLen - prompt
	switch {
	case room < 1:
		return nil, vllmError(fmt.Sprintf("This model's maximum context length is %d tokens. However, your request has %d input tokens. Please reduce the length of the input messages.",
			s.cfg.MaxModelLen, prompt))
	case limit != nil && int(*limit) > room:
		return nil, fmt.Errorf("'max_tokens' or 'max_completion_tokens' is too large: %d. This model's maximum context length is %d tokens and your request has %d input tokens (%d > %d - %d)",
			*limit, s.cfg.MaxModelLen, prompt, *limit, s.cfg.MaxModelLen, prompt)
	case limit == nil && minTokens > room: // vLLM's max_tokens is then the room left
		return nil, vllmError(fmt.Sprintf("min_tokens must be less than or equal to max_tokens=%d, got %d.", room, minTokens))
	case limit != nil:
		g.tokens, g.finish = int(*limit), "length"
	default:
		g.tokens = max(s.drawLength(prompt), minTokens)
		if g.tokens >= room {
			g.tokens, g.finish = room, "length"
		}
	}
	if ep.chat && isReasoningModel(g.model) {
		g.reasoning = g.tokens / 4
	}
	g.usage = usage{PromptTokens: prompt, CompletionTokens: g.tokens, TotalTokens: prompt + g.tokens}
	if g.reasoning > 0 {
		g.usage.Details = &usageDetails{ReasoningTokens: g.reasoning}
	}
	if s.cfg.SpecDecodeStats && ep.wire == nil {
		g.spec = newSpecDecoding(g.tokens)
	}
	g.first = s.firstChunk(ep, g)
	return g, nil
}

// isReasoningModel reports whether model answers with reasoning_content
// (names containing "qwen" or "gpt-oss", as in AIPerf's mock).
func isReasoningModel(model string) bool {
	m := strings.ToLower(model)
	return strings.Contains(m, "qwen") || strings.Contains(m, "gpt-oss")
}

// respond writes a non-streaming reply once all tokens are due, after a
// generation slot.
func (s *Server) respond(ctx context.Context, w http.ResponseWriter, x *exchange, g *generation, arrival time.Time, wire tokenWire) {
	f := s.admit(ctx, x, g, arrival)
	if f == nil {
		return
	}
	defer f.finish()
	if !f.pacer.wait(ctx, 0) {
		x.status = statusClientGone
		return
	}
	f.tokens(time.Now(), 1)
	if !f.pacer.wait(ctx, g.tokens) {
		x.status = statusClientGone
		return
	}
	f.tokens(time.Now(), g.tokens-1)
	f.freeSlot()
	f.complete = true
	x.end()
	writeJSON(w, http.StatusOK, wire.whole(g))
}

// stream writes an SSE reply the way vLLM does: the headers at once; once
// the request has a generation slot and its first token is due, the wire's
// opening frames (chat: a role-only chunk) and then the token; each later
// token at its due time; the wire's closing frames (the usage chunk when
// asked for); and its end marker ([DONE]). Each chunk but the end marker is
// flushed on its own.
func (s *Server) stream(ctx context.Context, w http.ResponseWriter, x *exchange, g *generation, arrival time.Time, wire tokenWire) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	wire.start(g)
	send := func(chunk []byte) bool {
		_, err := w.Write(chunk)
		if err == nil {
			err = rc.Flush()
		}
		if err != nil {
			x.status = statusClientGone
		}
		return err == nil
	}
	if !send(nil) { // flushes the headers now
		return
	}
	f := s.admit(ctx, x, g, arrival)
	if f == nil {
		return
	}
	defer f.finish()
	for k := 0; k < g.tokens; k = g.chunkEnd(k) {
		if !f.pacer.wait(ctx, g.chunkEnd(k)-1) { // a chunk goes out when its last token is due
			x.status = statusClientGone
			return
		}
		released := time.Now()
		if k == 0 {
			if open := wire.open(g); open != nil && !send(open) {
				return
			}
		}
		if !send(wire.token(g, k)) {
			return
		}
		f.flushed(released, time.Now(), g.chunkEnd(k)-k)
	}
	f.freeSlot()
	if tail := wire.tail(g); tail != nil && !send(tail) {
		return
	}
	f.complete = true
	x.end()
	// The end marker is left for net/http to flush with the end of the
	// response after the handler returns, so no client can see the end of
	// a stream before its request_end event and access-log line exist.
	_, _ = w.Write(wire.end())
}

var doneFrame = []byte("data: [DONE]\n\n")

// chunker is OpenAI's tokenWire: it builds SSE chunks by appending to
// reused buffers, a per-request prefix (`data: {"id":…,"choices":[`) plus
// the chunk's tail.
type chunker struct {
	prefix       []byte
	buf          []byte
	includeUsage bool
	continuous   bool // usage on every chunk (stream_options.continuous_usage_stats)
}

var chunkers = sync.Pool{New: func() any {
	return &chunker{prefix: make([]byte, 0, 256), buf: make([]byte, 0, 512)}
}}

// start builds the prefix shared by all of g's chunks.
func (c *chunker) start(g *generation) {
	model, _ := json.Marshal(g.model) // a string always encodes
	b := append(c.prefix[:0], `data: {"id":"`...)
	b = append(b, g.id...)
	b = append(b, `","object":"`...)
	b = append(b, g.ep.chunkObject...)
	b = append(b, `","created":`...)
	b = strconv.AppendInt(b, g.created, 10)
	b = append(b, `,"model":`...)
	b = append(b, model...)
	b = append(b, `,"choices":[`...)
	c.prefix = b
}

func (c *chunker) release() { chunkers.Put(c) }

func (c *chunker) end() []byte { return doneFrame }

// open is vLLM's first chat chunk: the assistant role and no text.
func (c *chunker) open(g *generation) []byte {
	if !g.ep.chat {
		return nil
	}
	b := append(append(c.buf[:0], c.prefix...),
		`{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]`...)
	c.buf = c.closeChunk(b, g, 0)
	return c.buf
}

// token is the chunk carrying output token k, and the tokens after it up
// to g.chunkEnd(k).
func (c *chunker) token(g *generation, k int) []byte {
	end := g.chunkEnd(k)
	b := append(c.buf[:0], c.prefix...)
	switch {
	case !g.ep.chat:
		b = append(b, `{"index":0,"text":"`...)
	case k < g.reasoning:
		b = append(b, `{"index":0,"delta":{"reasoning_content":"`...)
	default:
		b = append(b, `{"index":0,"delta":{"content":"`...)
	}
	for j := k; j < end; j++ {
		b = append(b, word(j)...)
	}
	if g.ep.chat {
		b = append(b, `"},"logprobs":null,"finish_reason":`...)
	} else {
		b = append(b, `","logprobs":null,"finish_reason":`...)
	}
	if end == g.tokens {
		b = append(append(append(b, '"'), g.finish...), '"')
	} else {
		b = append(b, "null"...)
	}
	c.buf = c.closeChunk(append(b, "}]"...), g, end)
	return c.buf
}

// tail is the final chunk when usage was asked for: no choices, the
// request's usage.
func (c *chunker) tail(g *generation) []byte {
	if !c.includeUsage {
		return nil
	}
	u, _ := json.Marshal(g.usage) // plain ints always encode
	b := append(c.buf[:0], c.prefix...)
	b = append(b, `],"usage":`...)
	b = append(b, u...)
	if g.spec != nil {
		b = append(append(append(b, `,"metrics":{"speculative_decoding":`...), g.spec.encode()...), '}')
	}
	c.buf = append(b, "}\n\n"...)
	return c.buf
}
