package endpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"mime"
	"net/http"
	"strings"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/sse"
)

// AIPerf's --require-stream-completion (Options.RequireStreamCompletion)
// holds a streamed chat reply to its protocol instead of reading what it
// can of it:
//
//   - the reply is SSE (text/event-stream); any other is named, with the
//     start of its body (readNotSSE);
//   - every data event is a chat completion chunk: an empty data event, a
//     line that is not JSON and a chunk of another shape fail the request
//     (without the flag they are counted and skipped);
//   - it ends with data: [DONE], or, the body ending cleanly without it,
//     with a finish_reason on every choice seen (choiceSet), besides what a
//     stream without [DONE] needs anyway (openaiStream.whole);
//   - after [DONE] the body is read to its end, and data there fails the
//     request; comments and data-less event metadata may follow.
//
// A request whose body does not ask to stream (its payload, or a turn's
// extra, sets "stream" to false) is not checked (strictFor).

// notSSEPrefix bounds the body quoted when a reply is not SSE.
const notSSEPrefix = 200

// strictEmpty describes an empty data event.
const strictEmpty = "an empty data: event (--require-stream-completion fails the request on one)"

// isStrict reports a format under --require-stream-completion.
func isStrict(f format) bool {
	o, ok := f.(openaiFormat)
	return ok && o.strict
}

// strictFor reports whether req's reply is checked: the client requires
// stream completion, and req is a chat request whose body asks to stream.
func (c *Client) strictFor(req *Request) bool {
	return c.strict && req.Streaming && req.EndpointType == plan.EndpointChat && asksStream(req)
}

// asksStream reports whether the body of req asks to stream: a payload sent
// as it is when its "stream" is true; a built body unless a turn's extra or
// --extra-inputs sets "stream" to something else (the turn's wins, as in
// the body).
func asksStream(req *Request) bool {
	if len(req.Payload) > 0 {
		var p struct {
			Stream any `json:"stream"`
		}
		return json.Unmarshal(req.Payload, &p) == nil && p.Stream == true
	}
	if v, ok := req.TurnExtra["stream"]; ok {
		return v == true
	}
	if v, ok := req.Extra["stream"]; ok {
		return v == true
	}
	return true
}

// isSSE reports a reply labelled text/event-stream.
func isSSE(h http.Header) bool {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	return err == nil && strings.EqualFold(mt, "text/event-stream")
}

// readNotSSE fails a streamed reply that is not SSE, naming its
// Content-Type and quoting the start of its body (a server's error page or
// JSON error, a whole reply where a stream was asked for).
func (c *Client) readNotSSE(in io.Reader, h http.Header, f format, res *Response) {
	b, _ := io.ReadAll(io.LimitReader(in, int64(min(c.maxResp, maxErrorBody))))
	res.EndNs = c.now()
	res.keep(res.EndNs, "", b, true)
	ct := h.Get("Content-Type")
	if ct == "" {
		ct = "no Content-Type"
	}
	what := "the body is empty"
	if len(bytes.TrimSpace(b)) > 0 {
		what = "the body starts " + c.snippetN(b, notSSEPrefix)
	}
	res.Err = c.invalid(res.Status, h, f, fmt.Sprintf(
		"--require-stream-completion needs a text/event-stream reply, got %s; %s", ct, what))
}

// strictMalformed describes a data event that is not a chat completion
// chunk.
func (c *Client) strictMalformed(data []byte, why string) string {
	msg := "a data: event is not a chat completion chunk (--require-stream-completion fails the request on one): " + c.snippet(data)
	if why != "" {
		msg += ": " + why
	}
	return msg
}

// afterDone reads the rest of a stream after its data: [DONE]: comments
// and events without data may follow, data may not. The reply still ended
// at [DONE] (res.EndNs is kept); a body that breaks or overflows after it
// fails as it would before.
func (c *Client) afterDone(ctx, rctx context.Context, rd *sse.Reader, h http.Header, f format, res *Response) {
	for {
		ev, err := rd.Next()
		switch {
		case errors.Is(err, io.EOF):
			return
		case errors.Is(err, sse.ErrTooLarge):
			res.Err = c.tooLarge(res.Status, "an SSE line or event after data: [DONE]")
			return
		case errors.Is(err, errEncoding):
			res.Err = c.invalid(res.Status, h, f, err.Error())
			return
		case err != nil:
			res.Err = c.readError(ctx, rctx, res.Status, ErrTypeIncompleteStream, err)
			res.Err.Message = "after data: [DONE]: " + res.Err.Message
			return
		}
		data := bytes.TrimSpace(ev.Data)
		if ev.Name != "" && len(data) == 0 {
			continue // event metadata without data
		}
		res.keep(ev.At, ev.Name, data, false)
		res.Err = c.invalid(res.Status, h, f, "data after data: [DONE] (--require-stream-completion allows only comments "+
			"and event metadata after it): "+c.snippet(data))
		return
	}
}

// choiceSet is the choices a stream carried and which of them finished
// (a non-empty finish_reason), for --require-stream-completion. Choices
// 0-63 are bits; a higher index, which no server numbers its choices to,
// goes in a map.
type choiceSet struct {
	on         bool
	seen, done uint64
	high       map[int]bool // index -> finished
}

// maxChoices bounds the choices above 63 a stream may carry under
// --require-stream-completion: a reply of more is refused, not recorded
// choice by choice without end.
const maxChoices = 4096

// observe records the choices of one chunk (whose indexes are valid: the
// chunk's shape was checked); false when the stream carried more choices
// than maxChoices.
func (s *choiceSet) observe(cs []wireChoice) bool {
	for i := range cs {
		idx, fin := int(cs[i].Index), cs[i].has&finished != 0
		switch {
		case idx < 0:
		case idx < 64:
			s.seen |= 1 << idx
			if fin {
				s.done |= 1 << idx
			}
		default:
			if s.high == nil {
				s.high = map[int]bool{}
			}
			was, ok := s.high[idx]
			if !ok && len(s.high) >= maxChoices {
				return false
			}
			s.high[idx] = was || fin
		}
	}
	return true
}

// unfinished returns the lowest choice seen without a finish_reason.
func (s *choiceSet) unfinished() (int, bool) {
	if open := s.seen &^ s.done; open != 0 {
		return bits.TrailingZeros64(open), true
	}
	lowest, found := 0, false
	for idx, fin := range s.high {
		if !fin && (!found || idx < lowest) {
			lowest, found = idx, true
		}
	}
	return lowest, found
}
