package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// runaway templates: one that loops without end and one that doubles a
// string without end.
const (
	endlessTemplate  = `{% set r = range(1000) %}{% for i in r %}{% for j in r %}{% for k in r %}{% endfor %}{% endfor %}{% endfor %}`
	doublingTemplate = `{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}`
)

// templateDir is a Qwen tokenizer directory whose chat_template.jinja is
// src (its tokenizer_config.json has the special tokens only).
func templateDir(t *testing.T, src string) string {
	t.Helper()
	dir := qwenDir(t, `{"bos_token": "<s>", "eos_token": "</s>"}`)
	writeFile(t, dir, "chat_template.jinja", src)
	return dir
}

// TestChatTemplateRunaway: under --apply-chat-template a chat template
// that never ends, or that builds without end, is refused before any
// traffic once it goes over its budget (exit 2, the budget named, nothing
// sent), in a process whose peak memory stays far below a gigabyte. The
// endless one ran for hours on the upstream engine; the doubling one died
// of a fatal out-of-memory error.
func TestChatTemplateRunaway(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	for name, tc := range map[string]struct{ src, want string }{
		"endless": {endlessTemplate, "the template went over its budget of 10000002 steps (an endless or runaway loop?); " +
			"--chat-template-max-steps raises the budget"}, // 2: the share of the sample's 35 bytes
		"doubling": {doublingTemplate, "the template built more than its budget of"},
	} {
		t.Run(name, func(t *testing.T) {
			tokDir := templateDir(t, tc.src)
			dir := t.TempDir()
			cmd, _, stderr := aiperfProcess(t, dir, nil, quick(m.URL, "--endpoint-type", "chat", "--request-count", "2",
				"--tokenizer", tokDir, "--apply-chat-template", "--no-store")...)
			code := exitCode(t, cmd, 2*time.Minute) // a hang guard; the budget is about a second of work
			require.Equal(t, ExitUsage, code, stderr.String())
			assert.Contains(t, stderr.String(), "--apply-chat-template: the chat template of tokenizer "+
				filepath.Join(tokDir, "tokenizer.json")+" does not render a sample conversation: render the chat_template of "+
				filepath.Join(tokDir, "chat_template.jinja")+": "+tc.want)
			assert.Contains(t, stderr.String(), "(nothing was sent)")
			maxRSS := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss // KiB on Linux
			assert.Less(t, maxRSS, int64(1<<20), "peak memory %d MiB", maxRSS>>10)
		})
	}
	assert.Zero(t, m.control().InferenceRequests)
}

// TestChatTemplateInterrupted: Ctrl-C or SIGTERM while the sample
// conversations render stops the render: the run ends interrupted (exit
// 130) and nothing is sent. The process says when it starts rendering, and
// the signal is sent only then; the budget is raised so that the render
// would not end by itself.
func TestChatTemplateInterrupted(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	tokDir := templateDir(t, endlessTemplate)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(builtBinary(t, "aiperf"), append([]string{"--store", filepath.Join(dir, "aiperf.db")},
				quick(m.URL, "--endpoint-type", "chat", "--request-count", "2", "--tokenizer", tokDir, "--apply-chat-template",
					"--chat-template-max-steps", "4000000000000000000", "--ui", "simple")...)...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), beMain+"=1")
			pipe, err := cmd.StderrPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			t.Cleanup(func() { _ = cmd.Process.Kill() })
			read := make(chan string, 1)
			go func() { // signals once rendering starts, then keeps the rest
				var out strings.Builder
				sc := bufio.NewScanner(pipe)
				for sc.Scan() {
					out.WriteString(sc.Text() + "\n")
					if strings.HasPrefix(sc.Text(), "chat template: rendering two sample conversations") {
						_ = cmd.Process.Signal(sig)
					}
				}
				read <- out.String()
			}()
			var stderr string
			select {
			case stderr = <-read:
			case <-time.After(2 * time.Minute): // a hang guard, not a timing assertion
				t.Fatal("aiperf still running two minutes after it began rendering")
			}
			require.Error(t, cmd.Wait())
			assert.Equal(t, ExitInterrupted, cmd.ProcessState.ExitCode(), stderr)
			assert.Contains(t, stderr, "render interrupted: "+map[syscall.Signal]string{
				syscall.SIGINT: "SIGINT (Ctrl-C)", syscall.SIGTERM: "SIGTERM"}[sig])
		})
	}
	assert.Zero(t, m.control().InferenceRequests)
}
