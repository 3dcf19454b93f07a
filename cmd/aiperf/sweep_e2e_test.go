package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/runner"
	"github.com/aiperf-go/aiperf/store"
)

// gridScript is the 3 × 2 matrix with two trials per cell: twelve
// trial subprocesses, each resetting the cache and bracketing its profiling
// phase with the profiler. Requests are few and tiny: every child is the
// race-enabled test binary.
const gridScript = `
base = profile(
    model = "mock-model",
    url = vars["url"],
    api_key = vars["key"],
    tokenizer = vars["tok"],
    endpoint_type = "chat",
    streaming = True,
    request_count = 4,
    output_tokens_mean = 2,
    num_dataset_entries = 4,
    reset_kv_cache = True,
    server_profiler = True,
)

sweep(
    name = "grid",
    base = base,
    matrix = {"concurrency": [1, 2, 3], "synthetic_input_tokens_mean": [16, 32]},
    trials = 2,
)
`

// subprocesses prepares t for commands that start trial subprocesses: the
// children are the aiperf binary built without the race detector; a child
// that is this test binary acting as aiperf skips the race detector's
// one-second pause at exit.
func subprocesses(t *testing.T) {
	t.Setenv(beMain, "1")
	t.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	bin := builtBinary(t, "aiperf")
	prev := executable
	executable = func() (string, error) { return bin, nil }
	t.Cleanup(func() { executable = prev })
}

// tinyTokenizer is the path of a small tokenizer.json: a trial child loads
// it in milliseconds, where the default o200k_base takes about a second
// under -race. Call it before cli() changes the working directory.
func tinyTokenizer(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "internal", "tokenizer", "testdata", "gpt2-tiny.tokenizer.json"))
	require.NoError(t, err)
	require.FileExists(t, p)
	return p
}

// openStore opens the store a cli() call in dir wrote.
func openStore(t *testing.T, dir string) *store.DB {
	t.Helper()
	db, err := store.Open(filepath.Join(dir, "aiperf.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// planned is the trial list `aiperf plan --format json` prints.
type planned struct {
	Sweeps []struct {
		Name   string `json:"name"`
		Trials int    `json:"trials"`
	} `json:"sweeps"`
	Trials []struct {
		Sweep string `json:"sweep"`
		Key   string `json:"key"`
		Dir   string `json:"dir"`
		Trial int    `json:"trial"`
		Cell  struct {
			ID    string `json:"id"`
			Label string `json:"label"`
		} `json:"cell"`
	} `json:"trials"`
}

func (p planned) keys() []string {
	var out []string
	for _, tr := range p.Trials {
		out = append(out, tr.Key)
	}
	return out
}

// storedKeys lists the trial keys of the stored runs, sorted.
func storedKeys(runs []store.RunRow) []string {
	var out []string
	for _, r := range runs {
		out = append(out, fmt.Sprintf("%s/%04d", r.CellID, r.Trial))
	}
	sort.Strings(out)
	return out
}

// trialSegments splits the mock's event log at every reset: one segment per
// trial, each starting with its reset.
func trialSegments(kinds []string) [][]string {
	var segs [][]string
	for _, k := range kinds {
		if k == string(mock.EventReset) || len(segs) == 0 {
			segs = append(segs, nil)
		}
		segs[len(segs)-1] = append(segs[len(segs)-1], k)
	}
	return segs
}

// closedURL is a loopback URL nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return "http://" + addr
}

func TestSweepMatrixEndToEnd(t *testing.T) {
	subprocesses(t)
	const secret = "sk-sweep-e2e-secret-0099"
	m := startMock(t, mock.Config{Fast: true, APIKey: secret})
	dir := t.TempDir()
	script := writeFile(t, dir, "grid.star", gridScript)
	set := []string{"--set", "url=" + m.URL, "--set", "key=" + secret, "--set", "tok=" + tinyTokenizer(t)}

	// plan prints every trial and sends nothing.
	pl := cli(t, dir, append([]string{"plan", script}, set...)...)
	require.Equal(t, ExitOK, pl.code, pl.stderr)
	assert.Contains(t, pl.stdout, `sweep "grid"`)
	assert.Contains(t, pl.stdout, "6 cells × 2 trials")
	assert.Contains(t, pl.stdout, "12 trials in total; nothing was sent.")
	for _, label := range []string{"concurrency_1__synthetic_input_tokens_mean_16", "concurrency_3__synthetic_input_tokens_mean_32"} {
		assert.Equal(t, 2, strings.Count(pl.stdout, label), "%s is listed once per trial", label)
	}
	assert.NotContains(t, pl.stdout+pl.stderr, secret)

	pj := cli(t, dir, append([]string{"plan", script, "--format", "json"}, set...)...)
	require.Equal(t, ExitOK, pj.code, pj.stderr)
	assert.NotContains(t, pj.stdout, secret)
	var p planned
	require.NoError(t, json.Unmarshal([]byte(pj.stdout), &p))
	require.Len(t, p.Sweeps, 1)
	assert.Equal(t, "grid", p.Sweeps[0].Name)
	assert.Equal(t, 2, p.Sweeps[0].Trials)
	require.Len(t, p.Trials, 12)
	for _, tr := range p.Trials {
		assert.Equal(t, "grid", tr.Sweep)
		assert.Equal(t, fmt.Sprintf("%s/%04d", tr.Cell.ID, tr.Trial), tr.Key)
	}
	keys := p.keys()
	assert.Len(t, slices.Compact(slices.Sorted(slices.Values(keys))), 12, "trial keys are distinct")

	ctl := m.control()
	assert.Zero(t, ctl.InferenceRequests, "plan sent no request")
	assert.Zero(t, ctl.ResetCount, "plan sent no reset")
	assert.Empty(t, ctl.Events, "plan sent nothing at all")

	// sweep runs them, each as its own subprocess.
	sw := cli(t, dir, append([]string{"sweep", script}, set...)...)
	require.Equal(t, ExitOK, sw.code, "stdout:\n%s\nstderr:\n%s", sw.stdout, sw.stderr)
	assert.Contains(t, sw.stderr, "[12/12] grid concurrency_3__synthetic_input_tokens_mean_32 trial 2: complete")
	assert.Contains(t, sw.stdout, `Sweep "grid" (id 1, complete)`, "the final table")
	assert.NotContains(t, sw.stdout+sw.stderr, secret)

	ctl = m.control()
	assert.Equal(t, 12, ctl.ResetCount, "one reset per trial subprocess")
	assert.Equal(t, 12, ctl.ProfilerStarts)
	assert.Equal(t, 12, ctl.ProfilerStops)
	assert.Equal(t, 48, ctl.InferenceRequests)
	segs := trialSegments(m.kinds())
	require.Len(t, segs, 12)
	for i, seg := range segs {
		require.GreaterOrEqual(t, len(seg), 3, "trial %d: %v", i+1, seg)
		assert.Equal(t, []string{"reset", "start_profile"}, seg[:2], "trial %d resets, then starts the profiler, before any request", i+1)
		assert.Equal(t, "stop_profile", seg[len(seg)-1], "trial %d", i+1)
		assert.Equal(t, 4, count(seg, "request_start"), "trial %d: its four requests follow its reset", i+1)
		assert.Equal(t, 4, count(seg, "request_end"), "trial %d", i+1)
	}

	db := openStore(t, dir)
	ctx := context.Background()
	runs, err := db.ListRuns(ctx, store.RunFilter{Sweep: "grid"})
	require.NoError(t, err)
	require.Len(t, runs, 12)
	for _, r := range runs {
		assert.Equal(t, result.StatusComplete, r.Status, "run %d: %s", r.ID, r.Error)
		assert.Equal(t, 4, r.RecordCount)
	}
	assert.Equal(t, slices.Sorted(slices.Values(keys)), storedKeys(runs), "the store holds exactly the planned trials")
	done, err := db.CompletedTrialKeys(ctx, runs[0].SweepID)
	require.NoError(t, err)
	assert.Len(t, done, 12)
	for _, k := range keys {
		assert.True(t, done[k], k)
	}
	s, err := db.SweepRuns(ctx, "grid", nil)
	require.NoError(t, err)
	assert.Equal(t, result.StatusComplete, s.Sweep.Status)
	assert.Len(t, s.Cells, 6)
	assert.Equal(t, m.URL, s.Sweep.Vars["url"], "--set values are stored")
	assert.Equal(t, plan.Redacted, s.Sweep.Vars["key"], "but not a secret passed with --set")

	// Artifacts: <artifact-dir>/<sweep>/<cell>/trial_NNNN plus a per-cell aggregate.
	for _, tr := range p.Trials {
		tdir := filepath.Join(dir, "artifacts", tr.Dir)
		assert.Equal(t, filepath.Join("grid", tr.Cell.Label, fmt.Sprintf("trial_%04d", tr.Trial)), tr.Dir)
		for _, f := range []string{"profile_export_aiperf.json", "profile_export.jsonl", runner.ResultFile} {
			assert.FileExists(t, filepath.Join(tdir, f))
		}
		assert.Equal(t, 4, countLines(t, filepath.Join(tdir, "profile_export.jsonl")))
		assert.NoFileExists(t, filepath.Join(tdir, runner.SpecFile), "the spec (with secrets) is removed after the trial")
		for _, f := range []string{"profile_export_aiperf.json", "profile_export.jsonl", runner.ResultFile, runner.LogFile} {
			b, err := os.ReadFile(filepath.Join(tdir, f))
			require.NoError(t, err)
			assert.NotContains(t, string(b), secret, f)
		}
	}
	for _, label := range []string{"concurrency_1__synthetic_input_tokens_mean_16", "concurrency_2__synthetic_input_tokens_mean_32"} {
		agg := readJSON(t, filepath.Join(dir, "artifacts", "grid", label, runner.AggregateFile))
		assert.Equal(t, 2.0, agg["metadata"].(map[string]any)["num_successful_runs"], label)
		rc := agg["metrics"].(map[string]any)["request_count_avg"].(map[string]any)
		assert.Equal(t, 4.0, rc["mean"], label)
	}
	assertNoSecretInStore(t, dir, secret)
}

// assertNoSecretInStore checks every file of the store in dir (database,
// WAL) for secret.
func assertNoSecretInStore(t *testing.T, dir, secret string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "aiperf.db*"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		assert.False(t, bytes.Contains(b, []byte(secret)), "%s holds the secret", f)
	}
}

// smallBase is a profile() call for quick trials against vars["url"].
const smallBase = `
base = profile(
    model = "mock-model",
    url = vars["url"],
    tokenizer = vars["tok"],
    streaming = True,
    request_count = 4,
    synthetic_input_tokens_mean = 16,
    output_tokens_mean = 2,
    num_dataset_entries = 4,
)
`

func TestSweepFailedTrialExitsThree(t *testing.T) {
	subprocesses(t)
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	script := writeFile(t, dir, "down.star", smallBase+`
sweep(name = "mixed", base = base, scenarios = [
    {"name": "up"},
    {"name": "down", "url": vars["down"]},
    {"name": "up2", "concurrency": 2},
])
`)
	inv := cli(t, dir, "sweep", script, "--set", "url="+m.URL, "--set", "down="+closedURL(t), "--set", "tok="+tinyTokenizer(t))
	require.Equal(t, ExitSomeFailed, inv.code, "stdout:\n%s\nstderr:\n%s", inv.stdout, inv.stderr)
	assert.Contains(t, inv.stderr, "failed: down trial 1: ")
	assert.Contains(t, inv.stderr, "1 of 3 trials of sweep \"mixed\" failed")
	assert.Equal(t, 8, m.control().InferenceRequests, "the cells around the failed one ran")

	db := openStore(t, dir)
	runs, err := db.ListRuns(context.Background(), store.RunFilter{Sweep: "mixed"})
	require.NoError(t, err)
	require.Len(t, runs, 3)
	byLabel := map[string]store.RunRow{}
	for _, r := range runs {
		byLabel[r.CellLabel] = r
	}
	assert.Equal(t, result.StatusComplete, byLabel["up"].Status)
	assert.Equal(t, result.StatusComplete, byLabel["up2"].Status)
	assert.Equal(t, result.StatusFailed, byLabel["down"].Status)
	assert.NotEmpty(t, byLabel["down"].Error, "the failed trial is stored with its error")
	s, err := db.SweepRuns(context.Background(), "mixed", nil)
	require.NoError(t, err)
	assert.Equal(t, result.StatusFailed, s.Sweep.Status)
}

func TestSweepInterruptAndResume(t *testing.T) {
	subprocesses(t)
	// The first three trials send 4 requests each; the fourth trial's first
	// request is held at the server, so that trial is provably mid-load
	// (its profiler started, the first three stored) when Ctrl-C reaches
	// its child, which must stop its profiler before it exits.
	g := newRendezvous(1, 3*4, true)
	m := startMockBehind(t, mock.Config{Fast: true}, g.at(0))
	dir := t.TempDir()
	script := writeFile(t, dir, "resume.star", smallBase+`
sweep(name = "resumable", base = base.replace(reset_kv_cache = True, server_profiler = True),
      matrix = {"concurrency": [1, 2, 3]}, trials = 2)
`)
	args := []string{"sweep", script, "--set", "url=" + m.URL, "--set", "tok=" + tinyTokenizer(t)}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cancelWhenHeld(ctx, cancel, g, nil) // Ctrl-C during the fourth trial's profiling phase
	first := cliCtx(ctx, t, dir, args...)
	close(g.release) // the resumed sweep's requests go on
	require.Equal(t, ExitInterrupted, first.code, "stdout:\n%s\nstderr:\n%s", first.stdout, first.stderr)
	assert.Contains(t, first.stderr, "interrupted after 3 of 6 trials")
	assert.Contains(t, first.stderr, "trial 2: interrupted (not stored)")
	c := m.control()
	assert.Equal(t, 4, c.ProfilerStarts)
	assert.Equal(t, 4, c.ProfilerStops, "the interrupted child stopped its profiler")
	kinds := m.kinds()
	lastStop := -1
	for i, k := range kinds {
		if k == string(mock.EventStopProfile) {
			lastStop = i
		}
	}
	require.GreaterOrEqual(t, lastStop, 0)
	assert.NotContains(t, kinds[lastStop:], string(mock.EventRequestStart), "no request was sent after the last stop")

	db := openStore(t, dir)
	bg := context.Background()
	runs, err := db.ListRuns(bg, store.RunFilter{Sweep: "resumable"})
	require.NoError(t, err)
	require.Len(t, runs, 3, "the interrupted trial left no row")
	for _, r := range runs {
		assert.Equal(t, result.StatusComplete, r.Status)
	}
	before := storedKeys(runs)
	s, err := db.SweepRuns(bg, "resumable", nil)
	require.NoError(t, err)
	assert.Equal(t, result.StatusInterrupted, s.Sweep.Status)
	check, err := db.IntegrityCheck(bg)
	require.NoError(t, err)
	assert.Equal(t, "ok", check)
	resetsBefore := m.control().ResetCount

	second := cli(t, dir, append(args, "--resume")...)
	require.Equal(t, ExitOK, second.code, "stdout:\n%s\nstderr:\n%s", second.stdout, second.stderr)
	assert.Equal(t, 3, strings.Count(second.stderr, "already stored, skipped"))
	assert.Equal(t, 3, m.control().ResetCount-resetsBefore, "only the three missing trials ran")

	runs, err = db.ListRuns(bg, store.RunFilter{Sweep: "resumable"})
	require.NoError(t, err)
	require.Len(t, runs, 6, "every trial stored exactly once")
	keys := storedKeys(runs)
	assert.Len(t, slices.Compact(slices.Clone(keys)), 6)
	assert.Subset(t, keys, before)
	for _, r := range runs {
		assert.Equal(t, result.StatusComplete, r.Status)
		assert.Equal(t, s.Sweep.ID, r.SweepID, "resume continues the same sweep")
	}
	s, err = db.SweepRuns(bg, "resumable", nil)
	require.NoError(t, err)
	assert.Equal(t, result.StatusComplete, s.Sweep.Status)
	for _, c := range s.Cells {
		agg := readJSON(t, filepath.Join(dir, "artifacts", "resumable", c.Label, runner.AggregateFile))
		assert.Equal(t, 2.0, agg["metadata"].(map[string]any)["num_successful_runs"], "cell %s aggregates both trials", c.Label)
	}
	check, err = db.IntegrityCheck(bg)
	require.NoError(t, err)
	assert.Equal(t, "ok", check)
}

func TestScriptErrorsExitTwoAndSendNothing(t *testing.T) {
	subprocesses(t) // should a sweep wrongly start a trial, the child is aiperf, not this test binary again
	m := startMock(t, mock.Config{Fast: true})
	cases := []struct {
		name  string
		files map[string]string // main.star is run
		want  string            // after "<dir>/"
	}{
		{"syntax error", map[string]string{"main.star": "def f(:\n    pass\n"},
			"main.star:1:8: got ':', want ')'"},
		{"unknown option", map[string]string{"main.star": "base = profile(model = \"m\", url = vars[\"url\"], concurency = 8)\n"},
			`main.star:1:15: profile: unknown option "concurency" (did you mean "concurrency"?)`},
		{"wrong type", map[string]string{"main.star": "base = profile(\n    model = \"m\",\n    concurrency = \"8\",\n)\n"},
			`main.star:1:15: profile: concurrency: want int, got string "8"`},
		{"load cycle", map[string]string{
			"main.star":  "load(\"lib/a.star\", \"a\")\n",
			"lib/a.star": "load(\"b.star\", \"b\")\na = b\n",
			"lib/b.star": "load(\"a.star\", \"a\")\nb = a\n",
		}, "lib/b.star:1:1: cannot load a.star: cycle in load graph: "},
		{"invalid cell", map[string]string{"main.star": smallBase + "sweep(name = \"s\", base = base, matrix = {\"concurrency\": [1, 0]})\n"},
			`main.star:12:6: sweep "s" cell concurrency_0: --concurrency must be at least 1, got 0`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tc.files {
				writeFile(t, dir, name, content)
			}
			script := filepath.Join(dir, "main.star")
			for _, cmd := range []string{"plan", "sweep"} {
				inv := cli(t, dir, cmd, script, "--set", "url="+m.URL, "--set", "tok=unused")
				assert.Equal(t, ExitUsage, inv.code, "%s: %s", cmd, inv.stderr)
				assert.Contains(t, inv.stderr, filepath.Join(dir, tc.want), cmd)
				assert.Empty(t, inv.stdout, cmd)
			}
			assert.NoFileExists(t, filepath.Join(dir, "aiperf.db"), "nothing was stored")
			assert.NoDirExists(t, filepath.Join(dir, "artifacts"))
		})
	}
	assert.Empty(t, m.control().Events, "no script error sent anything")
}

// A cell whose input file cannot be read fails the plan and the sweep before
// any cell sends traffic, not when its turn comes after the others ran.
func TestSweepUnreadableInputFileExitsTwoBeforeTraffic(t *testing.T) {
	subprocesses(t)
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	writeFile(t, dir, "main.star", smallBase+`sweep(name = "s", base = base, scenarios = [
    {"name": "ok", "concurrency": 1},
    {"name": "bad", "concurrency": 2, "input_file": "missing.jsonl", "custom_dataset_type": "single_turn"},
])
`)
	for _, cmd := range []string{"plan", "sweep"} {
		inv := cli(t, dir, cmd, filepath.Join(dir, "main.star"), "--set", "url="+m.URL, "--set", "tok=unused")
		assert.Equal(t, ExitUsage, inv.code, "%s: %s", cmd, inv.stderr)
		assert.Contains(t, inv.stderr, `sweep "s" cell bad: input_file: input file: "`+filepath.Join(dir, "missing.jsonl")+
			`" is not a valid file or directory (nothing was sent)`, cmd)
	}
	assert.NoFileExists(t, filepath.Join(dir, "aiperf.db"), "nothing was stored")
	assert.Empty(t, m.control().Events, "nothing was sent")
}

func TestProfileNumProfileRuns(t *testing.T) {
	subprocesses(t)
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--tokenizer", tinyTokenizer(t), "--request-count", "4", "--reset-kv-cache",
		"--num-profile-runs", "3", "--name", "base", "--artifact-dir", "out")...)
	require.Equal(t, ExitOK, inv.code, "stdout:\n%s\nstderr:\n%s", inv.stdout, inv.stderr)

	ctl := m.control()
	assert.Equal(t, 3, ctl.ResetCount, "each trial subprocess resets once")
	assert.Equal(t, 12, ctl.InferenceRequests)
	segs := trialSegments(m.kinds())
	require.Len(t, segs, 3)
	for i, seg := range segs {
		assert.Equal(t, "reset", seg[0], "trial %d", i+1)
		assert.Equal(t, 4, count(seg, "request_start"), "trial %d", i+1)
	}

	// AIPerf's layout and run_info: run_0001… holding trial 0…, one sweep
	// UUID, and the user's command line, not the internal child command.
	var sweepID any
	for n := 1; n <= 3; n++ {
		tdir := filepath.Join(dir, "out", "profile_runs", fmt.Sprintf("run_%04d", n))
		for _, f := range []string{"profile_export_aiperf.json", "profile_export.jsonl", runner.ResultFile} {
			assert.FileExists(t, filepath.Join(tdir, f))
		}
		assert.NoFileExists(t, filepath.Join(tdir, runner.SpecFile))
		info := readJSON(t, filepath.Join(tdir, "profile_export_aiperf.json"))["run_info"].(map[string]any)
		assert.Equal(t, float64(n-1), info["trial"])
		assert.Equal(t, fmt.Sprintf("run_%04d", n), info["run_label"])
		assert.Equal(t, 0.0, info["variation_index"])
		assert.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, info["sweep_id"])
		if n == 1 {
			sweepID = info["sweep_id"]
		}
		assert.Equal(t, sweepID, info["sweep_id"], "one sweep id for every trial")
		assert.Regexp(t, `^aiperf --store \S+ --wide profile .*--num-profile-runs 3 --name base --artifact-dir out$`, info["cli_command"])
	}
	agg := readJSON(t, filepath.Join(dir, "out", "aggregate", runner.AggregateFile))
	assert.Equal(t, runner.AggregateSchemaVersion, agg["schema_version"])
	meta := agg["metadata"].(map[string]any)
	assert.Equal(t, "confidence", meta["aggregation_type"])
	assert.Equal(t, 3.0, meta["num_profile_runs"])
	assert.Equal(t, 3.0, meta["num_successful_runs"])
	assert.Equal(t, []any{"run_0001", "run_0002", "run_0003"}, meta["run_labels"])
	ttft := agg["metrics"].(map[string]any)["time_to_first_token_avg"].(map[string]any)
	assert.NotNil(t, ttft["ci_low"], "three trials give a confidence interval")
	aggCSV, err := os.ReadFile(filepath.Join(dir, "out", "aggregate", runner.AggregateCSVFile))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(aggCSV), "metric,mean,std,min,max,cv,se,ci_low,ci_high,t_critical,unit\n"))
	assert.Contains(t, string(aggCSV), "\nAggregation Type,confidence\nTotal Runs,3\nSuccessful Runs,3\n")
	assertCollated(t, filepath.Join(dir, "out"), 3)

	db := openStore(t, dir)
	runs, err := db.ListRuns(context.Background(), store.RunFilter{Name: "base"})
	require.NoError(t, err)
	require.Len(t, runs, 3)
	trials := map[int]bool{}
	for _, r := range runs {
		assert.Equal(t, result.StatusComplete, r.Status)
		trials[r.Trial] = true
	}
	assert.Equal(t, map[int]bool{1: true, 2: true, 3: true}, trials)
}

// Minimal views of compare's JSON reports.
type (
	versusJSON struct {
		DeltaPct    *float64 `json:"delta_pct"`
		P           *float64 `json:"p_value"`
		Significant bool     `json:"significant"`
		Verdict     string   `json:"verdict"`
	}
	groupsJSON struct {
		Groups []struct {
			Ref    string `json:"ref"`
			Trials int    `json:"trials"`
		} `json:"groups"`
		Metrics []struct {
			Metric string       `json:"metric"`
			Versus []versusJSON `json:"versus"`
		} `json:"metrics"`
	}
	cellMetricJSON struct {
		Metric string          `json:"metric"`
		A      struct{ N int } `json:"a"`
		B      struct{ N int } `json:"b"`
		Versus versusJSON      `json:"versus"`
	}
	sweepDiffJSON struct {
		Cells []struct {
			Label  string `json:"label"`
			Params []struct {
				Name  string `json:"name"`
				Value any    `json:"value"`
			} `json:"params"`
			Metrics []cellMetricJSON `json:"metrics"`
		} `json:"cells"`
		OnlyA []string `json:"only_in_a"`
		OnlyB []string `json:"only_in_b"`
	}
)

// compareGroups runs `compare --format json` on refs in dir and decodes it:
// one group per ref, each with trials trials.
func compareGroups(t *testing.T, dir string, trials int, refs ...string) groupsJSON {
	t.Helper()
	inv := cli(t, dir, append(append([]string{"compare"}, refs...), "--format", "json")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	var rep groupsJSON
	require.NoError(t, json.Unmarshal([]byte(inv.stdout), &rep), inv.stdout)
	require.Len(t, rep.Groups, len(refs))
	for _, g := range rep.Groups {
		assert.Equal(t, trials, g.Trials, g.Ref)
	}
	return rep
}

func (g groupsJSON) versus(t *testing.T, metric string) versusJSON {
	t.Helper()
	for _, m := range g.Metrics {
		if m.Metric == metric {
			require.Len(t, m.Versus, 1)
			return m.Versus[0]
		}
	}
	t.Fatalf("compare has no %s", metric)
	return versusJSON{}
}

// TestCompareSeesTheSlowerServer: two sweeps of one script, against a
// server that cannot answer within 200 ms and one that answers at once,
// share one cell under different labels: compared as groups (SWEEP/CELL)
// or sweep against sweep (cells matched by parameters), the slow one is
// worse, with a verdict. The difference is structural: the slow mock never
// sends a first token before 200 ms, the fast one's TTFT is the machine's
// overhead alone, so only the direction and the verdict are asserted, never
// a ratio of timings (the deltas' arithmetic is tested on fixed data in
// TestCompareCommand and internal/compare). What a loaded machine adds is
// kept from swamping the 200 ms: each trial warms up first (a trial
// process's first requests pay its start-up, hundreds of ms under -race
// beside CPU burners), averages 8 requests, and each side has 4 trials.
func TestCompareSeesTheSlowerServer(t *testing.T) {
	subprocesses(t)
	fast := startMock(t, mock.Config{Fast: true})
	slow := startMock(t, mock.Config{TTFT: 200, ITL: 1})
	dir := t.TempDir()
	tok := tinyTokenizer(t)
	script := writeFile(t, dir, "pair.star", `
def base(url):
    return profile(model = "mock-model", url = url, tokenizer = vars["tok"], streaming = True, request_count = 8,
                   warmup_request_count = 2,
                   synthetic_input_tokens_mean = 16, output_tokens_mean = 2, num_dataset_entries = 4)

sweep(name = "before", base = base(vars["fast"]), trials = 4,
      scenarios = [{"name": "low", "concurrency": 1}, {"name": "high", "concurrency": 2}])
sweep(name = "after", base = base(vars["slow"]), trials = 4, matrix = {"concurrency": [2, 3]})
`)
	for _, only := range []string{"before", "after"} {
		inv := cli(t, dir, "sweep", script, "--only", only, "--set", "fast="+fast.URL, "--set", "slow="+slow.URL,
			"--set", "tok="+tok, "--ui", "none")
		require.Equal(t, ExitOK, inv.code, "%s:\n%s", only, inv.stderr)
	}

	rep := compareGroups(t, dir, 4, "before/high", "after/concurrency_2")
	v := rep.versus(t, "time_to_first_token.avg")
	require.NotNil(t, v.P, "both sides are replicated: a verdict was computed")
	require.NotNil(t, v.DeltaPct)
	t.Logf("slow against fast: TTFT %+.1f%%, p %.2g", *v.DeltaPct, *v.P)
	assert.Positive(t, *v.DeltaPct, "the slow server's TTFT is the larger")
	assert.True(t, v.Significant)
	assert.Equal(t, "worse", v.Verdict)
	table := cli(t, dir, "compare", "before/high", "after/concurrency_2")
	require.Equal(t, ExitOK, table.code, table.stderr)
	row := lineContaining(t, table.stdout, "time_to_first_token.avg")
	assert.Contains(t, row, "worse")
	assert.Regexp(t, `\+[\d,]+\.\d%`, row)

	diff := cli(t, dir, "compare", "--sweep", "before", "--sweep", "after", "--format", "json")
	require.Equal(t, ExitOK, diff.code, diff.stderr)
	var sd sweepDiffJSON
	require.NoError(t, json.Unmarshal([]byte(diff.stdout), &sd), diff.stdout)
	assert.Equal(t, []string{"low"}, sd.OnlyA)
	assert.Equal(t, []string{"concurrency_3"}, sd.OnlyB)
	require.Len(t, sd.Cells, 1, "the one cell both sweeps ran")
	c := sd.Cells[0]
	assert.Equal(t, "high", c.Label)
	require.Len(t, c.Params, 1)
	assert.Equal(t, "concurrency", c.Params[0].Name)
	assert.EqualValues(t, 2, c.Params[0].Value)
	i := slices.IndexFunc(c.Metrics, func(m cellMetricJSON) bool { return m.Metric == "time_to_first_token.avg" })
	require.GreaterOrEqual(t, i, 0)
	ttft := c.Metrics[i]
	assert.Equal(t, 4, ttft.A.N)
	assert.Equal(t, 4, ttft.B.N)
	require.NotNil(t, ttft.Versus.DeltaPct)
	assert.Positive(t, *ttft.Versus.DeltaPct)
	assert.Equal(t, "worse", ttft.Versus.Verdict)
}

// TestSweepOnly: with several sweeps in one file, --only picks some, in
// script order and each once; an unknown name lists the file's sweeps.
func TestSweepOnly(t *testing.T) {
	subprocesses(t)
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	script := writeFile(t, dir, "multi.star", smallBase+`
reset = base.replace(reset_kv_cache = True)
sweep(name = "a", base = reset, matrix = {"concurrency": [1, 2]})
sweep(name = "b", base = reset, zip = {"concurrency": [1, 2, 3], "request_count": [2, 3, 4]})
sweep(name = "c", base = reset)
`)
	set := []string{"--set", "url=" + m.URL, "--set", "tok=" + tinyTokenizer(t)}

	pj := cli(t, dir, append([]string{"plan", script, "--format", "json", "--only", "c", "--only", "a", "--only", "c"}, set...)...)
	require.Equal(t, ExitOK, pj.code, pj.stderr)
	var p planned
	require.NoError(t, json.Unmarshal([]byte(pj.stdout), &p))
	require.Len(t, p.Sweeps, 2)
	assert.Equal(t, "a", p.Sweeps[0].Name, "script order")
	assert.Equal(t, "c", p.Sweeps[1].Name)
	assert.Len(t, p.Trials, 3)

	bad := cli(t, dir, append([]string{"sweep", script, "--only", "d"}, set...)...)
	assert.Equal(t, ExitUsage, bad.code, bad.stderr)
	assert.Contains(t, bad.stderr, "--only d: "+script+" declares no sweep of that name; its sweeps are a, b, c")

	sw := cli(t, dir, append([]string{"sweep", script, "--only", "b", "--ui", "none"}, set...)...)
	require.Equal(t, ExitOK, sw.code, "stdout:\n%s\nstderr:\n%s", sw.stdout, sw.stderr)
	assert.Contains(t, sw.stdout, `Sweep "b"`)
	assert.NotContains(t, sw.stdout, `Sweep "a"`)
	ctl := m.control()
	assert.Equal(t, 3, ctl.ResetCount, "only sweep b's three trials ran")
	assert.Equal(t, 2+3+4, ctl.InferenceRequests)
	assert.DirExists(t, filepath.Join(dir, "artifacts", "b"))
	assert.NoDirExists(t, filepath.Join(dir, "artifacts", "a"))
}

// TestProfileCommaListSweep: AIPerf's comma lists on profile
// (--concurrency 2,4 with --num-profile-runs 2) run as a sweep: a cell per
// value, each trial its own subprocess that resets once, in repeated order
// (every value's trial 1, then trial 2), in AIPerf's layout, stored as one
// sweep.
func TestProfileCommaListSweep(t *testing.T) {
	subprocesses(t)
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--tokenizer", tinyTokenizer(t), "--concurrency", "2,4", "--request-count", "4",
		"--reset-kv-cache", "--num-profile-runs", "2", "--name", "scan", "--artifact-dir", "out")...)
	require.Equal(t, ExitOK, inv.code, "stdout:\n%s\nstderr:\n%s", inv.stdout, inv.stderr)
	assert.Equal(t, 4, m.control().ResetCount, "each trial subprocess resets once")
	var order []string
	for n := 1; n <= 2; n++ {
		for _, c := range []int{2, 4} {
			tdir := filepath.Join(dir, "out", "profile_runs", fmt.Sprintf("trial_%04d", n), fmt.Sprintf("concurrency_%d", c))
			exp := readJSON(t, filepath.Join(tdir, "profile_export_aiperf.json"))
			assert.Equal(t, float64(c), exp["input_config"].(map[string]any)["aiperf_go"].(map[string]any)["concurrency"])
			order = append(order, exp["run_info"].(map[string]any)["run_label"].(string))
		}
	}
	assert.FileExists(t, filepath.Join(dir, "out", "aggregate", "concurrency_2", runner.AggregateFile))
	list := cli(t, dir, "compare", "--sweep", "scan")
	require.Equal(t, ExitOK, list.code, list.stderr)
	assert.Regexp(t, `│\s+2 │\s+2 │`, list.stdout, "concurrency 2: 2 trials")
	assert.Regexp(t, `│\s+4 │\s+2 │`, list.stdout, "concurrency 4: 2 trials")

	for args, want := range map[string]string{
		"--concurrency 2,x": `--concurrency 2,x: "x" is not an integer`,
		"--concurrency 2,0": "--concurrency must be at least 1, got 0 (cell concurrency_0)",
		"--concurrency 2,4 --osl 8,16,32 --sweep-type zip": "zip pairs the lists element-wise",
	} {
		inv := cli(t, t.TempDir(), quick(m.URL, append(strings.Fields(args), "--request-count", "2")...)...)
		assert.Equal(t, ExitUsage, inv.code, args)
		assert.Contains(t, inv.stderr, want, args)
	}
}

// TestProfileYAMLSweep: AIPerf's YAML sweep: (grid over a bare phase field
// and a dataset path) with multi_run: and variables: runs unchanged: a cell
// per combination, each trial its own subprocess with its own reset, in
// AIPerf's layout; config validate and expand say what it declares without
// sending anything, and a bad variation is named before any traffic.
func TestProfileYAMLSweep(t *testing.T) {
	subprocesses(t)
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	yaml := strings.Join([]string{
		`schemaVersion: "2.0"`,
		"variables: {url: " + m.URL + "}",
		"benchmark:",
		"  model: mock-model",
		"  endpoint: {url: '{{ url }}', reset_kv_cache: true}",
		"  tokenizer: " + tinyTokenizer(t),
		"  dataset: {type: synthetic, prompts: {isl: 32, osl: 4}}",
		"  phases: {type: concurrency, concurrency: 1, requests: 3}",
		"sweep: {type: grid, parameters: {concurrency: [1, 2], datasets.default.prompts.isl: [32, 64]}}",
		"multi_run: {num_runs: 2}",
	}, "\n")
	writeFile(t, dir, "sweep.yaml", yaml)

	inv := cli(t, dir, "config", "validate", "sweep.yaml")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stdout, "is valid: 4 cells × 2 trials")
	inv = cli(t, dir, "config", "expand", "--config-file", "sweep.yaml")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stdout, "8 trials in total; nothing was sent")
	assert.Zero(t, m.control().InferenceRequests)

	inv = cli(t, dir, "profile", "--config", "sweep.yaml", "--artifact-dir", "out", "--ui", "none")
	require.Equal(t, ExitOK, inv.code, "stdout:\n%s\nstderr:\n%s", inv.stdout, inv.stderr)
	assert.Equal(t, 8, m.control().ResetCount, "each trial subprocess resets once")
	assert.Equal(t, 24, m.control().InferenceRequests)
	exp := readJSON(t, filepath.Join(dir, "out", "profile_runs", "trial_0002", "concurrency_2__isl_64", "profile_export_aiperf.json"))
	assert.Equal(t, 64.0, metricAvg(t, exp, "input_sequence_length"))

	writeFile(t, dir, "bad.yaml", strings.Replace(yaml, "concurrency: [1, 2]", "concurrency: [1, 0]", 1))
	inv = cli(t, dir, "config", "validate", "bad.yaml")
	assert.Equal(t, ExitUsage, inv.code)
	assert.Contains(t, inv.stderr, "(cell concurrency_0__isl_32)")

	// A value the file sets is named by its line and key; one a flag sets,
	// by the flag.
	body, _, _ := strings.Cut(yaml, "\nsweep:")
	writeFile(t, dir, "isl0.yaml", strings.Replace(body, "isl: 32", "isl: 0", 1))
	inv = cli(t, dir, "config", "validate", "isl0.yaml")
	assert.Equal(t, ExitUsage, inv.code)
	assert.Contains(t, inv.stderr, "isl0.yaml:7: benchmark.dataset.prompts.isl must be at least 1, got 0")
	inv = cli(t, dir, "profile", "--config", "sweep.yaml", "--isl", "0", "--ui", "none")
	assert.Equal(t, ExitUsage, inv.code)
	assert.Contains(t, inv.stderr, "--synthetic-input-tokens-mean must be at least 1, got 0")
	assert.Zero(t, m.control().InferenceRequests-24, "nothing more was sent")
}
