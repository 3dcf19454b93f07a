package endpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/sse"
)

const (
	// defaultMaxConns is the idle pool per host when Options.MaxConns is 0.
	defaultMaxConns = 256
	// ioBufferSize is the transport's read and write buffer.
	ioBufferSize = 32 << 10
	// maxErrorBody bounds how much of a non-2xx body is read for its message.
	maxErrorBody = 64 << 10
	// maxChunkHint caps the Chunks capacity reserved from MaxTokens.
	maxChunkHint = 4096
	// textPerToken is the text capacity reserved per requested token: a
	// token of English is about four bytes.
	textPerToken = 6
)

// Options configure a Client.
type Options struct {
	// MaxConns is the idle connection pool per host; set it to at least the
	// concurrency (default 256). Active connections are never limited, so a
	// request never waits inside the transport for a connection.
	MaxConns int
	// Timeout is the per-request deadline covering connect, send and the
	// whole response (0: none).
	Timeout time.Duration
	// ConnectTimeout bounds establishing a connection (0: 30 s).
	ConnectTimeout time.Duration
	// Headers are sent with every request: --header values, Authorization
	// and User-Agent. Every secret header value is redacted from error messages.
	Headers http.Header
	// Now is the run's monotonic clock in ns since its start (default: since
	// New).
	Now func() int64
	// ConnectionReuse is AIPerf's --connection-reuse-strategy: "" or
	// ReusePooled (one pool for every request), ReuseNever (a new
	// connection per request) or ReuseSticky (a connection per session,
	// closed after its last turn).
	ConnectionReuse string
	// Multipart sends each body as multipart/form-data, a field per key
	// of its JSON object (AIPerf's --request-content-type
	// multipart/form-data; a form endpoint type's bodies always are, its
	// file a file part: formBody); else the JSON itself.
	Multipart bool
	// RxCoalesce is the receive coalescing window (--rx-coalesce-usecs;
	// 0: off): see package rxcoalesce.
	RxCoalesce time.Duration
	// SessionHeader names the header that carries a session's id instead
	// of X-Correlation-ID (AIPerf's --session-header; "": X-Correlation-ID).
	SessionHeader string
	// MaxEventBytes bounds one SSE line or event, and a non-streaming body;
	// a response beyond it fails with ErrTypeTooLarge (0:
	// sse.DefaultMaxEvent).
	MaxEventBytes int
	// Trace times every request's HTTP exchange (Response.HTTP): AIPerf's
	// http_req_* metrics. TraceChunks also keeps each read and write of
	// the connection and its addresses (--export-http-trace). Off, the
	// client does what it does without them: no hook, no counting.
	Trace, TraceChunks bool
	// RequireStreamCompletion is AIPerf's --require-stream-completion: a
	// streamed chat reply must be SSE, hold only chat completion chunks and
	// end with data: [DONE] (or, without it, a finish_reason on every
	// choice seen), with no data after [DONE] (strict.go).
	RequireStreamCompletion bool
	// Sign, when set, signs each request with its final body, right before
	// it is sent (--auth-type sigv4); its error fails the request.
	Sign func(r *http.Request, body []byte) error
	// SageMaker, when set, sends each request as SageMaker Runtime's
	// InvokeEndpoint (streaming: InvokeEndpointWithResponseStream) with
	// its headers (eventstream_sagemaker.go); an event-stream reply is
	// read whatever this says.
	SageMaker *SageMaker
	// Secrets are redacted from error messages besides the secret header
	// values: a URL's secret query values, secret --extra-inputs values
	// (plan.Profile.Secrets), which a server may echo back.
	Secrets []string
}

// Client sends requests over one tuned HTTP/1.1 transport. It is safe for
// concurrent use; make one per run.
type Client struct {
	keep  *http.Client // pooled connections
	fresh *http.Client // a new connection per request, for the retry
	// Options.Headers plus Content-Type, and for streaming requests Accept;
	// shared by all requests and never modified.
	headers, streamHeaders http.Header

	timeout time.Duration
	maxResp int // Options.MaxEventBytes
	now     func() int64
	secrets *plan.Redactor // the secret header values and Options.Secrets, redacted from error messages
	host    string         // a --header Host:… override
	// trace and traceFull are Options.Trace and TraceChunks.
	trace, traceFull bool
	session          string                            // the header of a session's id, canonical
	reuse            string                            // Options.ConnectionReuse
	form             bool                              // Options.Multipart
	rx               time.Duration                     // Options.RxCoalesce
	dial             time.Duration                     // Options.ConnectTimeout
	strict           bool                              // Options.RequireStreamCompletion
	sign             func(*http.Request, []byte) error // Options.Sign
	sagemaker        bool                              // Options.SageMaker set
	drains           *drains                           // bodies left unread, drained in the background
	// sticky holds each session's own client under ReuseSticky, until
	// its last turn.
	stickyMu sync.Mutex
	sticky   map[string]*http.Client
}

// Connection reuse strategies (AIPerf's --connection-reuse-strategy).
const (
	ReusePooled = "pooled"
	ReuseNever  = "never"
	ReuseSticky = "sticky-user-sessions"
)

// New returns a Client.
func New(o Options) *Client {
	if o.MaxConns <= 0 {
		o.MaxConns = defaultMaxConns
	}
	if o.MaxEventBytes <= 0 {
		o.MaxEventBytes = sse.DefaultMaxEvent
	}
	if o.Now == nil {
		start := time.Now()
		o.Now = func() int64 { return int64(time.Since(start)) }
	}
	headers := o.Headers.Clone()
	if headers == nil {
		headers = http.Header{}
	}
	headers.Set("Content-Type", "application/json")
	session := "X-Correlation-Id"
	if o.SessionHeader != "" {
		session = http.CanonicalHeaderKey(o.SessionHeader)
	}
	streaming := headers.Clone()
	streaming.Set("Accept", "text/event-stream")
	if o.SageMaker != nil {
		o.SageMaker.headers(headers, streaming)
	}
	o.Trace = o.Trace || o.TraceChunks
	return &Client{
		keep:          &http.Client{Transport: transport(o.MaxConns, true, o.Trace, o.RxCoalesce, o.ConnectTimeout), CheckRedirect: checkRedirect(o)},
		fresh:         &http.Client{Transport: transport(o.MaxConns, false, o.Trace, o.RxCoalesce, o.ConnectTimeout), CheckRedirect: checkRedirect(o)},
		headers:       headers,
		streamHeaders: streaming,
		timeout:       o.Timeout,
		maxResp:       o.MaxEventBytes,
		now:           o.Now,
		secrets:       plan.NewRedactor(append(plan.HeaderSecrets(headers), o.Secrets...)...),
		host:          headers.Get("Host"),
		trace:         o.Trace,
		traceFull:     o.TraceChunks,
		session:       session,
		reuse:         o.ConnectionReuse,
		form:          o.Multipart,
		rx:            o.RxCoalesce,
		dial:          o.ConnectTimeout,
		strict:        o.RequireStreamCompletion,
		sign:          o.Sign,
		sagemaker:     o.SageMaker != nil,
		sticky:        map[string]*http.Client{},
		drains:        newDrains(o.MaxConns),
	}
}

// Close ends the drains of bodies still held open (counted in HeldOpen)
// and closes idle connections.
func (c *Client) Close() {
	c.drains.end()
	c.keep.CloseIdleConnections()
	c.fresh.CloseIdleConnections()
	c.stickyMu.Lock()
	defer c.stickyMu.Unlock()
	for id, hc := range c.sticky {
		hc.CloseIdleConnections()
		delete(c.sticky, id)
	}
}

// pool is the client that sends req under the connection reuse strategy,
// and whether its connection closes after it: every request's under
// ReuseNever, a session's last turn's under ReuseSticky.
func (c *Client) pool(req *Request) (hc *http.Client, last bool) {
	switch {
	case c.reuse == ReuseNever:
		return c.fresh, true
	case c.reuse != ReuseSticky || req.SessionID == "":
		return c.keep, false
	}
	c.stickyMu.Lock()
	defer c.stickyMu.Unlock()
	hc = c.sticky[req.SessionID]
	if hc == nil {
		hc = &http.Client{Transport: transport(1, true, c.trace, c.rx, c.dial), CheckRedirect: c.keep.CheckRedirect}
		c.sticky[req.SessionID] = hc
	}
	if req.LastTurn {
		delete(c.sticky, req.SessionID)
	}
	return hc, req.LastTurn
}

// readers recycles SSE readers and their buffers across requests.
var readers = sync.Pool{New: func() any { return sse.NewReader(nil, nil) }}

// Do sends req and reads the whole response. It never fails: failures are
// described by Response.Err.
//
// Only a real API response is a success: a 2xx whose body is not an
// OpenAI-shaped response (an HTML page, {}, a stream of unparseable lines or
// of only [DONE]) fails with ErrTypeInvalidResponse. A gzip or deflate body
// is decoded. Do returns as soon as the response is complete ([DONE] read):
// what the server still sends after it is drained in the background, and a
// server that holds the body open costs that connection, not the request
// timeout.
func (c *Client) Do(ctx context.Context, req Request) (out Response) {
	body := req.Body
	if body == nil {
		var err error
		if body, err = Body(req); err != nil {
			return c.failed(err.Error())
		}
	}
	if req.Raw != nil {
		req.Raw.Payload = body
	}
	contentType := ""
	if c.form || plan.SpecOf(req.EndpointType).Form {
		var err error
		if body, contentType, err = formBody(body); err != nil {
			return c.failed(err.Error())
		}
	}
	rctx, cancelCause := context.WithCancelCause(ctx)
	cancel := func() { cancelCause(nil) }
	defer func() { out.Cancelled = out.Err != nil && errors.Is(context.Cause(rctx), errDeliberate) }()
	var deadline, abort *time.Timer
	var abortMu sync.Mutex
	if c.timeout > 0 {
		deadline = time.AfterFunc(c.timeout, cancel) // contextError tells it from the caller's cancel
	}
	if req.Cancel {
		// AIPerf's request cancellation: abort CancelAfter after the request
		// was fully written, unless it ended before.
		rctx = httptrace.WithClientTrace(rctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) {
			abortMu.Lock()
			defer abortMu.Unlock()
			if abort == nil {
				abort = time.AfterFunc(req.CancelAfter, func() { cancelCause(errDeliberate) })
			}
		}})
	}
	done := func() {
		if deadline != nil {
			deadline.Stop()
		}
		abortMu.Lock()
		if abort != nil {
			abort.Stop()
		}
		abortMu.Unlock()
		cancel()
	}
	hr, err := c.build(rctx, &req, body, contentType)
	if err != nil {
		done()
		return c.failed(err.Error())
	}
	hc, last := c.pool(&req)
	hr.Close = last // the connection closes once the response is read
	resp, res := c.send(ctx, rctx, hr, hc, req.SendBy)
	res.SentBytes = len(body)
	if resp == nil {
		done()
		if res.tracer != nil {
			res.HTTP = res.tracer.finish()
		}
		return res
	}
	res.Status = resp.StatusCode
	res.raw = req.Raw
	rest := &tracked{r: resp.Body, trace: res.tracer, onRead: req.OnRead}
	defer func() { c.drains.release(rctx, resp.Body, rest, out.Err == nil, done) }()
	// Before release: what is drained after the response is not part of it.
	defer func() { rest.onRead = nil }()
	if tr := res.tracer; tr != nil { // first: what is drained after the response is not part of it
		defer func() { rest.trace, out.HTTP = nil, tr.finish() }()
	}
	f := formatFor(&req)
	strict := c.strictFor(&req)
	if strict {
		f = openaiFormat{api: apiChat, req: &req, strict: true}
	}
	in, err := replyBody(resp.Header, rest)
	if err != nil {
		res.EndNs = c.now()
		res.Err = c.invalid(res.Status, resp.Header, f, err.Error())
		return res
	}
	c.readReply(ctx, rctx, &req, resp, in, f, strict, &res)
	c.verdict(&res, resp.Header, f)
	if req.EndpointType == plan.EndpointVideoGeneration && res.Err == nil {
		c.pollVideo(rctx, &req, &res)
	}
	return res
}

// failed is a request that could not be built and never reached the network.
func (c *Client) failed(msg string) Response {
	now := c.now()
	return Response{SentNs: now, EndNs: now, Err: &metrics.Error{Type: ErrTypeRequest, Message: msg}}
}

// send sends hr (whose context is rctx, derived from the caller's ctx) and
// returns the response with its headers read, or nil and a Response
// describing the failure.
//
// llama.cpp's llama-server closes the connection after every stream while
// advertising keep-alive, so a pooled connection may be dead when it is used.
// A request that fails on a reused connection before any response byte is
// therefore sent once more on a fresh connection, and Retried is set. SentNs
// stays the first attempt's send time: the client cannot tell a connection
// that was dead from a server that took the request, held it and dropped
// it, and the caller waited through both attempts (a dead connection costs
// a round trip; a stalling server its stall, which is not the client's send
// lag).
//
// A first attempt at or after by (> 0) is not made: the response is
// NotSent, with no error.
func (c *Client) send(ctx, rctx context.Context, hr *http.Request, hc *http.Client, by int64) (*http.Response, Response) {
	var res Response
	resp, t, err := c.attempt(hc, hr, hr.Body, &res, by)
	if errors.Is(err, errNotSent) {
		res.NotSent, res.EndNs = true, res.SentNs
		return nil, res
	}
	if err != nil && t.reused.Load() && !t.gotByte.Load() && rctx.Err() == nil {
		res.Retried = true
		first := res.SentNs
		body, _ := hr.GetBody() // a bytes.Reader: never fails
		resp, _, err = c.attempt(c.fresh, hr, body, &res, 0)
		res.SentNs = first
	}
	if err != nil {
		res.EndNs = c.now()
		res.Err = c.transportError(ctx, rctx, err)
		return nil, res
	}
	return resp, res
}

// readReply reads resp's body in, by its status and Content-Type: an HTTP
// error, a stream (asked for, or text/event-stream), or a whole reply.
func (c *Client) readReply(ctx, rctx context.Context, req *Request, resp *http.Response, in io.Reader, f format, strict bool, res *Response) {
	switch {
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		c.readHTTPError(in, res)
		c.redirected(resp, res)
	case strict && !isSSE(resp.Header):
		c.readNotSSE(in, resp.Header, f, res)
	case isHTMLType(resp.Header) && req.Streaming:
		c.readHTMLStream(in, resp.Header, f, res)
	case req.Streaming && !isJSON(resp.Header):
		if req.MaxTokens > 0 {
			res.Chunks = make([]Chunk, 0, min(req.MaxTokens+1, maxChunkHint))
			res.textHint = min(req.MaxTokens*textPerToken, maxChunkHint*textPerToken)
		}
		c.readStream(ctx, rctx, in, resp.Header, f, res, hooksOf(req))
	case isSSE(resp.Header):
		// A stream nobody asked for with --streaming: the body's extras
		// said "stream": true. Read as AIPerf does, by its Content-Type;
		// the run's streaming-only metrics stay off.
		c.readStream(ctx, rctx, in, resp.Header, f, res, hooksOf(req))
	default:
		res.Whole = true
		c.readWhole(ctx, rctx, in, resp.Header, f, res)
	}
}

// build is the HTTP request of req with body: its headers, a --header Host
// override, and its signature when requests are signed.
func (c *Client) build(ctx context.Context, req *Request, body []byte, contentType string) (*http.Request, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, req.URL, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	if hr.URL.Scheme != "http" && hr.URL.Scheme != "https" {
		return nil, fmt.Errorf("build request: unsupported URL scheme %q (want http or https)", hr.URL.Scheme)
	}
	hr.Header = c.header(*req)
	if contentType != "" {
		hr.Header["Content-Type"] = []string{contentType}
	}
	hr.Host = c.host // a --header Host:… override; empty means the URL's host
	if c.sign != nil {
		if err := c.sign(hr, body); err != nil {
			return nil, fmt.Errorf("sign the request: %w", err)
		}
	}
	return hr, nil
}

// connTrace records what httptrace reports about one attempt.
type connTrace struct {
	reused, gotByte atomic.Bool
}

// errNotSent is an attempt not made: its send time came at or after the
// request's Request.SendBy.
var errNotSent = errors.New("not sent: its time to be sent has passed")

// attempt sends hr with body through hc, stamping res.SentNs right
// before; a traced client's attempt is traced in res.tracer. When that
// stamp is at or after by (> 0), nothing is sent: errNotSent.
func (c *Client) attempt(hc *http.Client, hr *http.Request, body io.ReadCloser, res *Response, by int64) (*http.Response, *connTrace, error) {
	t := &connTrace{}
	var ctx context.Context
	if c.trace {
		res.tracer, ctx = newTracer(hr.Context(), c.now, c.traceFull, hr.URL.Scheme == "https", t)
	} else {
		ctx = httptrace.WithClientTrace(hr.Context(), &httptrace.ClientTrace{
			GotConn:              func(i httptrace.GotConnInfo) { t.reused.Store(i.Reused) },
			GotFirstResponseByte: func() { t.gotByte.Store(true) },
		})
	}
	r := hr.WithContext(ctx)
	r.Body = body
	if res.SentNs = c.now(); by > 0 && res.SentNs >= by {
		return nil, t, errNotSent
	}
	resp, err := hc.Do(r)
	if res.tracer != nil && err == nil {
		res.tracer.headers = c.now()
	}
	return resp, t, err
}

// header returns the headers of one request: the client's, which override
// user values of Content-Type and (streaming) Accept, plus X-Request-ID and,
// for a session, X-Correlation-ID (or Options.SessionHeader) and
// X-Session-Affinity. The
// values are shared with c.headers: nothing downstream modifies them.
func (c *Client) header(req Request) http.Header {
	base := c.headers
	if req.Streaming {
		base = c.streamHeaders
	}
	h := make(http.Header, len(base)+4)
	maps.Copy(h, base)
	if req.RequestID != "" {
		h["X-Request-Id"] = []string{req.RequestID}
		if c.sagemaker {
			h[sageMakerInferenceID] = h["X-Request-Id"]
		}
	}
	if req.SessionID != "" {
		h[c.session] = []string{req.SessionID}
		h["X-Session-Affinity"] = []string{req.SessionID}
	}
	return h
}

// redact hides the secret header values (the bearer token, an X-Api-Key,
// a cookie, ...) in text that came from the server.
func (c *Client) redact(s string) string { return c.secrets.Redact(s) }

// readHTMLStream fails a stream whose Content-Type is an HTML page's: a
// gateway's or a login page. (A JSON reply is read whatever its
// Content-Type, and fails when it is HTML; a template or raw reply, whose
// plain text is its output, fails when its body is a page: Flask and
// Express label plain text text/html.)
func (c *Client) readHTMLStream(in io.Reader, h http.Header, f format, res *Response) {
	b, _ := io.ReadAll(io.LimitReader(in, int64(min(c.maxResp, maxErrorBody))))
	res.EndNs = c.now()
	res.keep(res.EndNs, "", b, true)
	res.Err = c.invalid(res.Status, h, f, "a stream's Content-Type is text/event-stream, not an HTML page's: "+c.snippet(b))
}
