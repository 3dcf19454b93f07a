package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/ctxtest"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// mockURL serves the mock server on loopback, recording each request's
// messages, and returns its chat completions URL.
func mockURL(t *testing.T, cfg mock.Config) (string, *bodies) {
	t.Helper()
	srv, err := mock.New(cfg)
	require.NoError(t, err)
	rec := &bodies{}
	ts := httptest.NewServer(rec.wrap(srv.Handler()))
	t.Cleanup(ts.Close)
	u, err := ChatURL(ts.URL)
	require.NoError(t, err)
	return u, rec
}

// bodies records the messages of every request a handler served.
type bodies struct {
	mu   sync.Mutex
	sent [][]map[string]any
}

func (b *bodies) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body struct {
			Messages []map[string]any `json:"messages"`
		}
		_ = json.Unmarshal(raw, &body)
		b.mu.Lock()
		b.sent = append(b.sent, body.Messages)
		b.mu.Unlock()
		r.Body = io.NopCloser(strings.NewReader(string(raw)))
		next.ServeHTTP(w, r)
	})
}

func (b *bodies) messages() [][]map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sent
}

func config(t *testing.T, u string) Config {
	t.Helper()
	tok, err := tokenizer.Load("")
	require.NoError(t, err)
	return Config{URL: u, Model: "mock-model", Tokenizer: tok, Version: "test"}
}

// syncBuffer is an output written by Run and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var tpsLine = regexp.MustCompile(`TPS:  ([0-9.]+) tokens/s \((\d+) tokens in ([0-9.]+)s\)`)

func TestQuickPrintsTheReplyAndItsFigures(t *testing.T) {
	u, rec := mockURL(t, mock.Config{TTFT: 5, ITL: 1})
	cfg := config(t, u)
	var out, errOut syncBuffer
	msg := "say hello in one short sentence"
	require.NoError(t, Run(context.Background(), cfg, &msg, strings.NewReader(""), &out, &errOut))
	got := out.String()
	lines := strings.Split(strings.TrimSpace(got), "\n")
	require.GreaterOrEqual(t, len(lines), 5, got)
	assert.Equal(t, "Using model: mock-model", lines[0])
	reply := lines[1]
	assert.Regexp(t, `^TTFT: \d+\.\d\d ms$`, lines[2])
	m := tpsLine.FindStringSubmatch(got)
	require.NotNil(t, m, got)
	tokens, _ := strconv.Atoi(m[2])
	assert.Equal(t, cfg.Tokenizer.Count(reply), tokens, "the OSL is the client's count of the reply printed")
	if strings.Contains(got, "ITL:") { // absent when a busy machine read the whole reply at once (TestStatsLines)
		assert.Regexp(t, `ITL:  \d+\.\d\d ms/token \(decode \d+\.\d\d tokens/s\)`, got)
	}
	assert.Regexp(t, `Cache: 0/\d+ prompt tokens cached \(0\.0%\)`, got)
	assert.Empty(t, errOut.String())
	sent := rec.messages()
	require.Len(t, sent, 1)
	assert.Equal(t, []map[string]any{{"role": "user", "content": msg}}, sent[0])
}

func TestHistoryIsResentAndTheCacheClimbs(t *testing.T) {
	u, rec := mockURL(t, mock.Config{})
	cfg := config(t, u)
	cfg.SystemPrompt = "You are a careful assistant who answers questions about geography with precision and care."
	var out, errOut syncBuffer
	in := strings.NewReader("what is the capital of France? Tell me about it.\n\n   \nand its population?\n")
	require.NoError(t, Run(context.Background(), cfg, nil, in, &out, &errOut))
	sent := rec.messages()
	require.Len(t, sent, 2, "blank lines are not sent")
	require.Len(t, sent[1], 4, "system, the first exchange, the new message")
	assert.Equal(t, "system", sent[1][0]["role"])
	assert.Equal(t, sent[0][1], sent[1][1], "the first user message resent")
	assert.Equal(t, "assistant", sent[1][2]["role"])
	assert.NotEmpty(t, sent[1][2]["content"])
	assert.Equal(t, "and its population?", sent[1][3]["content"])
	caches := regexp.MustCompile(`Cache: (\d+)/(\d+)`).FindAllStringSubmatch(out.String(), -1)
	require.Len(t, caches, 2, out.String())
	second, _ := strconv.Atoi(caches[1][1])
	assert.Positive(t, second, "the resent prefix hits the mock's prefix cache")
}

func TestNoHistorySendsEachMessageAlone(t *testing.T) {
	u, rec := mockURL(t, mock.Config{})
	cfg := config(t, u)
	cfg.NoHistory = true
	var out, errOut syncBuffer
	require.NoError(t, Run(context.Background(), cfg, nil, strings.NewReader("one\ntwo\n"), &out, &errOut))
	sent := rec.messages()
	require.Len(t, sent, 2)
	assert.Equal(t, []map[string]any{{"role": "user", "content": "two"}}, sent[1])
}

// flaky answers its first request with a 500, then passes to next.
func flaky(next http.Handler) http.Handler {
	var n sync.Mutex
	first := true
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Lock()
		f := first
		first = false
		n.Unlock()
		if f {
			http.Error(w, `{"error":{"message":"the engine is warming up"}}`, http.StatusInternalServerError)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func TestAFailedTurnIsReportedAndTheSessionGoesOn(t *testing.T) {
	srv, err := mock.New(mock.Config{})
	require.NoError(t, err)
	rec := &bodies{}
	ts := httptest.NewServer(flaky(rec.wrap(srv.Handler())))
	defer ts.Close()
	u, err := ChatURL(ts.URL)
	require.NoError(t, err)
	var out, errOut syncBuffer
	err = Run(context.Background(), config(t, u), nil, strings.NewReader("first\nsecond\n"), &out, &errOut)
	var failed *FailedTurns
	require.ErrorAs(t, err, &failed)
	assert.Equal(t, FailedTurns{N: 1, Of: 2}, *failed)
	assert.Contains(t, errOut.String(), "request failed:")
	assert.Contains(t, errOut.String(), "HTTP 500")
	assert.Contains(t, errOut.String(), "the engine is warming up")
	assert.Contains(t, out.String(), "TPS:")
	sent := rec.messages()
	require.Len(t, sent, 1, "the failed request never reached the mock")
	assert.Len(t, sent[0], 1, "the failed turn is not in the history")
}

// sseServer streams the given content chunks, then [DONE], or holds the
// stream open after them (hang) until the test ends.
func sseServer(t *testing.T, chunks []string, hang bool) string {
	t.Helper()
	done := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range chunks {
			b, _ := json.Marshal(map[string]any{"object": "chat.completion.chunk",
				"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": c}}}})
			fmt.Fprintf(w, "data: %s\n\n", b)
			w.(http.Flusher).Flush()
		}
		if hang {
			select {
			case <-done:
			case <-r.Context().Done():
			}
			return
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(func() { close(done); ts.Close() })
	u, err := ChatURL(ts.URL)
	require.NoError(t, err)
	return u
}

func TestAStalledStreamEndsTheTurn(t *testing.T) {
	cfg := config(t, sseServer(t, []string{"hello", " there"}, true))
	cfg.ReadTimeout = 50 * time.Millisecond
	var out, errOut syncBuffer
	msg := "hi"
	err := Run(context.Background(), cfg, &msg, strings.NewReader(""), &out, &errOut)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "AIPERF_CHAT_READ_TIMEOUT")
	// What arrived before the stall may or may not have been read within
	// 50 ms on a busy machine; that a reply prints as it streams is
	// TestAnEchoedKeyIsNeverPrinted's and the mock tests' to show.
}

func TestAnEchoedKeyIsNeverPrinted(t *testing.T) {
	key := "sk-live-0123456789abcdef"
	// The key whole, then split across three chunks.
	cfg := config(t, sseServer(t, []string{"your key is " + key + ", and again: sk-li", "ve-01234567", "89abcdef done"}, false))
	cfg.APIKey = key
	var out, errOut syncBuffer
	msg := "what is my key?"
	require.NoError(t, Run(context.Background(), cfg, &msg, strings.NewReader(""), &out, &errOut))
	assert.NotContains(t, out.String(), key)
	assert.NotContains(t, out.String(), "89abcdef")
	assert.Contains(t, out.String(), "your key is <redacted>, and again: <redacted> done")
}

func TestAReplyThatIsNotAStreamOfTheAPIFails(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body>login required</body></html>")
	}))
	defer ts.Close()
	u, err := ChatURL(ts.URL)
	require.NoError(t, err)
	var out, errOut syncBuffer
	msg := "hi"
	err = Run(context.Background(), config(t, u), &msg, strings.NewReader(""), &out, &errOut)
	require.Error(t, err)
	assert.NotContains(t, out.String(), "TPS:")
}

func TestAWholeReplyHasNoTTFT(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"a whole reply"},"finish_reason":"stop"}],`+
			`"usage":{"prompt_tokens":8,"completion_tokens":3,"total_tokens":11,"prompt_tokens_details":{"cached_tokens":0}}}`)
	}))
	defer ts.Close()
	u, err := ChatURL(ts.URL)
	require.NoError(t, err)
	var out, errOut syncBuffer
	msg := "hi"
	require.NoError(t, Run(context.Background(), config(t, u), &msg, strings.NewReader(""), &out, &errOut))
	assert.Contains(t, out.String(), "a whole reply\n")
	assert.Contains(t, out.String(), "TTFT: n/a (the reply was not streamed)")
	assert.NotContains(t, out.String(), "ITL:")
}

func TestAnInterruptAtThePromptEndsTheSession(t *testing.T) {
	u, _ := mockURL(t, mock.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in, w := io.Pipe() // input that never comes
	defer w.Close()
	out := &ctxtest.CancelOn{Marker: "> ", Cancel: cancel}
	done := make(chan error, 1)
	go func() { done <- Run(ctx, config(t, u), nil, in, out, io.Discard) }()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(time.Minute):
		t.Fatal("the session did not end at the interrupt")
	}
}

func TestChatURL(t *testing.T) {
	for in, want := range map[string]string{
		"localhost:8000":                             "http://localhost:8000/v1/chat/completions",
		"http://h:8000/":                             "http://h:8000/v1/chat/completions",
		"http://h:8000/v1":                           "http://h:8000/v1/chat/completions",
		"https://h/openai":                           "https://h/openai/v1/chat/completions",
		"http://h:8000/v1/chat/completions":          "http://h:8000/v1/chat/completions",
		" http://h:8000 ":                            "http://h:8000/v1/chat/completions",
		"http://user:pw@h:8000/v1/chat/completions/": "http://user:pw@h:8000/v1/chat/completions",
	} {
		got, err := ChatURL(in)
		if assert.NoError(t, err, in) {
			assert.Equal(t, want, got, in)
		}
	}
	for _, bad := range []string{"ftp://h/", "http://", "http://user:hunter2@h:port/", "http://user:hunter2@h:99999/v1",
		"http://h:8000/v1?q=a b&api_key=hunter2"} {
		_, err := ChatURL(bad)
		if assert.Error(t, err, bad) {
			assert.Contains(t, err.Error(), "--url")
			assert.NotContains(t, err.Error(), "hunter2")
		}
	}
}

func TestAnAPIKeyThatCannotBeSentIsRefused(t *testing.T) {
	require.NoError(t, CheckAPIKey("sk-fine-0123456789"))
	err := CheckAPIKey("sk-hunter2\x01tail")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--api-key holds a control character")
	assert.NotContains(t, err.Error(), "hunter2")
}

// TestStatsLines: a turn's figures from its record's stamps; the ITL line
// is left out when the decode took no time (the whole reply was read at
// once) or the reply had one token.
func TestStatsLines(t *testing.T) {
	const ms = int64(1e6)
	turn := Turn{Streamed: true, Record: metrics.Record{SentNs: 0, EndNs: 40 * ms,
		ResponseNs: metrics.StampsOf(10*ms, 20*ms, 30*ms, 40*ms), OutputTokens: 4}}
	assert.Equal(t, "TTFT: 10.00 ms\nTPS:  100.00 tokens/s (4 tokens in 0.04s)\nITL:  10.00 ms/token (decode 100.00 tokens/s)", turn.Stats())
	turn.Record.EndNs, turn.Record.ResponseNs = 10*ms, metrics.StampsOf(10*ms, 10*ms, 10*ms, 10*ms)
	assert.Equal(t, "TTFT: 10.00 ms\nTPS:  400.00 tokens/s (4 tokens in 0.01s)", turn.Stats())
}
