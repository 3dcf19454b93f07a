package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/hooks"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/report"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/store"
)

const testAPIKey = "sk-cmd-secret-0042"

// storedRun is a streaming run whose requests see the given TTFT.
func storedRun(name string, ttftMs float64) *result.Run {
	cfg := plan.NewProfile()
	cfg.Model, cfg.URL, cfg.Streaming = []string{"mock-model"}, []string{"http://127.0.0.1:8000"}, true
	cfg.Concurrency = plan.Ptr(2)
	cfg.APIKey = testAPIKey // SaveRun redacts it
	start := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	var records []metrics.Record
	for i := range 8 {
		sent := int64(i) * 50e6
		first := sent + int64(ttftMs*1e6) + int64(i)*10e3
		records = append(records, metrics.Record{Index: i, Phase: plan.KindProfiling, PhaseKind: plan.KindProfiling,
			Streaming: true, ScheduledNs: sent, SentNs: sent, EndNs: first + 40e6, WallStartNs: start.UnixNano(),
			ResponseNs: metrics.StampsOf(first, first+20e6, first+40e6), InputTokens: 100, OutputTokens: 3, Status: 200})
	}
	return &result.Run{
		BenchmarkID: name + "-bench", ToolVersion: "test", Host: "host", Config: cfg, Name: name,
		CLICommand: "aiperf profile --api-key " + testAPIKey,
		StartTime:  start, EndTime: start.Add(time.Second), Status: result.StatusComplete,
		Profiling:    metrics.Summarize(records, true),
		ErrorSummary: []metrics.ErrorCount{},
		ControlHooks: []hooks.Call{{Hook: "reset_kv_cache", Origin: "http://127.0.0.1:8000", Path: "/reset_prefix_cache", Status: 200, Attempts: 1, OK: true}},
		Audit:        result.Audit{Mode: "concurrency", AchievedRate: 20},
		Records:      records,
	}
}

// seededStore writes three runs named fast (TTFT ≈ 20 ms) and three named
// slow (≈ 60 ms), ids 1–6.
func seededStore(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "aiperf.db")
	db, err := store.Open(path)
	require.NoError(t, err)
	defer db.Close()
	for _, g := range []struct {
		name string
		ttft float64
	}{{"fast", 20}, {"slow", 60}} {
		for i := range 3 {
			_, err := db.SaveRun(context.Background(), storedRun(g.name, g.ttft+float64(i)*0.3), "art/"+g.name)
			require.NoError(t, err)
		}
	}
	return path
}

// aiperf runs the CLI in-process, --wide (the tests read cells whole).
func aiperf(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), append([]string{"--wide"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

func TestRunsCommands(t *testing.T) {
	t.Parallel()
	path := seededStore(t)

	t.Run("list", func(t *testing.T) {
		code, out, errOut := aiperf(t, "--store", path, "runs", "list", "--limit", "4")
		require.Equal(t, ExitOK, code, errOut)
		assert.Contains(t, out, "ttft p99 (ms)")
		assert.Contains(t, out, "concurrency 2")
		code, out, _ = aiperf(t, "--store", path, "runs", "list", "--name", "fast", "--format", "json")
		require.Equal(t, ExitOK, code)
		var rows []store.RunRow
		require.NoError(t, json.Unmarshal([]byte(out), &rows))
		require.Len(t, rows, 3)
		assert.Equal(t, int64(3), rows[0].ID, "newest first")
		assert.InDelta(t, 20.6, rows[0].Stats["time_to_first_token.avg"], 0.1)
	})
	t.Run("show", func(t *testing.T) {
		code, out, errOut := aiperf(t, "--store", path, "runs", "show", "4")
		require.Equal(t, ExitOK, code, errOut)
		for _, want := range []string{"Run 4: complete", "name:         slow", "Time to First Token (ms)",
			"/reset_prefix_cache", `"api_key": "<redacted>"`, "--api-key <redacted>"} {
			assert.Contains(t, out, want)
		}
		assert.NotContains(t, out, testAPIKey)
	})
	t.Run("export", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "out")
		code, out, errOut := aiperf(t, "--store", path, "runs", "export", "2", "-o", dir)
		require.Equal(t, ExitOK, code, errOut)
		assert.Contains(t, out, filepath.Join(dir, "profile_export_aiperf.json"))
		b, err := os.ReadFile(filepath.Join(dir, "profile_export_aiperf.json"))
		require.NoError(t, err)
		var doc map[string]any
		require.NoError(t, json.Unmarshal(b, &doc))
		assert.Equal(t, "fast-bench", doc["benchmark_id"])
		assert.Contains(t, doc, "time_to_first_token")
		assert.NotContains(t, string(b), testAPIKey)

		code, _, errOut = aiperf(t, "--store", path, "runs", "export", "3", "-o", dir)
		assert.Equal(t, ExitUsage, code, "an export is not written over another")
		assert.Contains(t, errOut, "profile_export_aiperf.json exists")
		code, _, errOut = aiperf(t, "--store", path, "runs", "export", "3", "-o", filepath.Join(dir, "profile_export_aiperf.json"))
		assert.Equal(t, ExitUsage, code)
		assert.Contains(t, errOut, "is a file: give a directory")

		code, out, _ = aiperf(t, "--store", path, "runs", "export", "2", "--format", "csv")
		require.Equal(t, ExitOK, code)
		assert.Contains(t, out, "Time to First Token (ms)")
	})
	t.Run("bad list and metric flags", func(t *testing.T) {
		code, _, errOut := aiperf(t, "--store", path, "runs", "list", "--limit=-5")
		assert.Equal(t, ExitUsage, code)
		assert.Contains(t, errOut, "--limit must be 0 (all) or more, got -5")
		code, _, errOut = aiperf(t, "--store", path, "compare", "fast", "slow", "--metric", ",")
		assert.Equal(t, ExitUsage, code)
		assert.Contains(t, errOut, "--metric names no statistic")
	})
	t.Run("unknown run", func(t *testing.T) {
		code, _, errOut := aiperf(t, "--store", path, "runs", "show", "99")
		assert.Equal(t, ExitUsage, code)
		assert.Contains(t, errOut, "run 99 not found (see aiperf runs list)")
	})
	t.Run("no store", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "none.db")
		code, _, errOut := aiperf(t, "--store", missing, "runs", "list")
		assert.Equal(t, ExitUsage, code)
		assert.Contains(t, errOut, "no run store at "+missing)
		assert.NoFileExists(t, missing, "reading never creates a store")
		code, _, errOut = aiperf(t, "--store", "none.db", "runs", "list")
		assert.Equal(t, ExitUsage, code)
		wd, err := os.Getwd()
		require.NoError(t, err)
		assert.Contains(t, errOut, "no run store at none.db (relative to this directory, "+wd+")", "a relative path says where it was looked for")
	})
}

func TestRunsDelete(t *testing.T) {
	t.Parallel()
	path := seededStore(t)
	code, _, errOut := aiperf(t, "--store", path, "runs", "delete", "1", "77")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, errOut, "run 77 not found")
	code, out, errOut := aiperf(t, "--store", path, "runs", "delete", "1", "2", "1")
	require.Equal(t, ExitOK, code, errOut)
	assert.Equal(t, "deleted run 1\ndeleted run 2\n", out)
	code, out, _ = aiperf(t, "--store", path, "runs", "list", "--format", "json")
	require.Equal(t, ExitOK, code)
	var rows []store.RunRow
	require.NoError(t, json.Unmarshal([]byte(out), &rows))
	assert.Len(t, rows, 4)
}

// TestRunsExportRefusesAnUnfinishedRun: a run still going, or one whose
// process exited before it summarised its records, is not exported: its
// AIPerf export passed for a run that ran whole (was_cancelled false, no
// metric, an empty CSV), exit 0. It is refused, saying why and writing
// nothing; once summarised, the run exports.
func TestRunsExportRefusesAnUnfinishedRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "aiperf.db")
	db, err := store.Open(path)
	require.NoError(t, err)
	defer db.Close()
	in := storedRun("big", 20)
	p := db.BeginRun(&result.Run{Name: in.Name, Config: in.Config, StartTime: in.StartTime})
	require.NoError(t, p.Add(ctx, in.Records[:5]))
	out := filepath.Join(t.TempDir(), "out")

	for _, format := range []string{"json", "csv"} {
		code, stdout, errOut := aiperf(t, "--store", path, "runs", "export", "1", "--format", format)
		assert.Equal(t, ExitUsage, code, errOut)
		assert.Contains(t, errOut, "aiperf: error: run 1 is still going: its figures are summarised when it ends; export it then (nothing was written)")
		assert.Empty(t, stdout)
	}
	// Its process gone (this test's pid stands for a live one): a killed run.
	execSQL(t, path, `DELETE FROM sweep_locks`)
	for _, format := range []string{"json", "csv"} {
		code, stdout, errOut := aiperf(t, "--store", path, "runs", "export", "1", "--format", format, "-o", out)
		assert.Equal(t, ExitUsage, code, errOut)
		assert.Contains(t, errOut, "aiperf: error: run 1 did not finish: the run's process exited before it summarised its "+
			"records (5 profiling records stored), so it has no figures to export; aiperf runs show 1 says what it holds (nothing was written)")
		assert.Empty(t, stdout)
		assert.NoDirExists(t, out)
	}

	_, err = p.Complete(ctx, in, "")
	require.NoError(t, err)
	code, stdout, errOut := aiperf(t, "--store", path, "runs", "export", "1", "--format", "json")
	require.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, stdout, `"was_cancelled": false`)
}

func TestCompareCommand(t *testing.T) {
	t.Parallel()
	path := seededStore(t)

	t.Run("groups by name", func(t *testing.T) {
		code, out, errOut := aiperf(t, "--store", path, "compare", "fast", "slow", "--format", "json",
			"--metric", "time_to_first_token.avg,request_throughput.avg")
		require.Equal(t, ExitOK, code, errOut)
		var rep struct {
			Metrics []struct {
				Metric string
				Versus []struct {
					DeltaPct    float64 `json:"delta_pct"`
					Significant bool
					Verdict     string
				}
			}
		}
		require.NoError(t, json.Unmarshal([]byte(out), &rep))
		require.Len(t, rep.Metrics, 2)
		ttft := rep.Metrics[0].Versus[0]
		assert.Equal(t, "worse", ttft.Verdict)
		assert.True(t, ttft.Significant)
		assert.InDelta(t, 196, ttft.DeltaPct, 5)
	})
	t.Run("--threshold", func(t *testing.T) {
		// fast and slow: TTFT ≈ 20.3 and 60.3 ms over three trials, +196%.
		verdict := func(args ...string) map[string]any {
			t.Helper()
			code, out, errOut := aiperf(t, append([]string{"--store", path, "compare", "fast", "slow", "--format", "json",
				"--metric", "time_to_first_token.avg"}, args...)...)
			require.Equal(t, ExitOK, code, errOut)
			var rep struct {
				Metrics []struct{ Versus []map[string]any }
			}
			require.NoError(t, json.Unmarshal([]byte(out), &rep))
			return rep.Metrics[0].Versus[0]
		}
		def := verdict()
		assert.Equal(t, "worse", def["verdict"])
		assert.Equal(t, 2.0, def["threshold_pct"], "a latency's default")
		assert.Greater(t, def["tost_p_value"], 0.99)
		wide := verdict("--threshold", "300")
		assert.Equal(t, "equivalent", wide["verdict"], "+196% is within ±300%")
		assert.Equal(t, 300.0, wide["threshold_pct"])
		plain := verdict("--threshold", "0")
		assert.Equal(t, "worse", plain["verdict"])
		assert.Nil(t, plain["tost_p_value"], "threshold 0: the plain test, no TOST")

		code, out, errOut := aiperf(t, "--store", path, "compare", "fast", "slow", "--threshold", "300")
		require.Equal(t, ExitOK, code, errOut)
		assert.Regexp(t, `time_to_first_token\.avg .*\+19\d\.\d% │ equivalent ±300% \(TOST p[<=]0\.\d{3}\)`, out)
		assert.Contains(t, out, "threshold: ±300% of the baseline mean")
	})
	t.Run("single runs are unreplicated", func(t *testing.T) {
		code, out, errOut := aiperf(t, "--store", path, "compare", "1", "4")
		require.Equal(t, ExitOK, code, errOut)
		assert.Contains(t, out, "run 1 (n=1)")
		assert.Contains(t, out, "unreplicated")
	})
	t.Run("errors", func(t *testing.T) {
		tests := []struct {
			args []string
			want string
		}{
			{[]string{"compare", "999"}, `run 999 not found: deleted, or never stored (see aiperf runs list)`},
			{[]string{"compare", "--sweep", "nope"}, `sweep "nope" not found (see aiperf runs list, and aiperf runs sweeps for sweeps and searches)`},
			{[]string{"compare"}, "nothing to compare"},
			{[]string{"compare", "fast", "--sweep", "x"}, "not both"},
			{[]string{"compare", "--sweep", "a", "--sweep", "b", "--sweep", "c"}, "got 3"},
			{[]string{"compare", "fast", "--metric", "ttft.p42"}, `unknown statistic "p42"`},
			{[]string{"compare", "fast", "--confidence-level", "1"}, "between 0 and 1"},
			{[]string{"compare", "fast", "slow", "--threshold=-1"}, "--threshold must be 0 or more (a % of the baseline mean), got -1"},
			{[]string{"compare", "fast", "slow", "--threshold", "nan"}, "--threshold must be a finite number, got NaN"},
			{[]string{"compare", "fast", "slow", "--threshold", "inf"}, "--threshold must be a finite number, got +Inf"},
			{[]string{"compare", "--sweep", "a", "--threshold=-inf"}, "--threshold must be a finite number, got -Inf"},
			{[]string{"compare", "fast", "slow", "--threshold", "2%"}, "--threshold: expected a float"},
			{[]string{"compare", "fast", "fast"}, `"fast" and "fast" share runs [1 2 3]: a comparison needs groups of different runs`},
			{[]string{"compare", "slow", "1", "fast"}, `"1" and "fast" share runs [1]`},
			{[]string{"compare", "", "fast"}, "run reference 1 is empty"},
			{[]string{"compare", "--sweep", " "}, "--sweep is empty"},
		}
		for _, tc := range tests {
			code, _, errOut := aiperf(t, append([]string{"--store", path}, tc.args...)...)
			assert.Equal(t, ExitUsage, code, tc.args)
			assert.Contains(t, errOut, tc.want, tc.args)
		}
	})
}

func TestPrintSweepTable(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "aiperf.db")
	db, err := store.Open(path)
	require.NoError(t, err)
	defer db.Close()
	ctx := context.Background()
	id, err := db.BeginSweep(ctx, store.SweepMeta{Name: "scan", Trials: 2})
	require.NoError(t, err)
	for c, ttft := range []float64{20, 40} {
		params := []plan.Param{{Name: "concurrency", Value: float64(c + 1)}}
		cell := plan.Cell{ID: plan.CellID("scan", params), Label: plan.CellLabel(params), Index: c, Params: params}
		for n := 1; n <= 2; n++ {
			r := storedRun("", ttft+float64(n))
			r.Info = result.TrialInfo{Sweep: "scan", SweepID: id, CellID: cell.ID, CellLabel: cell.Label, Params: params, Trial: n}
			_, err := db.SaveRun(ctx, r, "")
			require.NoError(t, err)
		}
	}
	var out bytes.Buffer
	require.NoError(t, printSweepTable(ctx, &Globals{Stdout: report.Wide(&out)}, db, strconv.FormatInt(id, 10), 0.95))
	assert.Contains(t, out.String(), `Sweep "scan" (id 1, running)`)
	assert.Contains(t, out.String(), "concurrency")
	assert.Contains(t, out.String(), "yes", "a Pareto-optimal cell is marked")

	code, viaCLI, errOut := aiperf(t, "--store", path, "compare", "--sweep", "scan")
	require.Equal(t, ExitOK, code, errOut)
	assert.Equal(t, out.String(), viaCLI)

	// A sweep of several cells is no single group: a usage error that says
	// what to write instead.
	code, _, errOut = aiperf(t, "--store", path, "compare", "scan", "scan/concurrency_2")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, errOut, `"scan" is ambiguous`)
	assert.Contains(t, errOut, "--sweep scan, or pick one as scan/<cell label>, e.g. scan/concurrency_1")
	code, _, errOut = aiperf(t, "--store", path, "compare", "scan/concurrency_1", "scan/concurrency_2")
	assert.Equal(t, ExitOK, code, errOut)

	// Two sweeps with no cell in common have nothing to compare: a usage
	// error that names the cells of each, not an empty table.
	other, err := db.BeginSweep(ctx, store.SweepMeta{Name: "isl", Trials: 1})
	require.NoError(t, err)
	params := []plan.Param{{Name: "synthetic_input_tokens_mean", Value: float64(16)}}
	r := storedRun("", 30)
	r.Info = result.TrialInfo{Sweep: "isl", SweepID: other, CellID: plan.CellID("isl", params), CellLabel: plan.CellLabel(params), Params: params, Trial: 1}
	_, err = db.SaveRun(ctx, r, "")
	require.NoError(t, err)
	code, _, errOut = aiperf(t, "--store", path, "compare", "--sweep", "scan", "--sweep", "isl")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, errOut, `sweeps "scan" and "isl" share no cell (cells are matched by their parameters: concurrency_1, concurrency_2 `+
		`against synthetic_input_tokens_mean_16): nothing to compare; compare one cell of each instead: aiperf compare scan/concurrency_1 isl/synthetic_input_tokens_mean_16`)
}
