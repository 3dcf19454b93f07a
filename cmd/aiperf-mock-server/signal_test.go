package main

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mainEnv makes the test binary run main with the arguments after "--"
// (TestMain), so the signal tests signal the real command in a process of
// its own.
const mainEnv = "AIPERF_MOCK_SERVER_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		for i, a := range os.Args {
			if a == "--" {
				os.Args = append([]string{name}, os.Args[i+1:]...)
				break
			}
		}
		main()
	}
	os.Exit(m.Run())
}

// mockProcess is the command running in a process of its own.
type mockProcess struct {
	cmd    *exec.Cmd
	stderr lockedBuffer
	base   string
}

func startProcess(t *testing.T, args ...string) *mockProcess {
	t.Helper()
	p := &mockProcess{cmd: exec.Command(os.Args[0], append([]string{"-test.run=^$", "--"}, args...)...)}
	p.cmd.Env = append(os.Environ(), mainEnv+"=1")
	pipe, err := p.cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, p.cmd.Start())
	t.Cleanup(func() { _ = p.cmd.Process.Kill() })
	go func() { _, _ = io.Copy(&p.stderr, pipe) }()
	listening := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)\n`)
	p.base = p.await(t, listening)[1]
	return p
}

// await waits for a line of stderr matching re and returns its submatches.
func (p *mockProcess) await(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	var m []string
	require.Eventually(t, func() bool {
		m = re.FindStringSubmatch(p.stderr.String())
		return m != nil
	}, 60*time.Second, 10*time.Millisecond, "stderr: %s", &p.stderr)
	return m
}

// exitCode waits for the process to end and returns its exit code.
func (p *mockProcess) exitCode(t *testing.T) int {
	t.Helper()
	err := p.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	require.NoError(t, err)
	return 0
}

// TestCtrlC: the first SIGINT says it stops and, with a request in flight,
// what it waits for; a second one past a second after it exits at once
// (it was ignored, the mock waited five seconds in silence and exited 0);
// an interrupted mock exits 130, as aiperf does.
func TestCtrlC(t *testing.T) {
	t.Run("idle", func(t *testing.T) {
		p := startProcess(t, "--port", "0", "--fast")
		require.NoError(t, p.cmd.Process.Signal(syscall.SIGINT))
		assert.Equal(t, exitInterrupted, p.exitCode(t))
		assert.Contains(t, p.stderr.String(), "aiperf-mock-server: SIGINT (Ctrl-C): stopping; a second one exits at once\n")
		assert.NotContains(t, p.stderr.String(), "waiting", "nothing was in flight")
	})
	t.Run("second signal under load", func(t *testing.T) {
		p := startProcess(t, "--port", "0", "--ttft", "1", "--itl", "100") // 2,000 tokens: 200 s
		resp, err := http.Post(p.base+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"messages":[{"role":"user","content":"hi"}],"max_tokens":2000,"stream":true}`))
		require.NoError(t, err)
		defer resp.Body.Close()
		_, err = bufio.NewReader(resp.Body).ReadString('\n') // the role chunk: the request is in flight
		require.NoError(t, err)

		require.NoError(t, p.cmd.Process.Signal(syscall.SIGINT))
		p.await(t, regexp.MustCompile(`stopping: waiting up to 5s for 1 request in flight to finish, then cutting them\n`))
		// The mock said so after it took the first signal's time: a second
		// one sent a second later comes past sameSignal, however slow the
		// machine.
		time.Sleep(sameSignal + 100*time.Millisecond)
		require.NoError(t, p.cmd.Process.Signal(syscall.SIGINT))
		assert.Equal(t, exitInterrupted, p.exitCode(t))
		assert.Contains(t, p.stderr.String(), "aiperf-mock-server: interrupted again: exiting now (the requests in flight are cut)\n")
		assert.NotContains(t, p.stderr.String(), "still in flight after", "it did not wait for the grace to end")
	})
}
