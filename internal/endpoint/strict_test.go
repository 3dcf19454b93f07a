package endpoint

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
)

// typedHandler serves pieces as sseHandler does, under Content-Type ct
// ("" for none).
func typedHandler(ct string, pieces ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header()["Content-Type"] = nil // no default sniffed type
		if ct != "" {
			w.Header().Set("Content-Type", ct)
		}
		for _, p := range pieces {
			io.WriteString(w, p)
			w.(http.Flusher).Flush()
		}
	}
}

// strictDo sends a streamed chat request to a loopback server answering
// with h, from a client with RequireStreamCompletion as strict.
func strictDo(t *testing.T, strict bool, h http.HandlerFunc, edit func(*Request)) (Response, *metrics.Raw) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	req := chatReq(srv.URL+"/v1/chat/completions", true)
	req.Raw = &metrics.Raw{}
	if edit != nil {
		edit(&req)
	}
	return newTestClient(t, Options{RequireStreamCompletion: strict}).Do(context.Background(), req), req.Raw
}

const (
	// choice1 is a chunk of choice 1, unfinished; choice1Fin finishes it.
	choice1    = `data: {"choices":[{"index":1,"delta":{"content":"x"},"finish_reason":null}]}` + "\n\n"
	choice1Fin = `data: {"choices":[{"index":1,"delta":{},"finish_reason":"stop"}]}` + "\n\n"
)

// TestRequireStreamCompletionPasses: under --require-stream-completion a
// stream that ends with [DONE], or without it once every choice seen has
// its finish_reason, is a success; comments and data-less event metadata
// may follow [DONE], which still ends the reply.
func TestRequireStreamCompletionPasses(t *testing.T) {
	tests := []struct {
		name string
		wire []string
		done bool // the reply ends at [DONE] (else at its last event)
	}{
		{name: "[DONE]", wire: []string{role, tokA, tokB, fin, usage, done}, done: true},
		{name: "[DONE] without a finish_reason", wire: []string{tokA, tokB, usage, done}, done: true},
		{name: "comments and metadata after [DONE]", done: true,
			wire: []string{tokA, tokB, fin, usage, done, ": keep-alive\n\n", "event: close\n\n", "id: 7\nretry: 10\n\n"}},
		{name: "no [DONE], every choice finished", wire: []string{tokA, tokB, fin, usage}},
		{name: "no [DONE], two choices finished", wire: []string{tokA, choice1, tokB, fin, choice1Fin, usage}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, raw := strictDo(t, true, sseHandler(tc.wire...), nil)
			require.Nil(t, res.Err, "%+v", res.Err)
			texts, _ := outputs(res.Chunks)
			assert.Equal(t, []string{"A", "B"}, texts[:2])
			last := raw.Responses[len(raw.Responses)-1]
			if tc.done {
				assert.Equal(t, "[DONE]", string(last.Data), "nothing after [DONE] is kept as a response")
			}
			assert.Equal(t, last.At, res.EndNs, "the reply ends at its [DONE] or last event")
		})
	}
}

// TestRequireStreamCompletionFails: what a stream without the flag skips
// or accepts fails the request under it, each naming the problem; the same
// replies without the flag are read as before.
func TestRequireStreamCompletionFails(t *testing.T) {
	tests := []struct {
		name    string
		h       http.HandlerFunc
		typ     string // the error type under the flag
		msg     string // held by the message
		without bool   // the reply is a success without the flag
	}{
		{name: "empty data event", h: sseHandler(tokA, "data:\n\n", tokB, fin, usage, done),
			typ: ErrTypeInvalidResponse, msg: "an empty data: event", without: true},
		{name: "blank data event", h: sseHandler(tokA, "data:    \n\n", tokB, fin, usage, done),
			typ: ErrTypeInvalidResponse, msg: "an empty data: event", without: true},
		{name: "malformed JSON", h: sseHandler(tokA, "data: {\"choices\": [\n\n", tokB, fin, usage, done),
			typ: ErrTypeInvalidResponse, msg: `not a chat completion chunk (--require-stream-completion fails the request on one): "{\"choices\": ["`, without: true},
		{name: "not JSON", h: sseHandler(tokA, "data: hello\n\n", tokB, fin, usage, done),
			typ: ErrTypeInvalidResponse, msg: `not a chat completion chunk (--require-stream-completion fails the request on one): "hello"`, without: true},
		{name: "a completions chunk", h: sseHandler(tokA, `data: {"choices":[{"index":0,"text":"x"}]}`+"\n\n", tokB, fin, usage, done),
			typ: ErrTypeInvalidResponse, msg: "choices[0] has no delta object", without: true},
		{name: "an object of no known shape", h: sseHandler(tokA, `data: {"id":"c1"}`+"\n\n", tokB, fin, usage, done),
			typ: ErrTypeInvalidResponse, msg: `not a chat completion chunk (--require-stream-completion fails the request on one): "{\"id\":\"c1\"}"`, without: true},
		{name: "data after [DONE]", h: sseHandler(tokA, tokB, fin, usage, done, tokA),
			typ: ErrTypeInvalidResponse, msg: "data after data: [DONE] (--require-stream-completion allows only comments and event metadata after it)", without: true},
		{name: "a second [DONE]", h: sseHandler(tokA, tokB, fin, usage, done, done),
			typ: ErrTypeInvalidResponse, msg: `data after data: [DONE] (--require-stream-completion allows only comments and event metadata after it): "[DONE]"`, without: true},
		{name: "named event with data after [DONE]", h: sseHandler(tokA, tokB, fin, usage, done, "event: extra\ndata: {}\n\n"),
			typ: ErrTypeInvalidResponse, msg: "data after data: [DONE]", without: true},
		{name: "no [DONE], a choice unfinished", h: sseHandler(tokA, choice1, tokB, fin, usage),
			typ: ErrTypeIncompleteStream, msg: "stream ended before data: [DONE] and before choice 1's finish_reason (--require-stream-completion needs one on every choice seen)", without: true},
		{name: "JSON reply", h: typedHandler("application/json", `{"error":{"message":"model overloaded","code":503}}`),
			typ: ErrTypeInvalidResponse, msg: `(application/json): --require-stream-completion needs a text/event-stream reply, got application/json; the body starts "{\"error\":{\"message\":\"model overloaded\",\"code\":503}}"`},
		{name: "SSE labelled text/plain", h: typedHandler("text/plain; charset=utf-8", tokA, tokB, fin, usage, done),
			typ: ErrTypeInvalidResponse, msg: `got text/plain; charset=utf-8; the body starts "data: {`, without: true},
		{name: "no Content-Type", h: typedHandler("", tokA, tokB, fin, usage, done),
			typ: ErrTypeInvalidResponse, msg: "got no Content-Type", without: true},
		{name: "empty HTML page", h: typedHandler("text/html", ""),
			typ: ErrTypeInvalidResponse, msg: "got text/html; the body is empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, _ := strictDo(t, true, tc.h, nil)
			require.NotNil(t, res.Err, "a success under --require-stream-completion")
			assert.Equal(t, tc.typ, res.Err.Type)
			assert.Equal(t, 200, res.Err.Code)
			assert.Contains(t, res.Err.Message, tc.msg)
			assert.Positive(t, res.EndNs)

			before, _ := strictDo(t, false, tc.h, nil)
			if tc.without {
				assert.Nil(t, before.Err, "without the flag: %+v", before.Err)
			}
		})
	}
}

// TestRequireStreamCompletionBoundsTheBodyQuoted: a non-SSE reply's body
// is quoted up to a bound, never whole.
func TestRequireStreamCompletionBoundsTheBodyQuoted(t *testing.T) {
	long := make([]byte, 10000)
	for i := range long {
		long[i] = 'a'
	}
	res, _ := strictDo(t, true, typedHandler("text/plain", string(long)), nil)
	require.NotNil(t, res.Err)
	assert.Less(t, len(res.Err.Message), 400)
	assert.Contains(t, res.Err.Message, `aaaa…"`)
}

// TestRequireStreamCompletionBoundsTheChoices: an endless stream of new
// choice indexes fails once past the choices the flag keeps track of, not
// grows the client without end.
func TestRequireStreamCompletionBoundsTheChoices(t *testing.T) {
	res, _ := strictDo(t, true, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, tokA)
		for i := 1; i < 64+maxChoices+100 && r.Context().Err() == nil; i++ {
			fmt.Fprintf(w, `data: {"choices":[{"index":%d,"delta":{"content":"x"},"finish_reason":null}]}`+"\n\n", i)
		}
	}, nil)
	require.NotNil(t, res.Err, "a success under --require-stream-completion")
	assert.Equal(t, ErrTypeInvalidResponse, res.Err.Type)
	assert.Equal(t, fmt.Sprintf("the stream carried more than %d choices", 64+maxChoices), res.Err.Message)
}

// TestRequireStreamCompletionSkipsRequestsThatDoNotStream: a request whose
// own body sets stream to false (a turn's extra, a payload sent as it is)
// is not checked: its JSON reply is read whole, as without the flag.
func TestRequireStreamCompletionSkipsRequestsThatDoNotStream(t *testing.T) {
	whole := `{"choices":[{"index":0,"message":{"role":"assistant","content":"AB"},"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`
	for name, edit := range map[string]func(*Request){
		"turn extra":      func(r *Request) { r.TurnExtra = map[string]any{"stream": false} },
		"payload":         func(r *Request) { r.Payload = json.RawMessage(`{"model":"m","messages":[],"stream":false}`) },
		"payload without": func(r *Request) { r.Payload = json.RawMessage(`{"model":"m","messages":[]}`) },
	} {
		t.Run(name, func(t *testing.T) {
			var sent map[string]any
			res, _ := strictDo(t, true, func(w http.ResponseWriter, r *http.Request) {
				require.NoError(t, json.NewDecoder(r.Body).Decode(&sent))
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, whole)
			}, edit)
			require.Nil(t, res.Err, "%+v", res.Err)
			assert.NotEqual(t, true, sent["stream"])
			texts, _ := outputs(res.Chunks)
			assert.Equal(t, []string{"AB"}, texts)
		})
	}
	// A turn that asks to stream after all is checked.
	res, _ := strictDo(t, true, typedHandler("application/json", whole), func(r *Request) {
		r.Extra = map[string]any{"stream": false}
		r.TurnExtra = map[string]any{"stream": true}
	})
	require.NotNil(t, res.Err)
	assert.Contains(t, res.Err.Message, "needs a text/event-stream reply, got application/json")
}

// TestRequireStreamCompletionBreakAfterDone: a body that breaks after
// [DONE] fails under the flag, which reads the body to its end; without it
// the reply ended at [DONE].
func TestRequireStreamCompletionBreakAfterDone(t *testing.T) {
	h := func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
		for _, p := range []string{tokA, tokB, fin, usage, done} {
			fmt.Fprintf(buf, "%x\r\n%s\r\n", len(p), p)
		}
		buf.WriteString("20\r\n: cut") // a chunk of 32 bytes announced, 5 sent
		buf.Flush()
	}
	res, _ := strictDo(t, true, h, nil)
	require.NotNil(t, res.Err)
	assert.Equal(t, ErrTypeIncompleteStream, res.Err.Type)
	assert.Contains(t, res.Err.Message, "after data: [DONE]: ")
	before, _ := strictDo(t, false, h, nil)
	assert.Nil(t, before.Err)
}

// TestChoiceSet: every choice seen, beyond the 64 held in bits too, must
// finish; the lowest unfinished one is named.
func TestChoiceSet(t *testing.T) {
	var s choiceSet
	s.observe([]wireChoice{{Index: 0}, {Index: 3}, {Index: 70}})
	i, open := s.unfinished()
	assert.True(t, open)
	assert.Equal(t, 0, i)
	s.observe([]wireChoice{{Index: 0, has: finished}, {Index: 3, has: finished}})
	i, open = s.unfinished()
	assert.True(t, open)
	assert.Equal(t, 70, i)
	s.observe([]wireChoice{{Index: 70, has: finished}, {Index: 70}})
	_, open = s.unfinished()
	assert.False(t, open, "a choice stays finished")
}
