package endpoint

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// tick is the step of the test clock, so stamps are recognisable.
const tick = 1000

// testClock returns a clock that advances by tick on every call.
func testClock() func() int64 {
	var n atomic.Int64
	return func() int64 { return n.Add(tick) }
}

func newTestClient(t *testing.T, o Options) *Client {
	if o.Now == nil {
		o.Now = testClock()
	}
	c := New(o)
	t.Cleanup(c.Close)
	return c
}

func chatReq(url string, streaming bool) Request {
	return Request{URL: url, EndpointType: plan.EndpointChat, Model: "m", Prompt: "hi", MaxTokens: 4, Streaming: streaming}
}

// outputs returns the texts and reasonings of the chunks.
func outputs(chunks []Chunk) (texts, reasonings []string) {
	for _, c := range chunks {
		texts = append(texts, c.Text)
		reasonings = append(reasonings, c.Reasoning)
	}
	return texts, reasonings
}

const (
	role  = `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}` + "\n\n"
	tokA  = `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"A"},"finish_reason":null}]}` + "\n\n"
	tokB  = `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"B"},"finish_reason":null}]}` + "\n\n"
	fin   = `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"length"}]}` + "\n\n"
	usage = `data: {"id":"c1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7,` +
		`"prompt_tokens_details":{"cached_tokens":3},"completion_tokens_details":{"reasoning_tokens":1}}}` + "\n\n"
	done = "data: [DONE]\n\n"
)

func TestStreamQuirks(t *testing.T) {
	fullUsage := &metrics.Usage{PromptTokens: 5, CompletionTokens: 2, TotalTokens: new(7), CachedTokens: ptr(3), ReasoningTokens: 1,
		ReasoningReported: true}
	tests := []struct {
		name       string
		completion bool
		wire       []string
		texts      []string
		reasonings []string
		usage      *metrics.Usage
		err        *metrics.Error // Message compared with Contains
	}{
		{name: "openai shape", wire: []string{role, tokA, tokB, fin, usage, done},
			texts: []string{"A", "B"}, reasonings: []string{"", ""}, usage: fullUsage},
		{name: "data without space", wire: []string{
			`data:{"choices":[{"delta":{"content":"A"}}]}` + "\n\n", "data:[DONE]\n\n"},
			texts: []string{"A"}, reasonings: []string{""}},
		{name: "crlf", wire: []string{
			`data: {"choices":[{"delta":{"content":"A"}}]}` + "\r\n\r\n", `data: {"choices":[{"delta":{"content":"B"}}]}` + "\r\n\r\n", "data: [DONE]\r\n\r\n"},
			texts: []string{"A", "B"}, reasonings: []string{"", ""}},
		{name: "comment lines", wire: []string{": OPENROUTER PROCESSING\n\n", tokA, ": keep-alive\n", tokB, done},
			texts: []string{"A", "B"}, reasonings: []string{"", ""}},
		{name: "event and id lines", wire: []string{"event: message\nid: 1\n" + tokA, "event: message\n" + done},
			texts: []string{"A"}, reasonings: []string{""}},
		{name: "several data lines", wire: []string{"data: {\"choices\":\ndata: [{\"delta\":{\"content\":\"A\"}}]}\n\n", done},
			texts: []string{"A"}, reasonings: []string{""}},
		{name: "trailing space (trt-llm)", wire: []string{strings.TrimSuffix(role, "\n\n") + " \n\n", strings.TrimSuffix(tokA, "\n\n") + " \n\n", "data: [DONE] \n\n"},
			texts: []string{"A"}, reasonings: []string{""}},
		{name: "usage-only final chunk with empty choices", wire: []string{tokA, usage, done},
			texts: []string{"A"}, reasonings: []string{""}, usage: fullUsage},
		{name: "usage on the last choice chunk (llama-server completions)", completion: true, wire: []string{
			`data: {"choices":[{"text":"x","index":0,"finish_reason":null}],"object":"text_completion"}` + "\n\n",
			`data: {"choices":[{"text":"y","index":0,"finish_reason":"length"}],"object":"text_completion","usage":{"completion_tokens":2,"prompt_tokens":9,"total_tokens":11}}` + "\n\n",
			done},
			texts: []string{"x", "y"}, reasonings: []string{"", ""}, usage: &metrics.Usage{PromptTokens: 9, CompletionTokens: 2, TotalTokens: new(11)}},
		{name: "continuous usage keeps the last", wire: []string{
			`data: {"choices":[{"delta":{"content":"A"}}],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}` + "\n\n",
			`data: {"choices":[{"delta":{"content":"B"}}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}` + "\n\n",
			`data: {"choices":[],"usage":null}` + "\n\n", done},
			texts: []string{"A", "B"}, reasonings: []string{"", ""}, usage: &metrics.Usage{PromptTokens: 5, CompletionTokens: 2, TotalTokens: new(7)}},
		{name: "reasoning_content and reasoning", wire: []string{role,
			`data: {"choices":[{"delta":{"reasoning_content":"think"}}]}` + "\n\n",
			`data: {"choices":[{"delta":{"content":null,"reasoning":"more"}}]}` + "\n\n",
			tokA, done},
			texts: []string{"", "", "A"}, reasonings: []string{"think", "more", ""}},
		{name: "role-only and finish chunks do not count", wire: []string{role, fin, tokA, fin, done},
			texts: []string{"A"}, reasonings: []string{""}},
		// The name is generated text (AIPerf counts name + arguments): its
		// chunk is the first token's, and its text is in the OSL.
		{name: "tool-call name and arguments count as content", wire: []string{role,
			`data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"get_weather","arguments":""}}]}}]}` + "\n\n",
			`data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":"}}]}}]}` + "\n\n",
			`data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}}]}` + "\n\n",
			done},
			texts: []string{"get_weather", `{"a":`, `1}`}, reasonings: []string{"", "", ""}},
		{name: "content, then two tool calls whole in one chunk", wire: []string{
			`data: {"choices":[{"delta":{"content":"ok ","tool_calls":[{"index":0,"function":{"name":"f","arguments":"{}"}},` +
				`{"index":1,"function":{"name":"g","arguments":"[1]"}}]}}]}` + "\n\n",
			done},
			texts: []string{"ok f{}g[1]"}, reasonings: []string{""}},
		{name: "unknown objects are ignored", wire: []string{`data: {"object":"ping"}` + "\n\n", "data: not json\n\n", `data: {"choices":"odd"}` + "\n\n", tokA, done},
			texts: []string{"A"}, reasonings: []string{""}},
		{name: "escaped text", wire: []string{`data: {"choices":[{"delta":{"content":"line\n\"q\" \u00e9"}}]}` + "\n\n", done},
			texts: []string{"line\n\"q\" é"}, reasonings: []string{""}},
		{name: "error object frame in a 200 stream (vllm)", wire: []string{role, tokA,
			`data: {"error":{"object":"error","message":"engine died","type":"InternalServerError","code":500}}` + "\n\n", done},
			texts: []string{"A"}, reasonings: []string{""},
			err: &metrics.Error{Code: 500, Type: ErrTypeStream, Message: "engine died"}},
		{name: "error string frame", wire: []string{`data: {"error":"overloaded"}` + "\n\n", done},
			err: &metrics.Error{Code: 200, Type: ErrTypeStream, Message: "overloaded"}},
		{name: "error frame with a string code", wire: []string{`data: {"error":{"message":"bad","code":"invalid_request"}}` + "\n\n", done},
			err: &metrics.Error{Code: 200, Type: ErrTypeStream, Message: "bad"}},
		{name: "event: error", wire: []string{tokA, "event: error\ndata: {\"message\":\"kv cache full\"}\n\n", done},
			texts: []string{"A"}, reasonings: []string{""},
			err: &metrics.Error{Code: 200, Type: ErrTypeStream, Message: "kv cache full"}},
		{name: "connection dropped before [DONE]", wire: []string{role, tokA},
			texts: []string{"A"}, reasonings: []string{""},
			err: &metrics.Error{Code: 200, Type: ErrTypeIncompleteStream, Message: "before data: [DONE]"}},
		{name: "connection dropped mid-event", wire: []string{tokA, `data: {"choices":[{"delta":{"con`},
			texts: []string{"A"}, reasonings: []string{""},
			err: &metrics.Error{Code: 200, Type: ErrTypeIncompleteStream}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newRawServer(t, sseClose(tc.wire...))
			c := newTestClient(t, Options{})
			req := chatReq(srv.url("/v1/chat/completions"), true)
			if tc.completion {
				req.EndpointType = plan.EndpointCompletions
			}
			res := c.Do(context.Background(), req)
			texts, reasonings := outputs(res.Chunks)
			assert.Equal(t, tc.texts, texts)
			assert.Equal(t, tc.reasonings, reasonings)
			assert.Equal(t, tc.usage, res.Usage)
			assert.Equal(t, 200, res.Status)
			assert.False(t, res.Retried)
			if tc.err == nil {
				require.Nil(t, res.Err)
			} else {
				require.NotNil(t, res.Err)
				assert.Equal(t, tc.err.Code, res.Err.Code)
				assert.Equal(t, tc.err.Type, res.Err.Type)
				assert.Contains(t, res.Err.Message, tc.err.Message)
			}
			assertStamps(t, res)
		})
	}
}

// assertStamps checks that every stamp comes from the test clock and that
// they are ordered: sent < chunks (non-decreasing) <= end.
func assertStamps(t *testing.T, res Response) {
	t.Helper()
	require.Positive(t, res.SentNs)
	prev := res.SentNs
	for i, ch := range res.Chunks {
		assert.Zero(t, ch.At%tick, "chunk %d stamp %d not from the injected clock", i, ch.At)
		if i == 0 {
			assert.Greater(t, ch.At, prev, "first chunk after send")
		} else {
			assert.GreaterOrEqual(t, ch.At, prev, "chunk %d out of order", i)
		}
		prev = ch.At
	}
	assert.Zero(t, res.EndNs%tick)
	assert.GreaterOrEqual(t, res.EndNs, prev)
}

func TestStreamStampsSeparateReads(t *testing.T) {
	// The server writes each event only after the previous one was
	// requested to be read: separate writes with a pause give separate reads.
	srv := newRawServer(t, func(_ *rawServer, conn net.Conn, _ int, _ *http.Request, _ []byte) bool {
		io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n")
		for _, p := range []string{tokA, tokB, tokA, done} {
			time.Sleep(20 * time.Millisecond) // spacing only; nothing asserts on durations
			io.WriteString(conn, p)
		}
		return false
	})
	c := newTestClient(t, Options{})
	res := c.Do(context.Background(), chatReq(srv.url("/v1/chat/completions"), true))
	require.Nil(t, res.Err)
	require.Len(t, res.Chunks, 3)
	assertStamps(t, res)
}

func TestNonStreaming(t *testing.T) {
	tests := []struct {
		name       string
		completion bool
		body       string
		text       string
		reasoning  string
		usage      *metrics.Usage
	}{
		{name: "chat", body: `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hello"},"finish_reason":"stop"}],` +
			`"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`,
			text: "hello", usage: &metrics.Usage{PromptTokens: 3, CompletionTokens: 1, TotalTokens: new(4)}},
		{name: "chat reasoning_content", body: `{"choices":[{"message":{"content":"ok","reasoning_content":"why"}}]}`, text: "ok", reasoning: "why"},
		{name: "chat reasoning", body: `{"choices":[{"message":{"content":"ok","reasoning":"why"}}]}`, text: "ok", reasoning: "why"},
		{name: "chat tool call: name and arguments", body: `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,` +
			`"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_current_weather_in_city","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`,
			text: "get_current_weather_in_city{}"},
		{name: "chat content and tool calls", body: `{"choices":[{"message":{"content":"Sure. ","tool_calls":[` +
			`{"function":{"arguments":"{\"x\":1}","name":"f"}},{"function":{"name":"g"}}]}}]}`,
			text: `Sure. f{"x":1}g`},
		{name: "completions", completion: true, body: `{"object":"text_completion","choices":[{"text":"abc","index":0}],"usage":{"prompt_tokens":2,"completion_tokens":3,"total_tokens":5}}`,
			text: "abc", usage: &metrics.Usage{PromptTokens: 2, CompletionTokens: 3, TotalTokens: new(5)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newRawServer(t, respond(fixed(200, "application/json", tc.body)))
			c := newTestClient(t, Options{})
			req := chatReq(srv.url("/v1/x"), false)
			if tc.completion {
				req.EndpointType = plan.EndpointCompletions
			}
			res := c.Do(context.Background(), req)
			require.Nil(t, res.Err)
			require.Len(t, res.Chunks, 1)
			assert.Equal(t, tc.text, res.Chunks[0].Text)
			assert.Equal(t, tc.reasoning, res.Chunks[0].Reasoning)
			assert.Equal(t, tc.usage, res.Usage)
			assert.Equal(t, res.EndNs, res.Chunks[0].At, "stamped when the body was read")
			assertStamps(t, res)
		})
	}
}

func TestStreamingRequestAnsweredWithJSON(t *testing.T) {
	srv := newRawServer(t, respond(fixed(200, "application/json; charset=utf-8", `{"choices":[{"message":{"content":"whole"}}]}`)))
	res := newTestClient(t, Options{}).Do(context.Background(), chatReq(srv.url("/"), true))
	require.Nil(t, res.Err)
	texts, _ := outputs(res.Chunks)
	assert.Equal(t, []string{"whole"}, texts)
}

func TestErrorBodyInNonStreaming200(t *testing.T) {
	srv := newRawServer(t, respond(fixed(200, "application/json", `{"error":{"message":"nope","code":422}}`)))
	res := newTestClient(t, Options{}).Do(context.Background(), chatReq(srv.url("/"), false))
	require.NotNil(t, res.Err)
	assert.Equal(t, metrics.Error{Code: 422, Type: ErrTypeStream, Message: "nope"}, *res.Err)
}

func TestHTTPErrors(t *testing.T) {
	long := strings.Repeat("é", 300)
	tests := []struct {
		name        string
		status      int
		contentType string
		body        string
		want        string
	}{
		{"openai json", 404, "application/json", `{"error":{"message":"The model 'x' does not exist","type":"NotFoundError","code":404}}`, "The model 'x' does not exist"},
		{"error string", 429, "application/json", `{"error":"rate limited"}`, "rate limited"},
		{"message (old vllm)", 400, "application/json", `{"object":"error","message":"too long","type":"BadRequestError","code":400}`, "too long"},
		{"detail (fastapi)", 404, "application/json", `{"detail":"Not Found"}`, "Not Found"},
		{"text body", 500, "text/plain", "Internal Server Error\n", "Internal Server Error"},
		{"empty body", 503, "text/plain", "", "Service Unavailable"},
		{"long text is truncated", 502, "text/html", long, long[:200] + "…"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, streaming := range []bool{false, true} {
				srv := newRawServer(t, respond(fixed(tc.status, tc.contentType, tc.body)))
				res := newTestClient(t, Options{}).Do(context.Background(), chatReq(srv.url("/"), streaming))
				require.NotNil(t, res.Err)
				assert.Equal(t, metrics.Error{Code: tc.status, Type: ErrTypeHTTP, Message: tc.want}, *res.Err)
				assert.Equal(t, tc.status, res.Status)
				assert.Empty(t, res.Chunks)
			}
		})
	}
}

func TestHTTPErrorChunkedKeepsConnection(t *testing.T) {
	srv := newRawServer(t, respond(chunked(500, "application/json", `{"error":`, `{"message":"oops"}}`)))
	c := newTestClient(t, Options{})
	for range 3 {
		res := c.Do(context.Background(), chatReq(srv.url("/"), true))
		require.NotNil(t, res.Err)
		assert.Equal(t, "oops", res.Err.Message)
	}
	assert.EqualValues(t, 1, srv.conns.Load(), "error bodies are drained and the connection reused")
}

func TestSecretRedacted(t *testing.T) {
	const key = "sk-very-secret-42"
	srv := newRawServer(t, respond(fixed(401, "application/json", `{"error":{"message":"Incorrect API key provided: `+key+`"}}`)))
	c := newTestClient(t, Options{Headers: http.Header{"Authorization": {"Bearer " + key}}})
	res := c.Do(context.Background(), chatReq(srv.url("/"), false))
	require.NotNil(t, res.Err)
	assert.NotContains(t, res.Err.Message, key)
	assert.Contains(t, res.Err.Message, "Incorrect API key provided: "+plan.Redacted)
}

func TestKeepAliveReuse(t *testing.T) {
	srv := newRawServer(t, respond(chunked(200, "text/event-stream", tokA, tokB, usage, done)))
	c := newTestClient(t, Options{MaxConns: 4})
	for range 10 {
		res := c.Do(context.Background(), chatReq(srv.url("/"), true))
		require.Nil(t, res.Err)
		require.Len(t, res.Chunks, 2)
		assert.False(t, res.Retried)
	}
	assert.EqualValues(t, 1, srv.conns.Load(), "sequential requests share one connection")
}

func TestIdlePoolHoldsConcurrency(t *testing.T) {
	// Every round sends conc requests that the server answers only once all
	// of them arrived, so each round has conc requests in flight at once.
	// Rounds after the first must reuse the first round's connections:
	// none may have been dropped for want of idle slots (Go's default
	// keeps 2 per host).
	const conc, rounds = 8, 4
	var mu sync.Mutex
	var waiting []chan struct{}
	ok := chunked(200, "text/event-stream", tokA, done)
	srv := newRawServer(t, func(s *rawServer, conn net.Conn, _ int, _ *http.Request, _ []byte) bool {
		release := make(chan struct{})
		mu.Lock()
		if waiting = append(waiting, release); len(waiting) == conc {
			for _, w := range waiting {
				close(w)
			}
			waiting = nil
		}
		mu.Unlock()
		select {
		case <-release:
		case <-s.done:
			return false
		}
		io.WriteString(conn, ok)
		return true
	})
	c := newTestClient(t, Options{MaxConns: conc})
	for range rounds {
		var wg sync.WaitGroup
		for range conc {
			wg.Go(func() {
				res := c.Do(context.Background(), chatReq(srv.url("/"), true))
				assert.Nil(t, res.Err)
				assert.False(t, res.Retried)
			})
		}
		wg.Wait()
	}
	assert.EqualValues(t, conc*rounds, srv.requests.Load())
	assert.EqualValues(t, conc, srv.conns.Load(), "one connection per in-flight request, all reused")
}

func TestDeadReusedConnectionIsRetried(t *testing.T) {
	// Serves the first request of every connection, then reads the next one
	// and closes without a byte: what llama-server does to a pooled
	// connection it advertised as keep-alive.
	// It takes the dropped request (stamping when, on the client's clock)
	// before it closes: the retried request's time runs from its first send.
	ok := chunked(200, "text/event-stream", tokA, done)
	clock := testClock()
	var dropped atomic.Int64
	srv := newRawServer(t, func(_ *rawServer, conn net.Conn, n int, _ *http.Request, _ []byte) bool {
		if n > 0 {
			dropped.Store(clock())
			return false
		}
		io.WriteString(conn, ok)
		return true
	})
	c := newTestClient(t, Options{Now: clock})
	first := c.Do(context.Background(), chatReq(srv.url("/"), true))
	require.Nil(t, first.Err)
	assert.False(t, first.Retried)

	second := c.Do(context.Background(), chatReq(srv.url("/"), true))
	require.Nil(t, second.Err, "a dead pooled connection is not a server error")
	assert.True(t, second.Retried)
	texts, _ := outputs(second.Chunks)
	assert.Equal(t, []string{"A"}, texts)
	assert.EqualValues(t, 2, srv.conns.Load())
	assert.EqualValues(t, 3, srv.requests.Load())
	assertStamps(t, second)
	assert.Less(t, second.SentNs, dropped.Load(), "sent before the dropped attempt arrived, not when retried")
}

func TestRetriedOnlyOnce(t *testing.T) {
	ok := chunked(200, "text/event-stream", tokA, done)
	srv := newRawServer(t, func(s *rawServer, conn net.Conn, _ int, _ *http.Request, _ []byte) bool {
		if s.requests.Load() > 1 {
			return false // every later request dies unanswered
		}
		io.WriteString(conn, ok)
		return true
	})
	c := newTestClient(t, Options{})
	require.Nil(t, c.Do(context.Background(), chatReq(srv.url("/"), true)).Err)
	res := c.Do(context.Background(), chatReq(srv.url("/"), true))
	require.NotNil(t, res.Err)
	assert.True(t, res.Retried)
	assert.Equal(t, ErrTypeConnection, res.Err.Type)
	assert.Contains(t, res.Err.Message, "closed the connection")
	assert.EqualValues(t, 3, srv.requests.Load(), "one original, one retry")
}

func TestNoRetryAfterAResponseByte(t *testing.T) {
	ok := chunked(200, "text/event-stream", tokA, done)
	srv := newRawServer(t, func(_ *rawServer, conn net.Conn, n int, _ *http.Request, _ []byte) bool {
		if n > 0 {
			io.WriteString(conn, "HTTP/1.1 200 OK\r\n") // then dies
			return false
		}
		io.WriteString(conn, ok)
		return true
	})
	c := newTestClient(t, Options{})
	require.Nil(t, c.Do(context.Background(), chatReq(srv.url("/"), true)).Err)
	res := c.Do(context.Background(), chatReq(srv.url("/"), true))
	require.NotNil(t, res.Err)
	assert.False(t, res.Retried)
	assert.Equal(t, ErrTypeConnection, res.Err.Type)
	assert.EqualValues(t, 2, srv.requests.Load())
}

func TestServerClosingAfterEveryStream(t *testing.T) {
	// llama-server: "Connection: keep-alive", then the socket is closed.
	srv := newRawServer(t, func(_ *rawServer, conn net.Conn, _ int, _ *http.Request, _ []byte) bool {
		io.WriteString(conn, chunked(200, "text/event-stream", tokA, tokB, done))
		return false
	})
	c := newTestClient(t, Options{})
	for i := range 20 {
		res := c.Do(context.Background(), chatReq(srv.url("/"), true))
		require.Nil(t, res.Err, "request %d", i)
		require.Len(t, res.Chunks, 2)
	}
}

func TestTimeout(t *testing.T) {
	// stall writes raw, then holds the connection open until cleanup.
	stall := func(raw string) rawHandler {
		return func(s *rawServer, conn net.Conn, _ int, _ *http.Request, _ []byte) bool {
			io.WriteString(conn, raw)
			<-s.done
			return false
		}
	}
	const sseHead = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
	// The timeout leaves room for what the server wrote to be read before
	// it, beside CPU burners (-race); the subtests wait for it side by side.
	const timeout = 2 * time.Second
	timedOut := func(code int) *metrics.Error {
		return &metrics.Error{Code: code, Type: ErrTypeTimeout, Message: "request timed out after 2s"}
	}
	tests := []struct {
		name      string
		streaming bool
		raw       string
		want      *metrics.Error // Message compared with Contains
		chunks    int
	}{
		{"before headers", true, "", timedOut(0), 0},
		{"mid-stream", true, sseHead + "\r\n" + tokA, timedOut(200), 1},
		{"mid-body", false, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"choi",
			timedOut(200), 0},
		{"error body", true, "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 100\r\n\r\n{\"error\":\"overloaded",
			&metrics.Error{Code: 503, Type: ErrTypeHTTP, Message: `{"error":"overloaded`}, 0},
		// The response is complete at [DONE]; a body that never ends after
		// it costs at most the timeout and is not an error.
		{"after [DONE]", true, sseHead + "Transfer-Encoding: chunked\r\n\r\n" +
			fmt.Sprintf("%x\r\n%s\r\n", len(tokA+done), tokA+done), nil, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newRawServer(t, stall(tc.raw))
			c := newTestClient(t, Options{Timeout: timeout})
			got := make(chan Response, 1)
			go func() { got <- c.Do(context.Background(), chatReq(srv.url("/"), tc.streaming)) }()
			var res Response
			select {
			case res = <-got:
			case <-time.After(time.Minute): // liveness only, far above the timeout
				t.Fatal("Do outlived its request timeout")
			}
			if tc.want == nil {
				require.Nil(t, res.Err)
			} else {
				require.NotNil(t, res.Err)
				assert.Equal(t, tc.want.Type, res.Err.Type)
				assert.Equal(t, tc.want.Code, res.Err.Code)
				assert.Contains(t, res.Err.Message, tc.want.Message)
			}
			assert.Len(t, res.Chunks, tc.chunks)
			assert.False(t, res.Retried)
		})
	}
}

func TestCancelled(t *testing.T) {
	wrote := make(chan struct{})
	srv := newRawServer(t, func(s *rawServer, conn net.Conn, _ int, _ *http.Request, _ []byte) bool {
		io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"+tokA)
		close(wrote)
		<-s.done
		return false
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-wrote; cancel() }()
	res := newTestClient(t, Options{Timeout: time.Hour}).Do(ctx, chatReq(srv.url("/"), true))
	require.NotNil(t, res.Err)
	assert.Equal(t, ErrTypeCancelled, res.Err.Type)
	assert.Equal(t, metrics.CancelledCode, res.Err.Code, "AIPerf's code, not the status of a reply cut (nor 0 before one)")
}

func TestConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())

	res := newTestClient(t, Options{}).Do(context.Background(), chatReq("http://"+addr+"/v1/chat/completions", true))
	require.NotNil(t, res.Err)
	assert.Equal(t, metrics.Error{Type: ErrTypeConnection, Message: "connect to " + addr + ": connection refused"}, *res.Err)
	assert.Zero(t, res.Status)
	assert.False(t, res.Retried)
	assert.GreaterOrEqual(t, res.EndNs, res.SentNs)
}

func TestBadRequests(t *testing.T) {
	c := newTestClient(t, Options{})
	for _, req := range []Request{
		{URL: "http://127.0.0.1:1/", EndpointType: "generate"},
		{URL: "http://127.0.0.1:1/", EndpointType: plan.EndpointRaw},
		{URL: "::nonsense", EndpointType: plan.EndpointChat},
		{URL: "ftp://127.0.0.1/", EndpointType: plan.EndpointChat},
	} {
		res := c.Do(context.Background(), req)
		require.NotNil(t, res.Err, req.URL)
		assert.Equal(t, ErrTypeRequest, res.Err.Type)
	}
}

func TestRequestHeadersAndBody(t *testing.T) {
	var got *http.Request
	var gotBody []byte
	srv := newRawServer(t, func(_ *rawServer, conn net.Conn, _ int, req *http.Request, body []byte) bool {
		got, gotBody = req, body
		io.WriteString(conn, fixed(200, "application/json", `{"choices":[{"message":{"content":"x"}}]}`))
		return true
	})
	c := newTestClient(t, Options{Headers: http.Header{
		"Authorization": {"Bearer k"},
		"User-Agent":    {"aiperf/test"},
		"X-Custom":      {"1"},
		"Content-Type":  {"text/plain"}, // overridden
		"Host":          {"gateway.local"},
	}})
	req := chatReq(srv.url("/v1/chat/completions"), true)
	req.RequestID = "req-7"
	req.SessionID = "sess-3"
	res := c.Do(context.Background(), req)
	require.Nil(t, res.Err)
	require.NotNil(t, got)
	assert.Equal(t, "/v1/chat/completions", got.URL.Path)
	assert.Equal(t, "gateway.local", got.Host)
	assert.Equal(t, http.MethodPost, got.Method)
	assert.Equal(t, "application/json", got.Header.Get("Content-Type"))
	assert.Equal(t, "text/event-stream", got.Header.Get("Accept"))
	assert.Equal(t, "req-7", got.Header.Get("X-Request-ID"))
	assert.Equal(t, "sess-3", got.Header.Get("X-Correlation-ID"))
	assert.Equal(t, "sess-3", got.Header.Get("X-Session-Affinity"))
	assert.Equal(t, "Bearer k", got.Header.Get("Authorization"))
	assert.Equal(t, "aiperf/test", got.Header.Get("User-Agent"))
	assert.Equal(t, "1", got.Header.Get("X-Custom"))
	assert.Empty(t, got.Header.Get("Accept-Encoding"), "compression disabled")
	assert.Equal(t, "HTTP/1.1", got.Proto)
	want, err := Body(req)
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(gotBody))
}

func TestBody(t *testing.T) {
	tests := []struct {
		name string
		req  Request
		want string
	}{
		{"chat streaming",
			Request{EndpointType: plan.EndpointChat, Model: "m", Prompt: "hi <b>", MaxTokens: 8, Streaming: true},
			`{"max_completion_tokens":8,"messages":[{"role":"user","content":"hi <b>"}],"model":"m","stream":true,"stream_options":{"include_usage":true}}`},
		{"chat legacy max tokens",
			Request{EndpointType: plan.EndpointChat, Model: "m", Prompt: "hi", MaxTokens: 8, LegacyMaxTokens: true},
			`{"max_tokens":8,"messages":[{"role":"user","content":"hi"}],"model":"m","stream":false}`},
		{"chat without max tokens",
			Request{EndpointType: plan.EndpointChat, Model: "m", Prompt: "hi"},
			`{"messages":[{"role":"user","content":"hi"}],"model":"m","stream":false}`},
		{"completions",
			Request{EndpointType: plan.EndpointCompletions, Model: "m", Prompt: "once", MaxTokens: 3},
			`{"max_tokens":3,"model":"m","prompt":"once","stream":false}`},
		{"completions streaming",
			Request{EndpointType: plan.EndpointCompletions, Model: "m", Prompt: "once", Streaming: true},
			`{"model":"m","prompt":"once","stream":true,"stream_options":{"include_usage":true}}`},
		{"extra merged last",
			Request{EndpointType: plan.EndpointChat, Model: "m", Prompt: "p", MaxTokens: 8, Streaming: true,
				Extra: map[string]any{"max_completion_tokens": 2, "ignore_eos": true, "stream_options": map[string]any{"continuous_usage_stats": true}}},
			`{"ignore_eos":true,"max_completion_tokens":2,"messages":[{"role":"user","content":"p"}],"model":"m","stream":true,"stream_options":{"continuous_usage_stats":true,"include_usage":true}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Body(tc.req)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(b))
			assert.True(t, json.Valid(b))
		})
	}
	hist := Request{EndpointType: plan.EndpointChat, Model: "m", MaxTokens: 4,
		Messages: []Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hi"}, {Role: "assistant", Content: "hello"}, {Role: "user", Content: "again"}},
		Tools:    json.RawMessage(`[{"type":"function","function":{"name":"f"}}]`),
		Extra:    map[string]any{"temperature": 0, "top_p": 0.5}, TurnExtra: map[string]any{"temperature": 1}}
	b, err := Body(hist)
	require.NoError(t, err)
	assert.Equal(t, `{"max_completion_tokens":4,"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"},`+
		`{"role":"assistant","content":"hello"},{"role":"user","content":"again"}],"model":"m","stream":false,"temperature":1,`+
		`"tools":[{"type":"function","function":{"name":"f"}}],"top_p":0.5}`, string(b), "history, tools, the turn's extra over --extra-inputs")
	raw := Request{EndpointType: plan.EndpointChat, Model: "m", RawMessages: json.RawMessage(`[{"role":"user","content":"verbatim"}]`)}
	b, err = Body(raw)
	require.NoError(t, err)
	assert.Equal(t, `{"messages":[{"role":"user","content":"verbatim"}],"model":"m","stream":false}`, string(b))
	payload := json.RawMessage(`{"model":"x","messages":[],"custom":true}`)
	b, err = Body(Request{EndpointType: plan.EndpointChat, Payload: payload, Model: "ignored"})
	require.NoError(t, err)
	assert.Equal(t, string(payload), string(b), "a payload is sent as it is")

	_, err = Body(Request{EndpointType: "rankings"})
	require.ErrorContains(t, err, `unknown endpoint type "rankings"`)
}

func ptr[T any](v T) *T { return &v }
