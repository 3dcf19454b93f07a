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
	"github.com/aiperf-go/aiperf/internal/sse"
)

// snippetLen bounds how much of an unexpected body an error message quotes;
// secretWindow is how far past it secrets are looked for before the cut.
const (
	snippetLen   = 64
	secretWindow = 4096
)

// readStream reads SSE events until [DONE], an error frame or the end. A
// stream without a single response chunk is an invalid response; data lines
// that are not response chunks are counted in Response.MalformedChunks and
// skipped.
func (c *Client) readStream(ctx, rctx context.Context, body io.Reader, h http.Header, res *Response) {
	rd := readers.Get().(*sse.Reader)
	rd.SetMax(c.maxResp)
	rd.Reset(body, c.now)
	defer func() {
		rd.Reset(nil, nil)
		readers.Put(rd)
	}()
	var (
		w     wireChunk // reused: one decode target per stream
		valid int       // response chunks read
		bad   string    // the first data line that was not one
	)
	for {
		ev, err := rd.Next()
		if err != nil {
			res.EndNs = c.now()
			switch {
			case errors.Is(err, io.EOF) && valid == 0:
				res.Err = c.invalid(res.Status, h, noChunk("the stream ended", res.MalformedChunks, bad))
			case errors.Is(err, io.EOF):
				res.Err = &metrics.Error{Code: res.Status, Type: ErrTypeIncompleteStream, Message: "stream ended before data: [DONE]"}
			case errors.Is(err, sse.ErrTooLarge):
				res.Err = c.tooLarge(res.Status, "an SSE line or event")
			case errors.Is(err, errEncoding):
				res.Err = c.invalid(res.Status, h, err.Error())
			default:
				res.Err = c.readError(ctx, rctx, res.Status, ErrTypeIncompleteStream, err)
			}
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
			if valid == 0 {
				res.Err = c.invalid(res.Status, h, noChunk("data: [DONE] arrived", res.MalformedChunks, bad))
			}
			return
		}
		if len(data) == 0 {
			continue // a keep-alive
		}
		w.reset()
		if data[0] != '{' || decodeChunk(data, &w) != nil || !w.shaped() {
			if res.MalformedChunks++; bad == "" {
				bad = c.snippet(data)
			}
			continue
		}
		valid++
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

// noChunk words a stream that held no response chunk.
func noChunk(when string, malformed int, first string) string {
	if malformed == 0 {
		return when + " before any response chunk (no data: line held one)"
	}
	return fmt.Sprintf("%s before any response chunk: %d data line(s) were not one (first: %s)", when, malformed, first)
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

// readWhole reads a non-streaming response, which must be a completion: a
// JSON object with a choice (or an error object).
func (c *Client) readWhole(ctx, rctx context.Context, body io.Reader, h http.Header, res *Response) {
	b, err := io.ReadAll(io.LimitReader(body, int64(c.maxResp)+1))
	at := c.now()
	res.EndNs = at
	switch {
	case errors.Is(err, errEncoding):
		res.Err = c.invalid(res.Status, h, err.Error())
		return
	case err != nil:
		res.Err = c.readError(ctx, rctx, res.Status, ErrTypeIncompleteResponse, err)
		return
	case len(b) > c.maxResp:
		res.Err = c.tooLarge(res.Status, "the response body")
		return
	}
	var w wireChunk
	if t := bytes.TrimSpace(b); len(t) == 0 || t[0] != '{' || decodeChunk(t, &w) != nil {
		if len(bytes.TrimSpace(b)) == 0 {
			res.Err = c.invalid(res.Status, h, "the body is empty")
		} else {
			res.Err = c.invalid(res.Status, h, "the body is not a JSON object: "+c.snippet(b))
		}
		return
	}
	if e := w.failure(res.Status); e != nil {
		e.Message = c.redact(e.Message)
		res.Err = e
		return
	}
	switch {
	case !w.hasChoices:
		res.Err = c.invalid(res.Status, h, "the JSON body has no choices: "+c.snippet(b))
		return
	case w.first() == nil:
		res.Err = c.invalid(res.Status, h, "the JSON body has no choice with index 0: "+c.snippet(b))
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

// invalid is a 2xx response that is not an API response; the message names
// the Content-Type that arrived.
func (c *Client) invalid(status int, h http.Header, what string) *metrics.Error {
	ct := h.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err == nil {
		ct = mt
	}
	if ct == "" {
		ct = "no Content-Type"
	}
	return &metrics.Error{Code: status, Type: ErrTypeInvalidResponse,
		Message: c.redact(fmt.Sprintf("not an OpenAI response (%s): %s", ct, what))}
}

// tooLarge is a response beyond the client's size limit.
func (c *Client) tooLarge(status int, what string) *metrics.Error {
	return &metrics.Error{Code: status, Type: ErrTypeTooLarge,
		Message: fmt.Sprintf("%s exceeds %d bytes (--max-event-bytes)", what, c.maxResp)}
}

// snippet quotes the start of an unexpected payload: secrets redacted
// before it is cut (so no cut secret leaves its start behind), control
// characters replaced, at most snippetLen bytes.
func (c *Client) snippet(b []byte) string {
	b = bytes.TrimSpace(b)
	b = []byte(c.redact(string(b[:min(len(b), snippetLen+secretWindow)])))
	cut := len(b) > snippetLen
	if cut {
		b = b[:snippetLen]
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

// isJSON reports a JSON (not SSE) response, sent by servers that ignore
// "stream": true.
func isJSON(h http.Header) bool {
	mt, _, _ := strings.Cut(h.Get("Content-Type"), ";")
	return strings.EqualFold(strings.TrimSpace(mt), "application/json")
}
