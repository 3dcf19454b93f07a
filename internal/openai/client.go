package openai

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"strings"
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
	// maxBody bounds a non-streaming response body.
	maxBody = 64 << 20
	// maxDrain bounds what is read after a response is decided, to reuse the
	// connection; a longer remainder closes it instead.
	maxDrain = 256 << 10
	// maxChunkHint caps the Chunks capacity reserved from MaxTokens.
	maxChunkHint = 4096
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
	// Headers are sent with every request: --header values, Authorization
	// and User-Agent. The bearer token is redacted from error messages.
	Headers http.Header
	// Now is the run's monotonic clock in ns since its start (default: since
	// New).
	Now func() int64
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
	now     func() int64
	secrets *plan.Redactor // the secret header values, redacted from error messages
	host    string         // a --header Host:… override
}

// New returns a Client.
func New(o Options) *Client {
	if o.MaxConns <= 0 {
		o.MaxConns = defaultMaxConns
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
	streaming := headers.Clone()
	streaming.Set("Accept", "text/event-stream")
	return &Client{
		keep:          &http.Client{Transport: newTransport(o.MaxConns, true)},
		fresh:         &http.Client{Transport: newTransport(o.MaxConns, false)},
		headers:       headers,
		streamHeaders: streaming,
		timeout:       o.Timeout,
		now:           o.Now,
		secrets:       plan.NewRedactor(plan.HeaderSecrets(headers)...),
		host:          headers.Get("Host"),
	}
}

// newTransport is HTTP/1.1 only, uncompressed, with an idle pool of maxConns
// per host and no cap on active connections. It ignores HTTP(S)_PROXY, as
// AIPerf's client does: a proxy would add its own latency to every metric.
func newTransport(maxConns int, keepAlive bool) *http.Transport {
	return &http.Transport{
		DialContext: (&net.Dialer{
			Timeout:   30 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		ForceAttemptHTTP2:   false,
		TLSNextProto:        map[string]func(string, *tls.Conn) http.RoundTripper{},
		TLSHandshakeTimeout: 10 * time.Second,
		DisableKeepAlives:   !keepAlive,
		DisableCompression:  true,
		MaxIdleConns:        0, // no global limit; MaxIdleConnsPerHost bounds each --url
		MaxIdleConnsPerHost: maxConns,
		IdleConnTimeout:     90 * time.Second,
		ReadBufferSize:      ioBufferSize,
		WriteBufferSize:     ioBufferSize,
	}
}

// Close closes idle connections.
func (c *Client) Close() {
	c.keep.CloseIdleConnections()
	c.fresh.CloseIdleConnections()
}

// readers recycles SSE readers and their buffers across requests.
var readers = sync.Pool{New: func() any { return sse.NewReader(nil, nil) }}

// Do sends req and reads the whole response. It never fails: failures are
// described by Response.Err.
func (c *Client) Do(ctx context.Context, req Request) Response {
	body := req.Body
	if body == nil {
		var err error
		if body, err = Body(req); err != nil {
			return c.failed(err.Error())
		}
	}
	rctx := ctx
	if c.timeout > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	hr, err := http.NewRequestWithContext(rctx, http.MethodPost, req.URL, bytes.NewReader(body))
	if err != nil {
		return c.failed(fmt.Sprintf("build request: %v", err))
	}
	if hr.URL.Scheme != "http" && hr.URL.Scheme != "https" {
		return c.failed(fmt.Sprintf("build request: unsupported URL scheme %q (want http or https)", hr.URL.Scheme))
	}
	hr.Header = c.header(req)
	hr.Host = c.host // a --header Host:… override; empty means the URL's host
	resp, res := c.send(ctx, rctx, hr)
	if resp == nil {
		return res
	}
	defer drain(resp.Body)
	res.Status = resp.StatusCode
	switch {
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		c.readHTTPError(resp.Body, &res)
	case req.Streaming && !isJSON(resp.Header):
		if req.MaxTokens > 0 {
			res.Chunks = make([]Chunk, 0, min(req.MaxTokens+1, maxChunkHint))
		}
		c.readStream(ctx, rctx, resp.Body, &res)
	default:
		c.readWhole(ctx, rctx, resp.Body, &res)
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
// is then the retry's send time: the dead attempt is client-side connection
// management, not server latency, and counting it would inflate TTFT and
// latency by a round trip the server never saw.
func (c *Client) send(ctx, rctx context.Context, hr *http.Request) (*http.Response, Response) {
	var res Response
	resp, t, err := c.attempt(c.keep, hr, hr.Body, &res.SentNs)
	if err != nil && t.reused.Load() && !t.gotByte.Load() && rctx.Err() == nil {
		res.Retried = true
		body, _ := hr.GetBody() // a bytes.Reader: never fails
		resp, _, err = c.attempt(c.fresh, hr, body, &res.SentNs)
	}
	if err != nil {
		res.EndNs = c.now()
		res.Err = c.transportError(ctx, rctx, err)
		return nil, res
	}
	return resp, res
}

// connTrace records what httptrace reports about one attempt.
type connTrace struct {
	reused, gotByte atomic.Bool
}

// attempt sends hr with body through hc, stamping *sent right before.
func (c *Client) attempt(hc *http.Client, hr *http.Request, body io.ReadCloser, sent *int64) (*http.Response, *connTrace, error) {
	t := &connTrace{}
	r := hr.WithContext(httptrace.WithClientTrace(hr.Context(), &httptrace.ClientTrace{
		GotConn:              func(i httptrace.GotConnInfo) { t.reused.Store(i.Reused) },
		GotFirstResponseByte: func() { t.gotByte.Store(true) },
	}))
	r.Body = body
	*sent = c.now()
	resp, err := hc.Do(r)
	return resp, t, err
}

// header returns the headers of one request: the client's, which override
// user values of Content-Type and (streaming) Accept, plus X-Request-ID. The
// values are shared with c.headers: nothing downstream modifies them.
func (c *Client) header(req Request) http.Header {
	base := c.headers
	if req.Streaming {
		base = c.streamHeaders
	}
	h := make(http.Header, len(base)+1)
	maps.Copy(h, base)
	if req.RequestID != "" {
		h["X-Request-Id"] = []string{req.RequestID}
	}
	return h
}

// readStream reads SSE events until [DONE], an error frame or the end.
func (c *Client) readStream(ctx, rctx context.Context, body io.Reader, res *Response) {
	rd := readers.Get().(*sse.Reader)
	rd.Reset(body, c.now)
	defer func() {
		rd.Reset(nil, nil)
		readers.Put(rd)
	}()
	var w wireChunk // reused: one decode target per stream
	for {
		ev, err := rd.Next()
		if err != nil {
			res.EndNs = c.now()
			if errors.Is(err, io.EOF) {
				res.Err = &metrics.Error{Code: res.Status, Type: ErrTypeIncompleteStream,
					Message: "stream ended before data: [DONE]"}
				return
			}
			res.Err = c.readError(ctx, rctx, res.Status, ErrTypeIncompleteStream, err)
			return
		}
		data := bytes.TrimSpace(ev.Data)
		if ev.Name == "error" {
			res.EndNs = ev.At
			res.Err = c.streamError(data, res.Status)
			return
		}
		if string(data) == "[DONE]" {
			res.EndNs = ev.At
			return
		}
		if len(data) == 0 || data[0] != '{' {
			continue // keep-alive or unknown payload
		}
		w.reset()
		if decodeChunk(data, &w) != nil {
			continue // not an object we understand
		}
		if e := w.failure(res.Status); e != nil {
			res.EndNs = ev.At
			e.Message = c.redact(e.Message)
			res.Err = e
			return
		}
		if u := w.usage(); u != nil {
			res.Usage = u
		}
		if text, reasoning := w.output(); text != "" || reasoning != "" {
			res.Chunks = append(res.Chunks, Chunk{At: ev.At, Text: text, Reasoning: reasoning})
		}
	}
}

// streamError describes an "event: error" frame.
func (c *Client) streamError(data []byte, status int) *metrics.Error {
	var w wireChunk
	if len(data) > 0 && data[0] == '{' && decodeChunk(data, &w) == nil {
		if e := w.failure(status); e != nil {
			e.Message = c.redact(e.Message)
			return e
		}
	}
	return &metrics.Error{Code: status, Type: ErrTypeStream, Message: c.redact(bodyMessage(data))}
}

// readWhole reads a non-streaming response.
func (c *Client) readWhole(ctx, rctx context.Context, body io.Reader, res *Response) {
	b, err := io.ReadAll(io.LimitReader(body, maxBody))
	at := c.now()
	res.EndNs = at
	if err != nil {
		res.Err = c.readError(ctx, rctx, res.Status, ErrTypeIncompleteResponse, err)
		return
	}
	var w wireChunk
	if decodeChunk(b, &w) != nil {
		return // not an object we understand: no output
	}
	if e := w.failure(res.Status); e != nil {
		e.Message = c.redact(e.Message)
		res.Err = e
		return
	}
	res.Usage = w.usage()
	if text, reasoning := w.output(); text != "" || reasoning != "" {
		res.Chunks = []Chunk{{At: at, Text: text, Reasoning: reasoning}}
	}
}

// readHTTPError describes a non-2xx response by the message in its body.
func (c *Client) readHTTPError(body io.Reader, res *Response) {
	b, _ := io.ReadAll(io.LimitReader(body, maxErrorBody)) // a partial body still names the error
	res.EndNs = c.now()
	msg := bodyMessage(b)
	if msg == "" {
		msg = http.StatusText(res.Status)
	}
	res.Err = &metrics.Error{Code: res.Status, Type: ErrTypeHTTP, Message: c.redact(msg)}
}

// readError classifies an error while reading a body: the caller's
// cancellation, the per-request timeout, or typ (the connection broke).
func (c *Client) readError(ctx, rctx context.Context, status int, typ string, err error) *metrics.Error {
	if e := c.contextError(ctx, rctx); e != nil {
		e.Code = status
		return e
	}
	return &metrics.Error{Code: status, Type: typ, Message: c.redact(err.Error())}
}

// contextError reports a cancelled or timed-out request, nil otherwise.
func (c *Client) contextError(ctx, rctx context.Context) *metrics.Error {
	switch {
	case ctx.Err() != nil:
		return &metrics.Error{Type: ErrTypeCancelled, Message: "request cancelled: " + context.Cause(ctx).Error()}
	case rctx.Err() != nil:
		return &metrics.Error{Type: ErrTypeTimeout, Message: fmt.Sprintf("request timed out after %s", c.timeout)}
	}
	return nil
}

// transportError classifies a failure before the response headers arrived.
func (c *Client) transportError(ctx, rctx context.Context, err error) *metrics.Error {
	if e := c.contextError(ctx, rctx); e != nil {
		return e
	}
	return &metrics.Error{Type: ErrTypeConnection, Message: c.redact(connMessage(err))}
}

// connMessage words a transport error without the request URL, naming the
// address for dial failures: "connect to 127.0.0.1:9: connection refused".
func connMessage(err error) string {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		inner := op.Err
		var sys *os.SyscallError
		if errors.As(inner, &sys) {
			inner = sys.Err
		}
		if op.Addr != nil {
			return fmt.Sprintf("connect to %s: %v", op.Addr, inner)
		}
		return fmt.Sprintf("connect: %v", inner)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "server closed the connection before responding"
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error() // without the URL
	}
	return err.Error()
}

// redact hides the secret header values (the bearer token, an X-Api-Key,
// a cookie, ...) in text that came from the server.
func (c *Client) redact(s string) string { return c.secrets.Redact(s) }

// isJSON reports a JSON (not SSE) response, sent by servers that ignore
// "stream": true.
func isJSON(h http.Header) bool {
	mt, _, _ := strings.Cut(h.Get("Content-Type"), ";")
	return strings.EqualFold(strings.TrimSpace(mt), "application/json")
}

// drain reads a bounded remainder so the connection can be reused, then
// closes the body. Its wait is bounded by the request's context: a server
// that holds the body open after [DONE] keeps the request (not its result)
// until the timeout.
func drain(body io.ReadCloser) {
	_, _ = io.CopyN(io.Discard, body, maxDrain)
	_ = body.Close()
}
