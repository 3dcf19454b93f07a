package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The runnable blocks of the documentation (docs/README.md, "Runnable
// blocks"): a ```sh fence right after a line <!-- runnable -->. A page's
// blocks run in order, as one bash script (set -euo pipefail) in one fresh
// directory, against one mock; pages run in parallel.

// runnableMarker is the line before a fence whose commands the test runs.
const runnableMarker = "<!-- runnable -->"

// docBlock is one runnable block of a page.
type docBlock struct {
	line int // of its fence, from 1
	text string
}

// runnableBlocks returns the runnable ```sh blocks of a Markdown page.
func runnableBlocks(t *testing.T, page []byte) []docBlock {
	t.Helper()
	lines := strings.Split(string(page), "\n")
	var out []docBlock
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != runnableMarker {
			continue
		}
		require.Less(t, i+1, len(lines), "a %s marker ends the page", runnableMarker)
		require.Equal(t, "```sh", strings.TrimSpace(lines[i+1]), "line %d: %s must precede a ```sh fence", i+1, runnableMarker)
		end := i + 2
		for end < len(lines) && strings.TrimSpace(lines[end]) != "```" {
			end++
		}
		require.Less(t, end, len(lines), "line %d: the runnable block is not closed", i+2)
		out = append(out, docBlock{line: i + 2, text: strings.Join(lines[i+2:end], "\n")})
		i = end
	}
	return out
}

// shrinks are the documented substitution's counts: a flag's value in a
// runnable block above the cap becomes the cap, so a page's tour runs in
// seconds. Nothing else of a block is changed but the mock's address.
var shrinks = []struct {
	re  *regexp.Regexp
	cap int
}{
	{regexp.MustCompile(`(--request-count[ =])(\d+)`), 20},
	{regexp.MustCompile(`(--conversation-num[ =])(\d+)`), 4},
	{regexp.MustCompile(`(--benchmark-duration[ =])(\d+)`), 2},
	{regexp.MustCompile(`(--set requests=)(\d+)`), 6},
	{regexp.MustCompile(`(--set per_slot=)(\d+)`), 1},
}

// mockPorts are the addresses a runnable block may use: ports 8000-8009 on
// the loopback, and --port of a mock the block starts itself.
var mockPorts = regexp.MustCompile(`((?:127\.0\.0\.1|localhost):|--port[ =]|-p )(800\d)\b`)

// startsOwnMock tells whether a runnable block starts a mock on port 8000.
var startsOwnMock = regexp.MustCompile(`mock-server[^\n]*--port[ =]8000\b`)

// substitute applies the documented substitution to a block: the mock's
// ports become ports (8000-8009 → a free loopback port each), and the
// counts are capped.
func substitute(text string, ports map[string]string) string {
	text = mockPorts.ReplaceAllStringFunc(text, func(m string) string {
		sub := mockPorts.FindStringSubmatch(m)
		return sub[1] + ports[sub[2]]
	})
	for _, s := range shrinks {
		text = s.re.ReplaceAllStringFunc(text, func(m string) string {
			sub := s.re.FindStringSubmatch(m)
			n, _ := strconv.Atoi(sub[2])
			return sub[1] + strconv.Itoa(min(n, s.cap))
		})
	}
	return text
}

// freePort returns a loopback port nothing listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// docPages are the pages whose runnable blocks the test runs: the README
// and every page under docs/.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	require.NoError(t, err)
	more, err := filepath.Glob(filepath.Join("..", "..", "docs", "*", "*.md"))
	require.NoError(t, err)
	return append(append([]string{filepath.Join("..", "..", "README.md")}, pages...), more...)
}

// TestDocsRunnableBlocks runs every runnable block of the README and the
// docs against the mock, as docs/README.md describes: a block that no
// longer runs as printed fails the build.
func TestDocsRunnableBlocks(t *testing.T) {
	subprocesses(t)
	for _, tool := range []string{"bash", "curl", "sqlite3"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is needed by the documentation's runnable blocks: %v", tool, err)
			}
			t.Skipf("%s is not installed: the documentation's runnable blocks need it", tool)
		}
	}
	bin := filepath.Dir(builtBinary(t, "aiperf")) // aiperf and aiperf-mock-server, as built
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)

	ran := 0
	for _, page := range docPages(t) {
		text, err := os.ReadFile(page)
		require.NoError(t, err)
		blocks := runnableBlocks(t, text)
		if len(blocks) == 0 {
			continue
		}
		ran += len(blocks)
		abs, err := filepath.Abs(page)
		require.NoError(t, err)
		rel, err := filepath.Rel(repo, abs)
		require.NoError(t, err)
		own := false
		for _, b := range blocks {
			own = own || startsOwnMock.MatchString(b.text)
		}
		t.Run(rel, func(t *testing.T) {
			t.Parallel()
			runPage(t, rel, blocks, bin, repo, own)
		})
	}
	require.Positive(t, ran, "no runnable block found: the marker is %s", runnableMarker)
}

// runPage runs a page's blocks in order in a fresh directory holding the
// repository's examples, with aiperf and aiperf-mock-server on the PATH.
func runPage(t *testing.T, page string, blocks []docBlock, bin, repo string, ownMock bool) {
	dir := t.TempDir()
	require.NoError(t, os.Symlink(filepath.Join(repo, "examples"), filepath.Join(dir, "examples")))
	ports := map[string]string{}
	for i := range 10 {
		ports[strconv.Itoa(8000+i)] = freePort(t)
	}
	var script strings.Builder
	script.WriteString("set -euo pipefail\n")
	if !ownMock {
		// the server the page's commands assume: the test checks that
		// they run as printed, not their numbers
		script.WriteString(substitute("aiperf-mock-server --port 8000 --fast >/dev/null 2>&1 &\n"+
			"for _ in $(seq 600); do curl -sf http://127.0.0.1:8000/health >/dev/null && break; sleep 0.1; done\n", ports))
	}
	for _, b := range blocks {
		fmt.Fprintf(&script, "echo '::: %s:%d' >&2\n%s\n", page, b.line, substitute(b.text, ports))
	}

	// A hang guard, not a timing assertion: the README's tour takes a minute
	// on a quiet machine and several beside CPU burners, so the guard is the
	// test binary's own deadline, less the time to print what the blocks did.
	guard := time.Now().Add(15 * time.Minute)
	if d, ok := t.Deadline(); ok {
		guard = d.Add(-30 * time.Second)
	}
	ctx, cancel := context.WithDeadline(context.Background(), guard)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script.String())
	cmd.Dir = dir
	cmd.Env = append(withoutEnv(os.Environ(), "AIPERF_STORE", beMain), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the mocks a block starts in the background go with it
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// A file, not a pipe: a mock a block left running in the background
	// holds its output open, and Run must not wait for it.
	logFile, err := os.Create(filepath.Join(t.TempDir(), "output"))
	require.NoError(t, err)
	defer logFile.Close()
	cmd.Stdout, cmd.Stderr = logFile, logFile
	err = cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	b, rerr := os.ReadFile(logFile.Name())
	require.NoError(t, rerr)
	out := string(b)
	last := ""
	for line := range strings.SplitSeq(out, "\n") {
		if strings.HasPrefix(line, "::: ") {
			last = strings.TrimPrefix(line, "::: ")
		}
	}
	assert.NoError(t, err, "the block at %s no longer runs as printed; its output:\n%s", last, tail(out, 6000))
}

// withoutEnv drops PATH and the named variables from env.
func withoutEnv(env []string, names ...string) []string {
	var out []string
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != "PATH" && !slices.Contains(names, k) {
			out = append(out, kv)
		}
	}
	return out
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// TestDocsSubstitution: the documented substitution changes the mock's
// address and caps the counts, nothing else.
func TestDocsSubstitution(t *testing.T) {
	ports := map[string]string{"8000": "41000", "8001": "41001"}
	in := "aiperf-mock-server --port 8001 --ttft 60 &\nuntil curl -sf http://127.0.0.1:8001/health; do sleep 0.2; done\n" +
		"aiperf profile -m mock-model -u http://127.0.0.1:8000 --request-count 200 --concurrency 8 --osl 16\n" +
		"aiperf sweep examples/demo.star --set url=http://localhost:8001 --set requests=30\n" +
		"curl -s http://127.0.0.1:8000/mock/control   # port 18000 and --request-count 5 stay"
	assert.Equal(t, "aiperf-mock-server --port 41001 --ttft 60 &\nuntil curl -sf http://127.0.0.1:41001/health; do sleep 0.2; done\n"+
		"aiperf profile -m mock-model -u http://127.0.0.1:41000 --request-count 20 --concurrency 8 --osl 16\n"+
		"aiperf sweep examples/demo.star --set url=http://localhost:41001 --set requests=6\n"+
		"curl -s http://127.0.0.1:41000/mock/control   # port 18000 and --request-count 5 stay", substitute(in, ports))
}

// TestDocsIndexListsEveryPage: docs/README.md links every page under docs/.
func TestDocsIndexListsEveryPage(t *testing.T) {
	index, err := os.ReadFile(filepath.Join("..", "..", "docs", "README.md"))
	require.NoError(t, err)
	for _, page := range docPages(t)[1:] {
		name, err := filepath.Rel(filepath.Join("..", "..", "docs"), page)
		require.NoError(t, err)
		if name == "README.md" {
			continue
		}
		assert.Contains(t, string(index), "("+filepath.ToSlash(name)+")", "docs/README.md does not link %s", name)
	}
}
