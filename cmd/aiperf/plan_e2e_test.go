package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/runner"
)

// TestPlanLoadSandbox: load() reads only inside the script's directory
// tree unless --lib-path names another one; a refused load is exit 2
// before any traffic, and a text file's content is never shown.
func TestPlanLoadSandbox(t *testing.T) {
	subprocesses(t) // should sweep start trials after all, they are aiperf
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	writeFile(t, dir, "shared/common.star", "LEVELS = [1, 2]\n")
	writeFile(t, dir, "secret.txt", "hunter2\n")
	script := writeFile(t, dir, "proj/main.star", smallBase+`
load("../shared/common.star", "LEVELS")
sweep(name = "s", base = base, matrix = {"concurrency": LEVELS})
`)
	leak := writeFile(t, dir, "proj/leak.star", "load(\"../secret.txt\", \"x\")\n")
	set := []string{"--set", "url=" + m.URL, "--set", "tok=unused"}

	for _, cmd := range []string{"plan", "sweep"} {
		inv := cli(t, dir, append([]string{cmd, script}, set...)...)
		assert.Equal(t, ExitUsage, inv.code, "%s: %s", cmd, inv.stderr)
		assert.Contains(t, inv.stderr, script+":13:1: cannot load ../shared/common.star: '..' leads to "+
			filepath.Join(dir, "shared", "common.star")+", outside "+filepath.Join(dir, "proj")+" (the script's directory); "+
			"load() reads only inside the script's directory tree; name another directory with --lib-path DIR", cmd)

		inv = cli(t, dir, cmd, leak)
		assert.Equal(t, ExitUsage, inv.code, "%s: %s", cmd, inv.stderr)
		assert.Contains(t, inv.stderr, leak+":1:1: cannot load ../secret.txt: not a .star file: load() reads only Starlark modules", cmd)
		assert.NotContains(t, inv.stdout+inv.stderr, "hunter2", cmd)
	}
	assert.Empty(t, m.control().Events, "a refused load sent nothing")
	assert.NoFileExists(t, filepath.Join(dir, "aiperf.db"))

	ok := cli(t, dir, append([]string{"plan", script, "--lib-path", filepath.Join(dir, "shared")}, set...)...)
	require.Equal(t, ExitOK, ok.code, ok.stderr)
	assert.Contains(t, ok.stdout, "2 trials in total")

	missing := cli(t, dir, append([]string{"plan", script, "--lib-path", filepath.Join(dir, "nope")}, set...)...)
	assert.Equal(t, ExitUsage, missing.code, missing.stderr)
	assert.Contains(t, missing.stderr, "nope")
}

// TestPlanMaxTrials: a plan over --max-trials is refused before it is
// expanded, at the sweep() call, naming the sizes and the flag.
func TestPlanMaxTrials(t *testing.T) {
	subprocesses(t)
	dir := t.TempDir()
	script := writeFile(t, dir, "grid.star", `
base = profile(model = "m", url = "http://127.0.0.1:8000")
sweep(name = "grid", base = base, matrix = {"concurrency": [1, 2], "isl": [16, 32]}, trials = 2)
`)
	inv := cli(t, dir, "plan", script, "--max-trials", "7")
	assert.Equal(t, ExitUsage, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, script+":3:6: sweep: the plan is too large: matrix concurrency (2) × "+
		"isl (2) = 4 cells × 2 trials = 8 trials, over the limit of 7; "+
		"sweep fewer values or trials, or raise the limit with --max-trials N")
	assert.Empty(t, inv.stdout)

	inv = cli(t, dir, "plan", script, "--max-trials", "8")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stdout, "8 trials in total")

	inv = cli(t, dir, "sweep", script, "--max-trials", "0")
	assert.Equal(t, ExitUsage, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, "--max-trials must be at least 1, got 0")
	assert.NoFileExists(t, filepath.Join(dir, "aiperf.db"))
}

// TestSweepLongAndLookAlikeNames: names over 255 bytes and values that
// read alike get distinct directories that plan shows and sweep creates.
func TestSweepLongAndLookAlikeNames(t *testing.T) {
	subprocesses(t)
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	long := strings.Repeat("n", 300)
	script := writeFile(t, dir, "long.star", smallBase+`
sweep(name = "`+long+`", base = base, scenarios = [{"name": "`+long+`1", "concurrency": 1}, {"name": "`+long+`2", "concurrency": 2}])
sweep(name = "alike", base = base, matrix = {"extra_inputs": [["tag:a/b"], ["tag:a b"]]})
`)
	set := []string{"--set", "url=" + m.URL, "--set", "tok=" + tinyTokenizer(t)}

	pj := cli(t, dir, append([]string{"plan", script, "--format", "json"}, set...)...)
	require.Equal(t, ExitOK, pj.code, pj.stderr)
	var p planned
	require.NoError(t, json.Unmarshal([]byte(pj.stdout), &p))
	require.Len(t, p.Trials, 4)
	dirs := map[string]bool{}
	for _, tr := range p.Trials {
		for _, part := range strings.Split(tr.Dir, "/") {
			assert.LessOrEqual(t, len(part), plan.MaxNameBytes, tr.Dir)
		}
		dirs[tr.Dir] = true
	}
	assert.Len(t, dirs, 4, "every trial has its own directory")
	table := cli(t, dir, append([]string{"plan", script}, set...)...)
	require.Equal(t, ExitOK, table.code, table.stderr)
	for d := range dirs {
		assert.Contains(t, table.stdout, d, "the table shows every trial's directory")
	}

	sw := cli(t, dir, append([]string{"sweep", script, "--ui", "none"}, set...)...)
	require.Equal(t, ExitOK, sw.code, "stdout:\n%s\nstderr:\n%s", sw.stdout, sw.stderr)
	for d := range dirs {
		assert.FileExists(t, filepath.Join(dir, "artifacts", d, "result.json"), "sweep wrote the directory plan showed")
		assert.FileExists(t, filepath.Join(dir, "artifacts", filepath.Dir(d), runner.AggregateFile))
	}
	entries, err := os.ReadDir(filepath.Join(dir, "artifacts"))
	require.NoError(t, err)
	assert.Len(t, entries, 2, "one directory per sweep")
}

// TestPlanDescribesATraceReplay: plan and config expand name a trace
// replayed on its fixed schedule, its speed-up and its file, where they
// said "profiling(concurrency 0); isl 550" (a load the CLI refuses and a
// synthetic ISL no request has); a trace whose timestamps the run replays
// unasked is named so too.
func TestPlanDescribesATraceReplay(t *testing.T) {
	dir := t.TempDir()
	example, err := filepath.Abs(filepath.Join("..", "..", "examples", "trace_replay.star"))
	require.NoError(t, err)
	inv := cli(t, dir, "plan", example, "--set", "speedup=2")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stdout, "│ profiling(fixed schedule, speed-up 2); input "+
		filepath.Join(filepath.Dir(example), "data", "chat_trace.jsonl"))
	assert.Contains(t, inv.stdout, "│ warmup(concurrency 4, 48 requests) → profiling(fixed schedule, speed-up 2, cap 4); input ")

	writeFile(t, dir, "t.jsonl", `{"timestamp": 0, "input_length": 20, "output_length": 4}`+"\n")
	script := writeFile(t, dir, "unasked.star", `
base = profile(model = "m", url = "http://127.0.0.1:8000", input_file = "t.jsonl", custom_dataset_type = "mooncake_trace")
sweep(name = "unasked", base = base)
`)
	inv = cli(t, dir, "plan", script)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stdout, "│ profiling(fixed schedule); input "+filepath.Join(dir, "t.jsonl")+" ")

	inv = cli(t, dir, "config", "init", "--template", "trace_replay", "--output", "trace.yaml")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	inv = cli(t, dir, "config", "expand", "trace.yaml")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stdout, "into "+filepath.Join("artifacts", "Qwen_Qwen3-0.6B-openai-chat-fixed_schedule")+"\n")
	assert.Contains(t, inv.stdout, "│ profiling(fixed schedule); input traces/mooncake_trace.jsonl ")
	assert.NotContains(t, inv.stdout, "concurrency 0")
	assert.NotContains(t, inv.stdout, "isl 550")
}
