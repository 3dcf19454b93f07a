package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// chatCmd is the aiperf binary running chat with args, input on stdin.
func chatCmd(t *testing.T, stdin io.Reader, env []string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(builtBinary(t, "aiperf"), append([]string{"chat"}, args...)...)
	cmd.Dir = t.TempDir()
	cmd.Stdin = stdin
	cmd.Env = append(withoutEnv(os.Environ(), "OPENAI_API_KEY"), env...)
	return cmd
}

// runChat runs chatCmd to its end, within hangGuard.
func runChat(t *testing.T, stdin string, env []string, args ...string) invocation {
	t.Helper()
	cmd := chatCmd(t, strings.NewReader(stdin), env, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(hangGuard):
		_ = cmd.Process.Kill()
		t.Fatal("aiperf chat did not end")
	}
	return invocation{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
}

func TestChatSessionOverPipedInput(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	sys := "You are a careful assistant who answers questions about geography with precision and care."
	inv := runChat(t, "what is the capital of France?\nand its population?\n", nil,
		"--model", "mock-model", "--url", m.URL, "--system-prompt", sys)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.True(t, strings.HasPrefix(inv.stdout, "Using model: mock-model\nPlease enter a message for the chat model (Ctrl-D to exit):\n> "), inv.stdout)
	assert.Equal(t, 2, strings.Count(inv.stdout, "\nTPS:  "), inv.stdout)
	assert.Equal(t, 2, strings.Count(inv.stdout, "\nCache: "), inv.stdout)
	assert.Equal(t, 2, m.control().InferenceRequests)
	assert.Empty(t, inv.stderr)

	quick := runChat(t, "", nil, "-m", "mock-model", "-u", m.URL, "-q", "say hello")
	require.Equal(t, ExitOK, quick.code, quick.stderr)
	assert.Contains(t, quick.stdout, "TTFT: ")
	assert.NotContains(t, quick.stdout, "Please enter", "--quick reads no input")
}

func TestChatRefusesBadInputBeforeSending(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	for _, c := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"no model", nil, []string{"--url", m.URL, "-q", "hi"}, "--model"},
		{"empty model", nil, []string{"--model", " ", "--url", m.URL, "-q", "hi"}, "--model is empty"},
		{"empty quick", nil, []string{"-m", "mock-model", "--url", m.URL, "-q", " "}, "--quick: the message is empty"},
		{"scheme", nil, []string{"-m", "mock-model", "--url", "ftp://h/", "-q", "hi"}, `--url must use http or https, got "ftp"`},
		{"password in a bad url", nil, []string{"-m", "mock-model", "--url", "http://u:hunter2@h:port/", "-q", "hi"}, "--url"},
		{"port", nil, []string{"-m", "mock-model", "--url", m.URL + "9999/v1", "-q", "hi"}, "not one from 1 to 65535"},
		{"space in the query", nil, []string{"-m", "mock-model", "--url", m.URL + "/v1?q=a b&api_key=hunter2", "-q", "hi"},
			"--url has a query holding a space"},
		{"api key", nil, []string{"-m", "mock-model", "--url", m.URL, "--api-key", "sk-hunter2\x01", "-q", "hi"},
			"--api-key holds a control character"},
		{"read timeout", []string{envChatRead + "=soon"}, []string{"-m", "mock-model", "--url", m.URL, "-q", "hi"}, envChatRead + `="soon"`},
		{"connect timeout", []string{envChatConnect + "=-1"}, []string{"-m", "mock-model", "--url", m.URL, "-q", "hi"}, envChatConnect},
		{"connect timeout of no time", []string{envChatConnect + "=0.0000000001"}, []string{"-m", "mock-model", "--url", m.URL, "-q", "hi"},
			envChatConnect + `="0.0000000001": give seconds, a number from 0.001`},
		{"read timeout under a millisecond", []string{envChatRead + "=0.0004"}, []string{"-m", "mock-model", "--url", m.URL, "-q", "hi"},
			envChatRead},
		{"tokenizer", nil, []string{"-m", "mock-model", "--url", m.URL, "--tokenizer", "/nonexistent/tokenizer.json", "-q", "hi"}, "--tokenizer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			inv := runChat(t, "", c.env, c.args...)
			assert.Equal(t, ExitUsage, inv.code, inv.stderr)
			assert.Contains(t, inv.stderr, c.want)
			assert.NotContains(t, inv.stderr, "hunter2")
		})
	}
	assert.Zero(t, m.control().InferenceRequests)
}

func TestChatFailuresExitOne(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := "http://" + l.Addr().String()
	require.NoError(t, l.Close())
	inv := runChat(t, "", nil, "-m", "mock-model", "--url", closed, "-q", "hi")
	assert.Equal(t, ExitFailure, inv.code)
	assert.Contains(t, inv.stderr, "aiperf: error: request failed:")

	m := startMock(t, mock.Config{Fast: true, ErrorRate: 100})
	inv = runChat(t, "one\ntwo\n", []string{"OPENAI_API_KEY=sk-test-secret-value-42"}, "-m", "mock-model", "--url", m.URL)
	assert.Equal(t, ExitFailure, inv.code)
	assert.Equal(t, 2, strings.Count(inv.stderr, "request failed: "), inv.stderr)
	assert.Contains(t, inv.stderr, "2 of 2 turns failed")
	assert.NotContains(t, inv.stdout+inv.stderr, "sk-test-secret-value-42")
}

// lockedWriter is a process's output the test reads while it runs.
type lockedWriter struct {
	mu  sync.Mutex
	b   bytes.Buffer
	hit chan struct{}
	on  string
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	if w.hit != nil && strings.Contains(w.b.String(), w.on) {
		close(w.hit)
		w.hit = nil
	}
	return len(p), nil
}

func TestChatInterruptedAtThePrompt(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	cmd := chatCmd(t, nil, nil, "-m", "mock-model", "--url", m.URL)
	keep, err := cmd.StdinPipe() // input that never comes (an io.Pipe would hold Wait: it copies stdin to its end)
	require.NoError(t, err)
	defer keep.Close()
	out := &lockedWriter{hit: make(chan struct{}), on: "> "}
	prompt := out.hit
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = out, &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	select {
	case <-prompt:
	case <-time.After(hangGuard):
		t.Fatal("no prompt")
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(hangGuard):
		t.Fatal("aiperf chat did not end at Ctrl-C")
	}
	assert.Equal(t, ExitInterrupted, cmd.ProcessState.ExitCode(), stderr.String())
	assert.Zero(t, m.control().InferenceRequests)
}

// TestChatReaderGoneIsNotAFailure: a reader of the output that went away
// (printf 'a\nb\nc\n' | aiperf chat … | head -c 5) ends the session
// quietly, exit 0 as docs/exit-codes.md says, sending nothing more: not 3
// failed turns.
func TestChatReaderGoneIsNotAFailure(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	cmd := chatCmd(t, strings.NewReader("a\nb\nc\n"), nil, "-m", "mock-model", "--url", m.URL)
	r, w, err := os.Pipe()
	require.NoError(t, err)
	require.NoError(t, r.Close()) // the reader is gone before the first write
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &stderr
	require.NoError(t, cmd.Start())
	require.NoError(t, w.Close())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	assert.Equal(t, ExitOK, exitCode(t, cmd, hangGuard), stderr.String())
	assert.NotContains(t, stderr.String(), "request failed")
	assert.Zero(t, m.control().InferenceRequests)
}

// TestChatLongLineIsBadInput: a line of input over 1 MiB ends the session
// with exit 2 (bad input), saying what to do, after the turns before it.
func TestChatLongLineIsBadInput(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	inv := runChat(t, "first\n"+strings.Repeat("a", 1<<20+1)+"\nthird\n", nil, "-m", "mock-model", "--url", m.URL)
	assert.Equal(t, ExitUsage, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, "a line of input is over 1 MiB, more than aiperf chat takes: send a shorter message")
	assert.Equal(t, 1, m.control().InferenceRequests)
}

// TestChatNeverPrintsURLSecrets: --url's password, the Basic credential
// made of it and its secret query values are secrets as in aiperf
// profile: echoed in a reply or an error, they are redacted.
func TestChatNeverPrintsURLSecrets(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		auth := r.Header.Get("Authorization")
		decoded, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(auth, "Basic "))
		echo := fmt.Sprintf("auth=%s decoded=%s uri=%s", auth, decoded, r.URL.RequestURI())
		if strings.Contains(string(body), "fail") {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":{"message":%q}}`, echo)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < len(echo); i += 5 {
			b, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"index": 0,
				"delta": map[string]any{"content": echo[i:min(i+5, len(echo))]}}}})
			fmt.Fprintf(w, "data: %s\n\n", b)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer ts.Close()
	u := strings.Replace(ts.URL, "://", "://alice:PassW0rdSecret99@", 1) + "/v1?api_key=QuerySecret12345"
	inv := runChat(t, "hi\nfail\n", nil, "-m", "m", "--url", u)
	assert.Equal(t, ExitFailure, inv.code, inv.stderr)
	assert.Contains(t, inv.stdout, "decoded=<redacted>")
	assert.Contains(t, inv.stderr, "HTTP 401")
	for _, secret := range []string{"PassW0rdSecret99", "QuerySecret12345", base64.StdEncoding.EncodeToString([]byte("alice:PassW0rdSecret99"))} {
		assert.NotContains(t, inv.stdout+inv.stderr, secret)
	}
}
