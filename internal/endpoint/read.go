package endpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/redirect"
	"github.com/aiperf-go/aiperf/internal/sse"
)

// snippetLen bounds how much of an unexpected body an error message quotes;
// secretWindow is how far past it secrets are looked for before the cut.
const (
	snippetLen   = 64
	secretWindow = 4096
)

// choiceless is a stream decoder whose API's replies need a choice (the
// OpenAI chat and completions streams): noChoice says why a stream that
// ended had none, "" when it had one.
type choiceless interface{ noChoice() string }

// noChoice is dec's noChoice, "" for a decoder of another API.
func noChoice(dec streamDecoder) string {
	if cl, ok := dec.(choiceless); ok {
		return cl.noChoice()
	}
	return ""
}

// streamHooks are a request's callbacks from its stream's read loop
// (Request.FirstToken, Request.OnChunk); nil ones cost a comparison.
type streamHooks struct {
	first func()
	chunk func(text, reasoning string)
}

func hooksOf(req *Request) streamHooks { return streamHooks{first: req.FirstToken, chunk: req.OnChunk} }

// read calls the hooks of a response with text just read (first: the
// stream's first).
func (on streamHooks) read(first bool, text, reasoning string) {
	if first && on.first != nil {
		on.first()
	}
	if on.chunk != nil {
		on.chunk(text, reasoning)
	}
}

// readStream reads SSE events until the API's end marker ([DONE] for
// OpenAI), an error frame or the end. A stream without a single response
// event is an invalid response; data lines that are not events of the API
// are counted in Response.MalformedChunks and skipped. A body that ends
// cleanly before the end marker is an incomplete stream, unless the API
// has no end marker (eofEnds) or its last events already made the reply
// whole (a wholeStream decoder): the response then ends at the last
// event read. Under --require-stream-completion (a strict format) what
// this skips fails the request instead (strict.go).
func (c *Client) readStream(ctx, rctx context.Context, body io.Reader, h http.Header, f format, res *Response, on streamHooks) {
	rd := readers.Get().(*sse.Reader)
	rd.SetMax(c.maxResp)
	rd.Reset(body, c.now)
	defer func() {
		rd.Reset(nil, nil)
		readers.Put(rd)
	}()
	dec := f.stream()
	if u, ok := dec.(usageAtEnd); ok {
		defer func() {
			if usage := u.endUsage(); usage != nil {
				res.Usage = usage
			}
		}()
	}
	strict := isStrict(f)
	var (
		valid  int    // response events read
		bad    string // the first data line that was not one
		lastAt int64  // the stamp of the last event read
	)
	defer func() { c.textless(res, h, f, bad) }()
	for {
		ev, err := rd.Next()
		if err != nil {
			c.streamStopped(ctx, rctx, err, dec, h, f, res, streamSoFar{valid: valid, bad: bad, lastAt: lastAt})
			return
		}
		res.charge(&ev)
		data := bytes.TrimSpace(ev.Data)
		alive := len(data) == 0 && ev.Name != "error" // a keep-alive
		if !alive {
			lastAt = ev.At
			res.keep(ev.At, ev.Name, data, false)
		}
		if c.overBound(res) { // what was read so far, this event's data (or raw event): at most one event over
			res.EndNs, res.Err = ev.At, c.replyTooLarge(res)
			return
		}
		if alive {
			if strict && ev.Name == "" { // a data: line with nothing in it
				res.EndNs, res.Err = ev.At, c.invalid(res.Status, h, f, strictEmpty)
				return
			}
			continue
		}
		p, kind := dec.event(ev.Name, data, res.Status)
		switch kind {
		case kindSkip:
			continue
		case kindMalformed:
			if strict {
				res.EndNs, res.Err = ev.At, c.invalid(res.Status, h, f, c.strictMalformed(data, p.why))
				return
			}
			if res.MalformedChunks++; bad == "" {
				bad = c.snippet(data)
				if p.why != "" {
					bad += ": " + p.why
				}
			}
			continue
		case kindEnd:
			res.EndNs = ev.At
			c.endMarked(ctx, rctx, rd, data, h, f, res, dec, streamSoFar{valid: valid, bad: bad})
			return
		}
		valid++
		if p.invalid != "" {
			res.EndNs = ev.At
			res.Err = c.invalid(res.Status, h, f, p.invalid)
			return
		}
		if p.err != nil {
			res.EndNs = ev.At
			p.err.Message = c.redact(p.err.Message)
			res.Err = p.err
			return
		}
		res.take(&p)
		if p.text != "" || p.reasoning != "" {
			res.refund(&ev)
			first := len(res.Chunks) == 0
			res.appendChunk(ev.At, p.text, p.reasoning)
			on.read(first, p.text, p.reasoning)
		}
		if p.end {
			res.EndNs = ev.At
			return
		}
	}
}

// endMarked judges a stream whose end marker (data, [DONE] for OpenAI)
// arrived after so far: an invalid response if no event counted or no
// choice 0 came; under a strict format, what follows the marker is read.
func (c *Client) endMarked(ctx, rctx context.Context, rd *sse.Reader, data []byte, h http.Header, f format, res *Response,
	dec streamDecoder, so streamSoFar) {
	when := "data: [DONE] arrived"
	if !isDone(data) {
		when = endMarker(f) + " arrived"
	}
	if why := noneCounted(when, so.valid, dec, res, so.bad); why != "" {
		res.Err = c.invalid(res.Status, h, f, why)
	} else if why := noChoice(dec); why != "" && res.others.chunks == 0 { // else the other choices' check says more
		res.Err = c.invalid(res.Status, h, f, why)
	} else if isStrict(f) {
		c.afterDone(ctx, rctx, rd, h, f, res)
	}
}

// usageAtEnd is a stream decoder that decodes its events' usage once the
// stream ends, not event by event (openaiStream under --per-chunk-usage):
// endUsage is the last usage read, nil when none was (Response.Usage is
// then what the events carried).
type usageAtEnd interface {
	endUsage() *metrics.Usage
}

// streamSoFar is what the read loop knew when the body stopped: the
// response events read, the first data line that was not one, the stamp
// of the last event.
type streamSoFar struct {
	valid  int
	bad    string
	lastAt int64
}

// streamStopped describes a stream whose body stopped (err from the SSE
// reader) before its end marker: a clean end is a whole reply when the API
// has none or its events made the reply whole (wholeStream), else an
// incomplete stream; a read failure is described as what it was.
func (c *Client) streamStopped(ctx, rctx context.Context, err error, dec streamDecoder, h http.Header, f format, res *Response, so streamSoFar) {
	res.EndNs = c.now()
	var none string // why no chunk counted, at a clean end
	if errors.Is(err, io.EOF) {
		none = noneCounted("the stream ended", so.valid, dec, res, so.bad)
	}
	switch {
	case none != "":
		res.Err = c.invalid(res.Status, h, f, none)
	case errors.Is(err, io.EOF) && dec.eofEnds():
	case errors.Is(err, io.EOF):
		msg := "stream ended before " + endMarker(f)
		if ws, ok := dec.(wholeStream); ok {
			whole, why := ws.whole()
			if whole {
				res.EndNs = so.lastAt
				return
			}
			msg += " and " + why
		}
		res.Err = &metrics.Error{Code: res.Status, Type: ErrTypeIncompleteStream, Message: msg}
	case errors.Is(err, sse.ErrTooLarge):
		res.Err = c.tooLarge(res.Status, "an SSE line, event or run of comments between events")
	case errors.Is(err, errEncoding):
		res.Err = c.invalid(res.Status, h, f, err.Error())
	default:
		res.Err = c.readError(ctx, rctx, res.Status, ErrTypeIncompleteStream, err)
	}
}

// wholeStream is a stream decoder whose API has an end marker, but whose
// events can already have made the reply whole (OpenAI's finish_reason):
// a body that ends cleanly after them is a complete reply, as AIPerf's
// check of a chat stream's completion takes [DONE] or a finish_reason. A
// body that breaks (a transport error) is still an incomplete stream.
type wholeStream interface {
	// whole reports whether the events read so far make a whole reply;
	// when they do not, why says what is missing.
	whole() (ok bool, why string)
}

// endMarker names the event that ends a stream of format f.
func endMarker(f format) string {
	switch f.(type) {
	case messagesFormat:
		return "message_stop"
	case responsesFormat:
		return "response.completed"
	case tgiFormat:
		return "the event with generated_text"
	}
	return "data: [DONE]"
}

// textless fails a stream that ended as a success with malformed data
// lines and no generated text on any valid chunk: the lines that were not
// chunks of the API may have been its output, so the reply is not a valid
// response (an empty reply is one only when every line was a chunk). Text
// on another choice is left to verdict, which names it.
func (c *Client) textless(res *Response, h http.Header, f format, first string) {
	if res.Err != nil || res.MalformedChunks == 0 || len(res.Chunks) > 0 || res.others.chunks > 0 {
		return
	}
	res.Err = c.invalid(res.Status, h, f, fmt.Sprintf(
		"no response chunk carried generated text: %d data line(s) were not response chunks (first: %s)",
		res.MalformedChunks, first))
}

// noneCounted says why a stream that ended (when: "data: [DONE] arrived",
// "the stream ended") holds no chunk that counts, "" when it holds one: it
// read no response chunk (valid is 0), or, on an OpenAI stream, none of
// its chunks carried choice 0 nor text on another choice while data lines
// were skipped as malformed (chunks of the other API beside the usage
// chunk, whose choices list is empty): those lines are the cause then, the
// first quoted.
func noneCounted(when string, valid int, dec streamDecoder, res *Response, first string) string {
	switch {
	case valid == 0:
		return noChunk(when, res.MalformedChunks, first)
	case res.MalformedChunks > 0 && res.others.chunks == 0 && noChoice(dec) != "":
		return fmt.Sprintf("%s before any chunk carried choice 0: %d data line(s) were not response chunks (first: %s)",
			when, res.MalformedChunks, first)
	}
	return ""
}

// noChunk words a stream that held no response chunk.
func noChunk(when string, malformed int, first string) string {
	if malformed == 0 {
		return when + " before any response chunk (no data: line held one)"
	}
	return fmt.Sprintf("%s before any response chunk: %d data line(s) were not one (first: %s)", when, malformed, first)
}

// readWhole reads a non-streaming response, which must be a response of the
// API (or an error object).
func (c *Client) readWhole(ctx, rctx context.Context, body io.Reader, h http.Header, f format, res *Response) {
	b, err := io.ReadAll(io.LimitReader(body, int64(c.maxResp)+1))
	at := c.now()
	res.EndNs = at
	res.keep(at, "", b[:min(len(b), c.maxResp)], true)
	switch {
	case errors.Is(err, errEncoding):
		res.Err = c.invalid(res.Status, h, f, err.Error())
		return
	case err != nil:
		res.Err = c.readError(ctx, rctx, res.Status, ErrTypeIncompleteResponse, err)
		return
	case len(b) > c.maxResp:
		res.Err = c.tooLarge(res.Status, "the response body")
		return
	}
	t := bytes.TrimSpace(b)
	if len(t) == 0 {
		res.Err = c.invalid(res.Status, h, f, "the body is empty")
		return
	}
	p, why := f.whole(t, res.Status)
	switch {
	case why != "":
		res.Err = c.invalid(res.Status, h, f, why+": "+c.snippet(b))
		return
	case p.err != nil:
		p.err.Message = c.redact(p.err.Message)
		res.Err = p.err
		return
	}
	res.Usage, res.SpecDecode, res.Images, res.job = p.usage, p.spec, p.images, p.job
	res.others.add(&p)
	if p.text != "" || p.reasoning != "" {
		res.appendChunk(at, p.text, p.reasoning)
	}
}

// readHTTPError describes a non-2xx response by the message in its body.
func (c *Client) readHTTPError(body io.Reader, res *Response) {
	b, _ := io.ReadAll(io.LimitReader(body, maxErrorBody)) // a partial body still names the error
	res.EndNs = c.now()
	res.keep(res.EndNs, "", b, true)
	msg := bodyMessage(b)
	if msg == "" {
		msg = http.StatusText(res.Status)
	}
	res.Err = &metrics.Error{Code: res.Status, Type: ErrTypeHTTP, Message: c.redact(msg)}
}

// redirected names, in the error of a redirect that was not followed
// (redirect.Check), where it pointed and why: the origin only, as its path
// and query may hold what the request sent.
func (c *Client) redirected(resp *http.Response, res *Response) {
	loc := resp.Header.Get("Location")
	if resp.StatusCode/100 != 3 || loc == "" || res.Err == nil {
		return
	}
	where := "a Location that is not a URL"
	why := "to another origin"
	if u, err := resp.Request.URL.Parse(loc); err == nil && u.Host != "" {
		where = u.Scheme + "://" + u.Host
		if redirect.SameOrigin(u, resp.Request.URL) {
			why = "as it would resend the " + resp.Request.Method + " as a GET without its body (only a 307 or 308 keeps them)"
			if resp.StatusCode == http.StatusTemporaryRedirect || resp.StatusCode == http.StatusPermanentRedirect {
				why = "as it would send the request without its body"
			}
		}
	}
	res.Err.Message += c.redact(fmt.Sprintf(" (a redirect to %s, not followed %s: give the URL it should be with --url)", where, why))
}

// invalid is a 2xx response that is not an API response; the message names
// the Content-Type that arrived.
func (c *Client) invalid(status int, h http.Header, f format, what string) *metrics.Error {
	ct := h.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err == nil {
		ct = mt
	}
	if ct == "" {
		ct = "no Content-Type"
	}
	return &metrics.Error{Code: status, Type: ErrTypeInvalidResponse,
		Message: c.redact(fmt.Sprintf("not %s %s response (%s): %s", article(f.label()), f.label(), ct, what))}
}

// article is the indefinite article of an API's label: "an OpenAI", "a
// TGI", "a recognised" (the labels are names read letter by letter or
// words; none starts with a silent consonant or a "you" sound).
func article(label string) string {
	if label != "" && strings.ContainsRune("AEIOUaeiou", rune(label[0])) {
		return "an"
	}
	return "a"
}

// tooLarge is a response beyond the client's size limit.
func (c *Client) tooLarge(status int, what string) *metrics.Error {
	return &metrics.Error{Code: status, Type: ErrTypeTooLarge,
		Message: fmt.Sprintf("%s exceeds %d bytes (--max-event-bytes)", what, c.maxResp)}
}

// snippet quotes the start of an unexpected payload: secrets redacted
// before it is cut (so no cut secret leaves its start behind), control
// characters replaced, at most snippetLen bytes.
func (c *Client) snippet(b []byte) string { return c.snippetN(b, snippetLen) }

// snippetN is snippet of at most n bytes.
func (c *Client) snippetN(b []byte, n int) string {
	b = bytes.TrimSpace(b)
	b = []byte(c.redact(string(b[:min(len(b), n+secretWindow)])))
	cut := len(b) > n
	if cut {
		b = b[:n]
	}
	s := strings.ToValidUTF8(string(b), "?")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	if cut {
		s += "…"
	}
	return fmt.Sprintf("%q", s)
}

// isHTMLType reports a response labelled as an HTML page (text/html or
// application/xhtml+xml): never an SSE stream, nor an API's reply.
func isHTMLType(h http.Header) bool {
	mt, _, _ := strings.Cut(h.Get("Content-Type"), ";")
	mt = strings.TrimSpace(mt)
	return strings.EqualFold(mt, "text/html") || strings.EqualFold(mt, "application/xhtml+xml")
}

// isJSON reports a JSON (not SSE) response, sent by servers that ignore
// "stream": true.
func isJSON(h http.Header) bool {
	mt, _, _ := strings.Cut(h.Get("Content-Type"), ";")
	return strings.EqualFold(strings.TrimSpace(mt), "application/json")
}
