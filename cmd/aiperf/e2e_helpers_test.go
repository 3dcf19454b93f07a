package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/shard/fakeworker"
	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// beMain makes the test binary act as the aiperf binary. The sweep runner
// re-executes os.Executable() for every trial; in tests that is this binary,
// and the variable (inherited by the children) routes them to run().
const beMain = "AIPERF_TEST_BE_MAIN"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeworker.Env); mode != "" { // a misbehaving worker (workers_stall_e2e_test.go)
		os.Exit(fakeworker.Main(mode))
	}
	if os.Getenv(beMain) == "1" {
		main() // exactly the binary's entry point, signal handling included
	}
	code := m.Run()
	if builtDir != "" {
		_ = os.RemoveAll(builtDir)
	}
	os.Exit(code)
}

// binEnv names a directory holding aiperf and aiperf-mock-server built
// for the tests' subprocesses (`make test` builds bin/); without it the
// first test that needs them builds them into a temporary directory.
const binEnv = "AIPERF_TEST_BIN"

// builtDir is the temporary directory the binaries were built into, if any.
var builtDir string

// binaries returns the directory of the aiperf and aiperf-mock-server
// binaries that the tests' subprocesses run: built as a user builds them,
// without the race detector (the in-process tests have it), so a sweep's
// trial children cost seconds of CPU, not tens.
var binaries = sync.OnceValues(func() (string, error) {
	if dir := os.Getenv(binEnv); dir != "" {
		for _, name := range []string{"aiperf", "aiperf-mock-server"} {
			if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
				return "", fmt.Errorf("%s=%s: %w", binEnv, dir, err)
			}
		}
		return dir, nil
	}
	dir, err := os.MkdirTemp("", "aiperf-test-bin-")
	if err != nil {
		return "", err
	}
	builtDir = dir
	cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "./cmd/aiperf", "./cmd/aiperf-mock-server")
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the binaries the subprocesses run: %w\n%s", err, out)
	}
	return dir, nil
})

// builtBinary is the path of the named binary the tests' subprocesses run.
func builtBinary(t *testing.T, name string) string {
	t.Helper()
	dir, err := binaries()
	require.NoError(t, err)
	return filepath.Join(dir, name)
}

// hangGuard is how long a test waits for what must happen before it calls
// it a hang: far above what the behaviour needs, even beside CPU burners
// on a loaded machine; never what a test asserts.
const hangGuard = 3 * time.Minute

// mockServer is an in-process aiperf-mock-server on a random loopback port.
type mockServer struct {
	*httptest.Server
	srv *mock.Server
}

var defaultTokenizer = sync.OnceValue(func() tokenizer.Tokenizer {
	tok, err := tokenizer.Load(tokenizer.Default)
	if err != nil {
		panic(err)
	}
	return tok
})

func countTokens() func(string) int { return defaultTokenizer().Count }

// startMock starts an in-process mock that tokenizes like the binary does
// (o200k_base), so its prefix cache sees the prompts' real token blocks.
func startMock(t *testing.T, cfg mock.Config) *mockServer {
	t.Helper()
	return startMockBehind(t, cfg, nil)
}

// startMockBehind is startMock with the mock's handler wrapped (nil: not).
func startMockBehind(t *testing.T, cfg mock.Config, wrap func(http.Handler) http.Handler) *mockServer {
	t.Helper()
	cfg.CountTokens, cfg.EncodeTokens = countTokens(), defaultTokenizer().Encode
	srv, err := mock.New(cfg)
	require.NoError(t, err)
	h := srv.Handler()
	if wrap != nil {
		h = wrap(h)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return &mockServer{Server: ts, srv: srv}
}

func (m *mockServer) control() mock.Control { return m.srv.Control() }

// kinds lists the control log's event kinds in arrival order.
func (m *mockServer) kinds() []string {
	var out []string
	for _, e := range m.control().Events {
		out = append(out, string(e.Kind))
	}
	return out
}

// result of one in-process aiperf invocation.
type invocation struct {
	code           int
	stdout, stderr string
}

// cli runs the CLI in-process in dir (a fresh temp dir when empty) with
// the store inside it, --wide: the tests read names and cells whole
// (TestConsoleFitsByDefault checks the default, fitted output).
func cli(t *testing.T, dir string, args ...string) invocation {
	t.Helper()
	return cliCtx(context.Background(), t, dir, args...)
}

func cliCtx(ctx context.Context, t *testing.T, dir string, args ...string) invocation {
	t.Helper()
	return cliRun(ctx, t, dir, append([]string{"--wide"}, args...)...)
}

// cliRun is cli as the user types it: no flag added but --store.
func cliRun(ctx context.Context, t *testing.T, dir string, args ...string) invocation {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	t.Chdir(dir)
	var stdout, stderr lockedBuffer // a run writes from several goroutines, as to os.Stdout
	code := run(ctx, append([]string{"--store", filepath.Join(dir, "aiperf.db")}, args...), &stdout, &stderr)
	return invocation{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// cliBinary is cli run by the built binary in a subprocess, for commands
// whose cost is CPU rather than concurrency (drawing figures): the race
// detector would multiply it, and their packages' own tests run under it.
func cliBinary(t *testing.T, dir string, args ...string) invocation {
	t.Helper()
	t.Chdir(dir)
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cmd := exec.CommandContext(ctx, builtBinary(t, "aiperf"), append([]string{"--store", filepath.Join(dir, "aiperf.db"), "--wide"}, args...)...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		require.NoError(t, err, "run aiperf %s", strings.Join(args, " "))
	}
	return invocation{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
}

// quick are flags for a fast, small profile against url.
func quick(url string, extra ...string) []string {
	return append([]string{"profile", "-m", "mock-model", "-u", url, "--streaming", "--ui", "none",
		"--isl", "16", "--osl", "4", "--num-dataset-entries", "4"}, extra...)
}

// readJSON decodes a JSON file into a generic map.
func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

// metricAvg returns the avg of a metric block of an AIPerf JSON export.
func metricAvg(t *testing.T, export map[string]any, tag string) float64 {
	t.Helper()
	block, ok := export[tag].(map[string]any)
	require.True(t, ok, "export has no %s block", tag)
	return block["avg"].(float64)
}

func countLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return strings.Count(string(b), "\n")
}

// count is how many times x occurs in xs.
func count(xs []string, x string) int {
	n := 0
	for _, v := range xs {
		if v == x {
			n++
		}
	}
	return n
}

// lineContaining returns the one line of out that contains every one of subs.
func lineContaining(t *testing.T, out string, subs ...string) string {
	t.Helper()
	var found []string
	for line := range strings.SplitSeq(out, "\n") {
		if !slices.ContainsFunc(subs, func(s string) bool { return !strings.Contains(line, s) }) {
			found = append(found, line)
		}
	}
	require.Len(t, found, 1, "lines containing %q in:\n%s", subs, out)
	return found[0]
}

// writeFile writes a file under dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	return path
}

// sweepOnly lets through to a test's mock only the inference requests sent
// under its URL's path prefix (the sweep's), and the control calls: an
// inference request of another process (one that outlived its test and
// meets this mock on its recycled port) would move the mock's timing. It
// logs every request, for a failure's message.
type sweepOnly struct {
	prefix string
	mu     sync.Mutex
	seen   []string
}

func (g *sweepOnly) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		sum := sha256.Sum256(body)
		g.mu.Lock()
		g.seen = append(g.seen, fmt.Sprintf("%s %s from %s: %d bytes, sha256 %x", r.Method, r.URL.Path, r.RemoteAddr, len(body), sum[:6]))
		g.mu.Unlock()
		rest, ours := strings.CutPrefix(r.URL.Path, g.prefix)
		switch {
		case ours:
			r.URL.Path = rest
		case !strings.HasPrefix(r.URL.Path, "/v1/"):
		default:
			http.Error(w, "not this test's request", http.StatusNotFound)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	})
}

func (g *sweepOnly) log() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return strings.Join(g.seen, "\n")
}
