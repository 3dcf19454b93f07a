package main

import (
	"bytes"
	"io"
	"net"
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
		{"scheme", nil, []string{"-m", "mock-model", "--url", "ftp://h/", "-q", "hi"}, "--url \"ftp://h/\": the scheme must be http or https"},
		{"password in a bad url", nil, []string{"-m", "mock-model", "--url", "http://u:hunter2@h:port/", "-q", "hi"}, "--url"},
		{"read timeout", []string{envChatRead + "=soon"}, []string{"-m", "mock-model", "--url", m.URL, "-q", "hi"}, envChatRead + `="soon"`},
		{"connect timeout", []string{envChatConnect + "=-1"}, []string{"-m", "mock-model", "--url", m.URL, "-q", "hi"}, envChatConnect},
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
