package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/report"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/store"
)

// demoLabels are the cells of the `make demo` sweep.
var demoLabels = []string{
	"concurrency_1__synthetic_input_tokens_mean_128", "concurrency_1__synthetic_input_tokens_mean_512",
	"concurrency_4__synthetic_input_tokens_mean_128", "concurrency_4__synthetic_input_tokens_mean_512",
}

// demoStore is a store holding a sweep "demo" of demoLabels' cells, two
// trials each, whose runs have three-digit latencies, a long model id and
// a long command line: the widest cells `runs list` and `runs show` meet.
func demoStore(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "aiperf.db")
	db, err := store.Open(path)
	require.NoError(t, err)
	defer db.Close()
	ctx := context.Background()
	id, err := db.BeginSweep(ctx, store.SweepMeta{Name: "demo", Trials: 2})
	require.NoError(t, err)
	for i, label := range demoLabels {
		for trial := 1; trial <= 2; trial++ {
			r := storedRun("", 150+float64(i))
			r.Config.Model = []string{"meta-llama/Llama-3.1-8B-Instruct"}
			r.CLICommand = "aiperf profile -m meta-llama/Llama-3.1-8B-Instruct -u http://127.0.0.1:8000 " +
				"--request-count 4 --ui none --artifact-dir /tmp/some/rather/long/artifact/directory/for/this/run"
			r.Info = result.TrialInfo{Sweep: "demo", SweepID: id, CellID: fmt.Sprintf("c%d", i), CellLabel: label, Trial: trial}
			_, err := db.SaveRun(ctx, r, "art/demo")
			require.NoError(t, err)
		}
	}
	return path
}

// aiperfNarrow runs the CLI in-process without --wide, as a terminal sees it.
func aiperfNarrow(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestNewcomerRunsTablesFit120: `runs list`, `runs sweeps` and `runs show`
// keep every line within 120 columns, as README and docs/profile.md promise.
func TestNewcomerRunsTablesFit120(t *testing.T) {
	t.Parallel()
	path := demoStore(t)
	for _, args := range [][]string{{"runs", "list"}, {"runs", "sweeps"}, {"runs", "show", "3"}} {
		code, out, errOut := aiperfNarrow(t, append([]string{"--store", path}, args...)...)
		require.Equal(t, ExitOK, code, "%v: %s", args, errOut)
		for line := range strings.SplitSeq(out, "\n") {
			assert.LessOrEqual(t, utf8.RuneCountInString(line), report.MaxWidth, "%v: %q", args, line)
		}
	}
	_, out, _ := aiperfNarrow(t, "--store", path, "runs", "list")
	assert.Contains(t, out, "ttft")
	assert.Contains(t, out, "Instruct")
}

// TestNewcomerUnknownCellSuggests: SWEEP/CELL with a cell the sweep lacks
// names the nearest labels and lists the sweep's cells, in compare and plot.
func TestNewcomerUnknownCellSuggests(t *testing.T) {
	t.Parallel()
	path := demoStore(t)
	for _, args := range [][]string{
		{"compare", "demo/concurrency_1", "demo/concurrency_4"},
		{"plot", "demo/concurrency_1", "-o", filepath.Join(t.TempDir(), "plots")},
	} {
		code, _, errOut := aiperfNarrow(t, append([]string{"--store", path}, args...)...)
		assert.Equal(t, ExitUsage, code, "%v", args)
		assert.Contains(t, errOut, `cell "concurrency_1" of sweep "demo"`, "%v", args)
		assert.Contains(t, errOut, `did you mean "concurrency_1__synthetic_input_tokens_mean_128" or "concurrency_1__synthetic_input_tokens_mean_512"?`, "%v", args)
		assert.Contains(t, errOut, "its 4 cells: "+strings.Join(demoLabels, ", "), "%v", args)
	}
	// A right label still compares.
	code, _, errOut := aiperfNarrow(t, "--store", path, "compare", "demo/"+demoLabels[0], "demo/"+demoLabels[2])
	assert.Equal(t, ExitOK, code, errOut)
}

// TestNewcomerPlotMissingDirectory: an argument written as a path that does
// not exist is a missing artifact directory (exit 2, named, with the
// nearest directory beside it), never looked up as a stored run.
func TestNewcomerPlotMissingDirectory(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "artifacts", "run-first"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "artifacts", "run-first", "profile_export_aiperf.json"), []byte("{}"), 0o644))
	t.Chdir(dir)
	storePath := filepath.Join(dir, "aiperf.db")
	for _, c := range []struct{ arg, want string }{
		{"artifacts/run-frist", `artifact directory artifacts/run-frist does not exist (did you mean "run-first"?)`},
		{"./nowhere", "artifact directory ./nowhere does not exist"},
		{filepath.Join(dir, "gone"), "artifact directory " + filepath.Join(dir, "gone") + " does not exist"},
		{"artifacts/run-first/profile_export_aiperf.json", "is a file, not an artifact directory"},
	} {
		code, _, errOut := aiperfNarrow(t, "--store", storePath, "plot", c.arg)
		assert.Equal(t, ExitUsage, code, c.arg)
		assert.Contains(t, errOut, c.want, c.arg)
		assert.NotContains(t, errOut, "run name or sweep", c.arg)
	}
	// SWEEP/CELL, whose SWEEP is no directory here, is still a stored run.
	code, _, errOut := aiperfNarrow(t, "--store", storePath, "plot", "demo/concurrency_1")
	assert.Equal(t, ExitUsage, code)
	assert.NotContains(t, errOut, "artifact directory")
}
