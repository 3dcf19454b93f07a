package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/report"
)

// TestConsoleFitsByDefault: what a newcomer sees fits a 120-column
// terminal: a profile's console, the plan of the demo sweep (long cell
// labels), runs list and a comparison; --wide keeps names whole.
func TestConsoleFitsByDefault(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	script := writeFile(t, dir, "s.star", smallBase+`
sweep(name = "s", base = base.replace(server_profiler = True),
      matrix = {"concurrency": [1, 2], "synthetic_input_tokens_mean": [16, 32]}, trials = 2)
`)
	ctx := context.Background()
	var outs []string
	for _, args := range [][]string{
		quick(m.URL, "--request-count", "4", "--reset-kv-cache", "--server-profiler", "--name", "a"),
		quick(m.URL, "--request-count", "4", "--reset-kv-cache", "--name", "b"),
		{"plan", script, "--set", "url=" + m.URL, "--set", "tok=unused"},
		{"runs", "list"},
		{"compare", "a", "b"},
	} {
		inv := cliRun(ctx, t, dir, args...)
		require.Equal(t, ExitOK, inv.code, "%v: %s", args, inv.stderr)
		outs = append(outs, inv.stdout)
	}
	assertFits(t, outs...)
	plan := cliRun(ctx, t, dir, "--wide", "plan", script, "--set", "url="+m.URL, "--set", "tok=unused")
	require.Equal(t, ExitOK, plan.code, plan.stderr)
	assert.Contains(t, plan.stdout, "s/concurrency_1__synthetic_input_tokens_mean_16/trial_0001", "--wide: labels whole")
}

// TestSearchProgressFits: a search's header, probe and answer lines fit
// 120 columns as a sweep's progress does; --wide keeps them whole.
func TestSearchProgressFits(t *testing.T) {
	subprocesses(t)
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	script := writeFile(t, dir, "grid.star", `
base = profile(model = "mock-model", url = vars["url"], streaming = True, tokenizer = vars["tok"],
               synthetic_input_tokens_mean = 16, output_tokens_mean = 4, request_count = 4)
search(name = "a_search_with_a_rather_long_name", base = base, space = {"concurrency": [1, 2]}, planner = "grid",
       grid = [{"concurrency": 1}, {"concurrency": 2}],
       sla = ["time_to_first_token:p99:lt:100000", "request_throughput:avg:gt:0.001", "inter_token_latency:p99:lt:100000"],
       objective = "output_token_throughput.avg")
`)
	args := []string{"sweep", script, "--set", "url=" + m.URL, "--set", "tok=" + tinyTokenizer(t)}
	inv := cliRun(context.Background(), t, dir, args...)
	require.Equal(t, ExitOK, inv.code, "stdout:\n%s\nstderr:\n%s", inv.stdout, inv.stderr)
	assert.Contains(t, inv.stderr, "search a_search_with_a_rather_long_name probe 1: concurrency 2: pass")
	assert.Contains(t, inv.stdout, "search a_search_with_a_rather_long_name: concurrency: 2 passed")
	assertFits(t, inv.stdout, inv.stderr)

	require.NoError(t, os.RemoveAll(filepath.Join(dir, "artifacts")))
	wide := cliRun(context.Background(), t, dir, append([]string{"--wide"}, args...)...)
	require.Equal(t, ExitOK, wide.code, "stdout:\n%s\nstderr:\n%s", wide.stdout, wide.stderr)
	header := lineContaining(t, wide.stderr, `search "a_search_with_a_rather_long_name" (#2): `)
	assert.Greater(t, utf8.RuneCountInString(header), report.MaxWidth, "--wide: the header whole")
	assert.Contains(t, header, "store "+filepath.Join(dir, "aiperf.db"))
	for _, line := range []string{
		lineContaining(t, wide.stderr, "search a_search_with_a_rather_long_name probe 1: concurrency 2: pass"),
		lineContaining(t, wide.stdout, "search a_search_with_a_rather_long_name: concurrency: 2 passed"),
	} {
		assert.Greater(t, utf8.RuneCountInString(line), report.MaxWidth, "--wide: whole, %q", line)
	}
}

// localModel is a model served from a local path, as vLLM names it: its
// 40-character snapshot hash has no place to break.
const localModel = "/models/hub/models--meta-llama--Llama-3.1-8B-Instruct/snapshots/0e9e39f249a16976918f6564b8830bc894c89659"

// TestLocalPathModelFits: with a model served from a local path, the
// tokenizer warning printed before the table was one 624-column line (the
// one after the table was wrapped), and it said to run `huggingface-cli
// download <the path>`, which cannot work: it is wrapped, and gives only
// the --tokenizer advice. runs list and runs show fit too.
func TestLocalPathModelFits(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	inv := cliRun(context.Background(), t, dir, "profile", "-m", localModel, "-u", m.URL, "--streaming", "--ui", "none",
		"--isl", "16", "--osl", "4", "--request-count", "2", "--artifact-dir", "out")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assertFits(t, inv.stdout, inv.stderr)
	said := strings.Join(strings.Fields(inv.stderr), " ")
	assert.Contains(t, said, "warning: ISL and OSL are counted with the built-in o200k_base encoding, not "+localModel+
		"'s own tokenizer: pass --tokenizer "+localModel+" (the model's directory, holding its tokenizer.json) or the "+
		"path of its tokenizer.json, for exact counts")
	assert.NotContains(t, inv.stdout+inv.stderr, "huggingface-cli")

	// runs list was 139 columns wide: the hash is cut inside its cell.
	for _, args := range [][]string{{"runs", "list"}, {"runs", "show", "1"}} {
		inv := cliRun(context.Background(), t, dir, args...)
		require.Equal(t, ExitOK, inv.code, inv.stderr)
		assertFits(t, inv.stdout, inv.stderr)
	}
}

// assertFits asserts that every line of outs fits report.MaxWidth columns.
func assertFits(t *testing.T, outs ...string) {
	t.Helper()
	for _, out := range outs {
		for line := range strings.SplitSeq(out, "\n") {
			assert.LessOrEqual(t, utf8.RuneCountInString(line), report.MaxWidth, "%q", line)
		}
	}
}
