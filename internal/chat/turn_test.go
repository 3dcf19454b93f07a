package chat

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// chunkLine is an SSE data line of a chat completion chunk with content.
func chunkLine(content string) string {
	b, _ := json.Marshal(map[string]any{"object": "chat.completion.chunk",
		"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": content}}}})
	return fmt.Sprintf("data: %s\n\n", b)
}

// lastMessage is the content of the last message of a chat request.
func lastMessage(r *http.Request) string {
	var body struct {
		Messages []struct{ Content string } `json:"messages"`
	}
	_ = json.NewDecoder(r.Body).Decode(&body)
	if len(body.Messages) == 0 {
		return ""
	}
	return body.Messages[len(body.Messages)-1].Content
}

// TestURLSecretsAreNeverPrinted: the password of --url, the Basic
// credential Go makes of it and a secret query value are secrets as in
// aiperf profile: a server echoing them in a reply (cut in pieces of three
// bytes, upper-cased too) or in an error has them redacted.
func TestURLSecretsAreNeverPrinted(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		decoded, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(auth, "Basic "))
		echo := fmt.Sprintf("auth=%s decoded=%s uri=%s shout=%s", auth, decoded, r.URL.RequestURI(), strings.ToUpper(string(decoded)))
		if lastMessage(r) == "fail" {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":{"message":%q}}`, echo)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < len(echo); i += 3 {
			fmt.Fprint(w, chunkLine(echo[i:min(i+3, len(echo))]))
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer ts.Close()
	u, err := ChatURL(strings.Replace(ts.URL, "://", "://alice:PassW0rdSecret99@", 1) + "/v1?api_key=QuerySecret12345")
	require.NoError(t, err)
	var out, errOut syncBuffer
	err = Run(context.Background(), config(t, u), nil, strings.NewReader("hi\nfail\n"), &out, &errOut)
	var failed *FailedTurns
	require.ErrorAs(t, err, &failed)
	assert.Equal(t, FailedTurns{N: 1, Of: 2}, *failed)
	printed := out.String() + errOut.String()
	assert.Contains(t, out.String(), "decoded=<redacted>")
	assert.Contains(t, errOut.String(), "HTTP 401")
	for _, secret := range []string{"PassW0rdSecret99", "PASSW0RDSECRET99", "QuerySecret12345",
		base64.StdEncoding.EncodeToString([]byte("alice:PassW0rdSecret99"))} {
		assert.NotContains(t, printed, secret)
	}
}

// TestADataLineThatIsNotAChunkFailsTheTurn: a stream with a line that is
// not a chat completion chunk is not a valid reply, though its chunks'
// text was printed: the turn fails, naming how many lines, and is left
// out of the history.
func TestADataLineThatIsNotAChunkFailsTheTurn(t *testing.T) {
	rec := &bodies{}
	ts := httptest.NewServer(rec.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, chunkLine("valid")+"data: {not json}\n\n"+`data: {"choices":[{"index":0,"delta":{"content":"trunc`+"\n\n")
		fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	})))
	defer ts.Close()
	u, err := ChatURL(ts.URL)
	require.NoError(t, err)
	var out, errOut syncBuffer
	msg := "hi"
	err = Run(context.Background(), config(t, u), &msg, strings.NewReader(""), &out, &errOut)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "InvalidResponse: 2 data lines of the stream were not a chat completion chunk")
	assert.NotContains(t, out.String(), "TPS:")

	err = Run(context.Background(), config(t, u), nil, strings.NewReader("one\ntwo\n"), &out, &errOut)
	var failed *FailedTurns
	require.ErrorAs(t, err, &failed)
	assert.Equal(t, FailedTurns{N: 2, Of: 2}, *failed)
	sent := rec.messages()
	require.Len(t, sent, 3)
	assert.Len(t, sent[2], 1, "the failed turn is not in the history")
}

// resetTimer is a stall timer that never fires on its own: it reports
// each restart on reset.
type resetTimer struct{ reset chan struct{} }

func (f *resetTimer) Reset(time.Duration) bool {
	select {
	case f.reset <- struct{}{}:
	default:
	}
	return true
}

func (f *resetTimer) Stop() bool { return true }

// sendRestarting sends one message through a session whose stall timer
// reports its restarts to the server (restarted), within a generous bound.
func sendRestarting(t *testing.T, u string, restarted chan struct{}) (string, error) {
	t.Helper()
	s := New(config(t, u))
	defer s.Close()
	s.afterFunc = func(time.Duration, func()) stallTimer { return &resetTimer{reset: restarted} }
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out strings.Builder
	_, err := s.Send(ctx, "hi", &out)
	return out.String(), err
}

// TestEveryByteRestartsTheStallTimer: AIPERF_CHAT_READ_TIMEOUT bounds the
// wait for the next byte, not the next text: chunks without text (a
// role, an empty delta, a keep-alive) and a whole reply trickling in
// restart it. The server goes on only once the timer was restarted by
// what it sent before, so without that the turn never ends.
func TestEveryByteRestartsTheStallTimer(t *testing.T) {
	for name, parts := range map[string][2]string{
		"stream": {`data: {"choices":[{"index":0,"delta":{"role":"assistant"}}]}` + "\n\n: keep-alive\n\n" +
			`data: {"choices":[{"index":0,"delta":{}}]}` + "\n\n", chunkLine("finally") + "data: [DONE]\n\n"},
		"whole": {`{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant",`,
			`"content":"finally"},"finish_reason":"stop"}]}`},
	} {
		t.Run(name, func(t *testing.T) {
			restarted := make(chan struct{}, 1)
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if name == "stream" {
					w.Header().Set("Content-Type", "text/event-stream")
				} else {
					w.Header().Set("Content-Type", "application/json")
					w.Header().Set("Content-Length", fmt.Sprint(len(parts[0])+len(parts[1])))
				}
				fmt.Fprint(w, parts[0])
				w.(http.Flusher).Flush()
				select {
				case <-restarted:
				case <-r.Context().Done():
					return
				}
				fmt.Fprint(w, parts[1])
			}))
			defer ts.Close()
			u, err := ChatURL(ts.URL)
			require.NoError(t, err)
			out, err := sendRestarting(t, u, restarted)
			require.NoError(t, err)
			assert.Equal(t, "finally\n", out)
		})
	}
}

// failingWriter takes n bytes, then fails every write with err.
type failingWriter struct {
	mu  sync.Mutex
	n   int
	err error
}

func (w *failingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, w.err
	}
	w.n -= len(p)
	return len(p), nil
}

// TestAnOutputThatFailsIsNotAFailedTurn: a reader of the output that went
// away (EPIPE) ends the session quietly after the turn it went away in,
// the code the session's own; another failure (a full disk) is an
// OutputError. Neither is a failed turn.
func TestAnOutputThatFailsIsNotAFailedTurn(t *testing.T) {
	header := "Using model: mock-model\nPlease enter a message for the chat model (Ctrl-D to exit):\n> "
	for _, c := range []struct {
		name     string
		n        int // bytes taken before the output fails
		err      error
		requests int
	}{
		{"gone at once", 0, syscall.EPIPE, 0},
		{"gone mid-reply", len(header) + 3, syscall.EPIPE, 1},
		{"disk full mid-reply", len(header) + 3, syscall.ENOSPC, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			u, rec := mockURL(t, mock.Config{})
			out := &failingWriter{n: c.n, err: &fs.PathError{Op: "write", Path: "/dev/stdout", Err: c.err}}
			var errOut syncBuffer
			err := Run(context.Background(), config(t, u), nil, strings.NewReader("a\nb\nc\n"), out, &errOut)
			if c.err == syscall.EPIPE {
				assert.NoError(t, err)
			} else {
				var oe *OutputError
				require.ErrorAs(t, err, &oe)
				assert.ErrorIs(t, err, syscall.ENOSPC)
			}
			assert.Empty(t, errOut.String(), "no turn failed")
			assert.Len(t, rec.messages(), c.requests, "nothing is sent once the output is gone")
		})
	}
}

// TestALineOverAMiBIsBadInput: a message longer than chat takes ends the
// session with ErrLongLine, after the turns before it.
func TestALineOverAMiBIsBadInput(t *testing.T) {
	u, rec := mockURL(t, mock.Config{})
	in := "first\n" + strings.Repeat("a", MaxMessage+1) + "\nthird\n"
	var out, errOut syncBuffer
	err := Run(context.Background(), config(t, u), nil, strings.NewReader(in), &out, &errOut)
	require.ErrorIs(t, err, ErrLongLine)
	assert.Contains(t, err.Error(), "over 1 MiB")
	assert.Len(t, rec.messages(), 1)
}

// TestAReplyTooLargeNamesChatsBound: a reply over the client's bound is
// said to be over aiperf chat's, not over flags chat does not have.
func TestAReplyTooLargeNamesChatsBound(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"`)
		block := strings.Repeat("z", 1<<20)
		for range MaxReply>>20 + 1 {
			if _, err := io.WriteString(w, block); err != nil {
				return
			}
		}
		fmt.Fprint(w, `"}}]}`)
	}))
	defer ts.Close()
	u, err := ChatURL(ts.URL)
	require.NoError(t, err)
	var out, errOut syncBuffer
	msg := "hi"
	err = Run(context.Background(), config(t, u), &msg, strings.NewReader(""), &out, &errOut)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "larger than aiperf chat reads: over 16 MiB")
	assert.NotContains(t, err.Error(), "--max-event-bytes")
	assert.NotContains(t, err.Error(), "--export-level")
}

// TestADroppedCacheCountIsNamed: a cache count that is not one (above the
// prompt tokens, negative) is named on a Usage line, not left out.
func TestADroppedCacheCountIsNamed(t *testing.T) {
	for cached, want := range map[int]string{
		50: "Usage: the server's cache count is not used: 50 cached tokens, more than the 5 prompt tokens",
		-4: "Usage: the server's cache count is not used: a cached token count that is negative (-4)",
	} {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, chunkLine("one")+chunkLine(" two")+chunkLine(" three"))
			fmt.Fprintf(w, `data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8,`+
				`"prompt_tokens_details":{"cached_tokens":%d}}}`+"\n\ndata: [DONE]\n\n", cached)
		}))
		u, err := ChatURL(ts.URL)
		require.NoError(t, err)
		var out, errOut syncBuffer
		msg := "hi"
		require.NoError(t, Run(context.Background(), config(t, u), &msg, strings.NewReader(""), &out, &errOut))
		assert.Contains(t, out.String(), want+"\n")
		assert.NotContains(t, out.String(), "Cache:")
		ts.Close()
	}
}
