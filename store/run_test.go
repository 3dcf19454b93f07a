package store_test

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/store"
)

func TestSaveRunRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := MustOpenDB(t)
	in := newRun(runOpts{name: "baseline", records: 5})
	id, err := db.SaveRun(ctx, in, "artifacts/x")
	require.NoError(t, err)

	t.Run("without records", func(t *testing.T) {
		got, err := db.GetRun(ctx, id, false)
		require.NoError(t, err)
		want := *in
		want.Records = nil
		assert.Equal(t, &want, got)
	})
	t.Run("with compact records", func(t *testing.T) {
		got, err := db.GetRun(ctx, id, true)
		require.NoError(t, err)
		require.Len(t, got.Records, 5)
		want := in.Records[0]
		want.RequestID, want.Model = "", ""
		want.ResponseNs = metrics.StampsOf(want.ResponseNs.First(), want.ResponseNs.Last()) // first and last only
		assert.Equal(t, want, got.Records[0])
		failed := got.Records[4]
		assert.Zero(t, failed.ResponseNs.Len())
		assert.Equal(t, &metrics.Error{Code: 500, Type: "HTTPError"}, failed.Error)
		assert.False(t, failed.OK())
	})
	t.Run("listed with its headline statistics", func(t *testing.T) {
		rows, err := db.ListRuns(ctx, store.RunFilter{Stats: []string{"time_to_first_token.p99", "request_throughput.avg"}})
		require.NoError(t, err)
		require.Len(t, rows, 1)
		r := rows[0]
		assert.Equal(t, id, r.ID)
		assert.Equal(t, "baseline", r.Name)
		assert.Equal(t, "mock-model", r.Model)
		assert.Equal(t, "concurrency", r.Mode)
		assert.Equal(t, 4, *r.Concurrency)
		assert.Equal(t, 64, *r.OSL)
		assert.Equal(t, "artifacts/x", r.ArtifactDir)
		assert.Equal(t, 5, r.RecordCount)
		p99, ok := r.Stat("time_to_first_token", "p99")
		assert.True(t, ok)
		assert.Equal(t, 30.0, p99)
		thr, ok := r.Stat("request_throughput", "avg")
		assert.True(t, ok, "a scalar's value answers avg")
		assert.Equal(t, 50.0, thr)
		_, ok = r.Stat("inter_token_latency", "avg")
		assert.False(t, ok, "only the requested statistics are loaded")
	})
	t.Run("unknown id", func(t *testing.T) {
		_, err := db.GetRun(ctx, 999, false)
		require.ErrorIs(t, err, store.ErrNotFound)
		require.ErrorContains(t, err, "run 999 not found")
	})
}

func TestSaveRunKeepsSecretsOut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "aiperf.db")
	db := openAt(t, path)
	const key, token, password = "sk-live-KEY-0001", "tok-HEADER-0002", "pw-URL-0003"
	r := newRun(runOpts{name: "secret", records: 3})
	// A caller that forgot to redact, and a command line and errors that echo the secrets.
	r.Config.APIKey = key
	r.Config.Header = []string{"Authorization: Bearer " + token, "X-Trace: visible-header"}
	r.Config.URL = []string{"http://user:" + password + "@127.0.0.1:8000"}
	r.CLICommand = "aiperf profile --api-key " + key + " -H 'Authorization: Bearer " + token + "'"
	r.Error = "request failed with key " + key
	r.ErrorSummary[0].Error.Message = "401: bad token " + token
	r.ControlHooks[1].Error = "POST http://user:" + password + "@127.0.0.1:8000/start_profile: 503"
	r.Audit.Warnings = []string{"saw " + key}
	id, err := db.SaveRun(ctx, r, "")
	require.NoError(t, err)
	assert.Equal(t, key, r.Config.APIKey, "the caller's run is not modified")

	got, err := db.GetRun(ctx, id, true)
	require.NoError(t, err)
	assert.Equal(t, plan.Redacted, got.Config.APIKey)
	assert.Contains(t, got.Config.Header, "X-Trace: visible-header")
	assert.Contains(t, got.CLICommand, "--api-key "+plan.Redacted)

	require.NoError(t, db.Close())
	files, err := filepath.Glob(path + "*") // the database, and any -wal/-shm left behind
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, secret := range []string{key, token, password} {
			assert.False(t, bytes.Contains(b, []byte(secret)), "%s holds secret %q", f, secret)
		}
	}
}

func TestSaveRunIsAllOrNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name string
		edit func(r *result.Run)
		want string
	}{
		{"duplicate record index fails on the last row", func(r *result.Run) { r.Records[len(r.Records)-1].Index = 0 }, "insert records"},
		{"unknown sweep", func(r *result.Run) { r.Info = result.TrialInfo{SweepID: 42, CellID: "abc", Trial: 1} }, "FOREIGN KEY"},
		{"cell without sweep", func(r *result.Run) { r.Info = result.TrialInfo{CellID: "abc", Trial: 1} }, `cell "abc" but no sweep id`},
		{"invalid status", func(r *result.Run) { r.Status = "weird" }, `invalid status "weird"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := MustOpenDB(t)
			r := newRun(runOpts{name: "x", records: 50})
			tc.edit(r)
			_, err := db.SaveRun(ctx, r, "")
			require.ErrorContains(t, err, tc.want)
			require.ErrorContains(t, err, "save run")
			for _, table := range []string{"runs", "run_stats", "records", "run_errors", "control_calls", "cells"} {
				assert.Zero(t, count(t, db, "SELECT count(*) FROM "+table), table)
			}
		})
	}
}

func TestDeleteRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := MustOpenDB(t)
	a, err := db.SaveRun(ctx, newRun(runOpts{name: "a", records: 10}), "")
	require.NoError(t, err)
	b, err := db.SaveRun(ctx, newRun(runOpts{name: "b", records: 10}), "")
	require.NoError(t, err)

	err = db.DeleteRuns(ctx, a, 777)
	require.ErrorIs(t, err, store.ErrNotFound)
	require.ErrorContains(t, err, "run 777 not found")
	assert.Equal(t, 2, count(t, db, `SELECT count(*) FROM runs`), "nothing deleted when an id is unknown")

	require.NoError(t, db.DeleteRuns(ctx, a, a), "an id given twice counts once")
	for _, table := range []string{"run_stats", "records", "run_errors", "control_calls"} {
		assert.Zero(t, count(t, db, "SELECT count(*) FROM "+table+" WHERE run_id = ?", a), table+" cascades")
		assert.NotZero(t, count(t, db, "SELECT count(*) FROM "+table+" WHERE run_id = ?", b), table+" of the other run stays")
	}
}

func TestSweepLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := MustOpenDB(t)
	cells := []plan.Cell{testCell("scan", 1, 0), testCell("scan", 4, 1), testCell("scan", 16, 2)}
	meta := store.SweepMeta{Name: "scan", ScriptPath: "examples/scan.star", PlanSHA256: "abc123",
		Vars: map[string]string{"url": "http://127.0.0.1:8000"}, Trials: 2, Cells: cells}
	sweepID, err := db.BeginSweep(ctx, meta)
	require.NoError(t, err)

	// Cell 16 first: its index still comes from the plan.
	for _, c := range []plan.Cell{cells[2], cells[0]} {
		for trial := 1; trial <= 2; trial++ {
			_, err := db.SaveRun(ctx, newRun(runOpts{records: 3, sweepID: sweepID, cell: &c, trial: trial}), "")
			require.NoError(t, err)
		}
	}
	failed := newRun(runOpts{records: 3, sweepID: sweepID, cell: &cells[1], trial: 1, status: result.StatusFailed})
	failedID, err := db.SaveRun(ctx, failed, "")
	require.NoError(t, err)
	require.NoError(t, db.FinishSweep(ctx, sweepID, result.StatusInterrupted))

	t.Run("resume finds the sweep and its completed trials", func(t *testing.T) {
		id, ok, err := db.FindResumableSweep(ctx, "scan", "abc123")
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, sweepID, id)
		_, ok, err = db.FindResumableSweep(ctx, "scan", "changed-script")
		require.NoError(t, err)
		assert.False(t, ok)

		keys, err := db.CompletedTrialKeys(ctx, sweepID)
		require.NoError(t, err)
		want := map[string]bool{}
		for _, c := range []plan.Cell{cells[0], cells[2]} {
			for n := 1; n <= 2; n++ {
				want[plan.Trial{Sweep: "scan", Cell: c, Number: n}.Key()] = true
			}
		}
		assert.Equal(t, want, keys, "the failed trial is not complete")
	})
	t.Run("a rerun trial replaces the failed attempt", func(t *testing.T) {
		require.NoError(t, db.ReopenSweep(ctx, sweepID, 2))
		newID, err := db.SaveRun(ctx, newRun(runOpts{records: 3, sweepID: sweepID, cell: &cells[1], trial: 1}), "")
		require.NoError(t, err)
		_, err = db.GetRun(ctx, failedID, false)
		require.ErrorIs(t, err, store.ErrNotFound)
		got, err := db.GetRun(ctx, newID, false)
		require.NoError(t, err)
		assert.Equal(t, result.StatusComplete, got.Status)
		assert.Equal(t, "scan", got.Info.Sweep)
		assert.Equal(t, cells[1].Label, got.Info.CellLabel)
		assert.Equal(t, cells[1].Params, got.Info.Params)
		require.NoError(t, db.FinishSweep(ctx, sweepID, result.StatusComplete))
	})
	t.Run("sweep runs in cell order", func(t *testing.T) {
		s, err := db.SweepRuns(ctx, "scan", []string{"time_to_first_token.avg"})
		require.NoError(t, err)
		assert.Equal(t, result.StatusComplete, s.Sweep.Status)
		assert.Equal(t, testNow, s.Sweep.EndedAt)
		assert.Equal(t, meta.Vars, s.Sweep.Vars)
		require.Len(t, s.Cells, 3)
		for i, c := range s.Cells {
			assert.Equal(t, cells[i].ID, c.ID)
			assert.Equal(t, i, c.Index)
			require.Len(t, c.Runs, map[int]int{0: 2, 1: 1, 2: 2}[i])
			assert.Equal(t, 1, c.Runs[0].Trial)
			assert.Equal(t, 20.0, c.Runs[0].Stats["time_to_first_token.avg"])
		}
		byID, err := db.SweepRuns(ctx, "1", nil)
		require.NoError(t, err)
		assert.Equal(t, sweepID, byID.Sweep.ID)
	})
	t.Run("a second sweep of the same name keeps its own cells", func(t *testing.T) {
		second, err := db.BeginSweep(ctx, store.SweepMeta{Name: "scan", PlanSHA256: "abc123"})
		require.NoError(t, err)
		_, err = db.SaveRun(ctx, newRun(runOpts{records: 3, sweepID: second, cell: &cells[0], trial: 1}), "")
		require.NoError(t, err, "same cell id and trial key, different sweep")
		s, err := db.SweepRuns(ctx, "scan", nil)
		require.NoError(t, err)
		assert.Equal(t, second, s.Sweep.ID, "a name means its latest sweep")
		require.Len(t, s.Cells, 1)
		id, _, err := db.FindResumableSweep(ctx, "scan", "abc123")
		require.NoError(t, err)
		assert.Equal(t, second, id)
	})
	t.Run("errors", func(t *testing.T) {
		_, err := db.SweepRuns(ctx, "nope", nil)
		require.ErrorIs(t, err, store.ErrNotFound)
		require.ErrorContains(t, err, `sweep "nope" not found`)
		require.ErrorContains(t, db.FinishSweep(ctx, sweepID, "running"), `invalid status "running"`)
		require.ErrorIs(t, db.FinishSweep(ctx, 999, result.StatusComplete), store.ErrNotFound)
		_, err = db.BeginSweep(ctx, store.SweepMeta{})
		require.ErrorContains(t, err, "name is required")
	})
}

func TestRunsByRef(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := MustOpenDB(t)
	save := func(r *result.Run) int64 {
		id, err := db.SaveRun(ctx, r, "")
		require.NoError(t, err)
		return id
	}
	oldA := save(newRun(runOpts{name: "A", records: 2}))
	a2 := save(newRun(runOpts{name: "A", records: 2}))
	// --num-profile-runs: a one-cell sweep whose trials share the --name.
	rep, err := db.BeginSweep(ctx, store.SweepMeta{Name: "B", Trials: 3})
	require.NoError(t, err)
	single := testCell("B", 8, 0)
	var repIDs []int64
	for n := 1; n <= 3; n++ {
		repIDs = append(repIDs, save(newRun(runOpts{name: "B", records: 2, sweepID: rep, cell: &single, trial: n})))
	}
	scan, err := db.BeginSweep(ctx, store.SweepMeta{Name: "scan", Trials: 2})
	require.NoError(t, err)
	c1, c4 := testCell("scan", 1, 0), testCell("scan", 4, 1)
	var c4IDs []int64
	for n := 1; n <= 2; n++ {
		save(newRun(runOpts{records: 2, sweepID: scan, cell: &c1, trial: n}))
		c4IDs = append(c4IDs, save(newRun(runOpts{records: 2, sweepID: scan, cell: &c4, trial: n})))
	}
	lone, err := db.BeginSweep(ctx, store.SweepMeta{Name: "lone"})
	require.NoError(t, err)
	loneID := save(newRun(runOpts{records: 2, sweepID: lone, cell: &c1, trial: 1}))

	ids := func(g *store.Group) []int64 {
		var out []int64
		for _, r := range g.Runs {
			out = append(out, r.ID)
		}
		return out
	}
	tests := []struct {
		ref  string
		want []int64
		desc string
		also string
	}{
		{ref: "2", want: []int64{a2}, desc: "run 2"},
		{ref: "A", want: []int64{oldA, a2}, desc: `standalone runs named "A"`},
		{ref: "B", want: repIDs, desc: `runs named "B" in sweep 1`}, // the sweep named B is theirs
		{ref: "lone", want: []int64{loneID}, desc: `sweep "lone" (id 3) cell concurrency_1`},
		{ref: "scan/concurrency_4", want: c4IDs, desc: `sweep "scan" (id 2) cell concurrency_4`},
		{ref: "scan/" + c4.ID, want: c4IDs},
	}
	for _, tc := range tests {
		t.Run(tc.ref, func(t *testing.T) {
			g, err := db.RunsByRef(ctx, tc.ref, []string{"request_throughput.avg"})
			require.NoError(t, err)
			assert.Equal(t, tc.want, ids(g))
			assert.Equal(t, tc.ref, g.Ref)
			if tc.desc != "" {
				assert.Equal(t, tc.desc, g.Desc)
			}
			assert.Equal(t, tc.also, g.Also)
			assert.Equal(t, 50.0, g.Runs[0].Stats["request_throughput.value"])
		})
	}
	errs := []struct {
		ref, want string
		is        error
	}{
		{"scan", `"scan" is ambiguous: sweep "scan" (id 2) has 2 cells; compare them with --sweep scan, or pick one as scan/<cell label>, e.g. scan/concurrency_1`, store.ErrAmbiguous},
		{"nothing", `run, run name or sweep "nothing" not found`, store.ErrNotFound},
		{"9999", "run 9999 not found: deleted, or never stored", store.ErrNotFound},
		{"scan/concurrency_99", `cell "concurrency_99" of sweep "scan" (id 2) not found`, store.ErrNotFound},
	}
	for _, tc := range errs {
		t.Run("error "+tc.ref, func(t *testing.T) {
			_, err := db.RunsByRef(ctx, tc.ref, nil)
			require.ErrorIs(t, err, tc.is)
			assert.Equal(t, tc.want, err.Error())
		})
	}

	// A run id no run has any more is not read as the sweep of that id.
	require.NoError(t, db.DeleteRuns(ctx, oldA))
	_, err = db.RunsByRef(ctx, strconv.FormatInt(oldA, 10), nil)
	require.ErrorIs(t, err, store.ErrNotFound)
	assert.Equal(t, `run 1 not found: deleted, or never stored; sweep #1, "B", is another thing: to compare its runs give "B" (or B/CELL)`,
		err.Error())

	// A sweep misspelt (compare --sweep, runs list --sweep) is proposed.
	_, err = db.ListRuns(ctx, store.RunFilter{Sweep: "sacn"})
	require.ErrorIs(t, err, store.ErrNotFound)
	assert.Equal(t, `sweep "sacn" not found (did you mean "scan"?)`, err.Error())

	// A run named as a sweep: the name comes first, and the group says
	// what it hid.
	scanRun := save(newRun(runOpts{name: "scan", records: 2}))
	g, err := db.RunsByRef(ctx, "scan", nil)
	require.NoError(t, err)
	assert.Equal(t, []int64{scanRun}, ids(g))
	assert.Equal(t, `a sweep named "scan"`, g.Also)
}

func TestListRunsFilters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := MustOpenDB(t)
	sweepID, err := db.BeginSweep(ctx, store.SweepMeta{Name: "scan"})
	require.NoError(t, err)
	c := testCell("scan", 2, 0)
	var all []int64
	for i := range 5 {
		r := newRun(runOpts{name: []string{"x", "y"}[i%2], records: 1})
		if i >= 3 {
			r = newRun(runOpts{records: 1, sweepID: sweepID, cell: &c, trial: i})
		}
		id, err := db.SaveRun(ctx, r, "")
		require.NoError(t, err)
		all = append(all, id)
	}
	ids := func(f store.RunFilter) []int64 {
		rows, err := db.ListRuns(ctx, f)
		require.NoError(t, err)
		var out []int64
		for _, r := range rows {
			out = append(out, r.ID)
		}
		return out
	}
	assert.Equal(t, []int64{all[4], all[3], all[2], all[1], all[0]}, ids(store.RunFilter{}), "newest first")
	assert.Equal(t, []int64{all[4], all[3]}, ids(store.RunFilter{Limit: 2}))
	assert.Equal(t, []int64{all[4], all[3]}, ids(store.RunFilter{Sweep: "scan"}))
	assert.Equal(t, []int64{all[2], all[0]}, ids(store.RunFilter{Name: "x"}))
	assert.Equal(t, []int64{all[1]}, ids(store.RunFilter{IDs: []int64{all[1], 12345}}))
	_, err = db.ListRuns(ctx, store.RunFilter{Sweep: "missing"})
	require.ErrorIs(t, err, store.ErrNotFound)
}

// A configuration stored before --reset-kv-cache-path could repeat (one
// string) reads back as a list once migration 0007 has run.
func TestResetPathsMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "aiperf.db")
	db := openAt(t, path)
	in := newRun(runOpts{name: "old", records: 2})
	in.Config.ResetKVCachePath = []string{"/flush_cache"}
	id, err := db.SaveRun(ctx, in, "")
	require.NoError(t, err)
	require.NoError(t, db.Close())

	raw, err := sql.Open("sqlite3", path)
	require.NoError(t, err)
	_, err = raw.Exec(`UPDATE runs SET config = json_set(config, '$.reset_kv_cache_path', '/flush_cache')`)
	require.NoError(t, err)
	_, err = raw.Exec(`DELETE FROM migrations WHERE name LIKE '%0007_reset_paths.sql'`)
	require.NoError(t, err)
	require.NoError(t, raw.Close())

	db = openAt(t, path)
	got, err := db.GetRun(ctx, id, false)
	require.NoError(t, err)
	assert.Equal(t, []string{"/flush_cache"}, got.Config.ResetKVCachePath)
}

// A row another tool (or an older build) wrote, with no achieved rate and
// a time without fractional seconds, reads back: the rate 0, the time as
// written (not year 1, not a scan error).
func TestRunWrittenElsewhereReadsBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "aiperf.db")
	db := openAt(t, path)
	id, err := db.SaveRun(ctx, newRun(runOpts{name: "other", records: 1}), "")
	require.NoError(t, err)
	require.NoError(t, db.Close())

	raw, err := sql.Open("sqlite3", path)
	require.NoError(t, err)
	_, err = raw.Exec(`UPDATE runs SET achieved_rate = NULL, started_at = '2025-01-01T00:00:00Z', ended_at = '2025-01-01T00:01:00+01:00'`)
	require.NoError(t, err)
	require.NoError(t, raw.Close())

	db = openAt(t, path)
	got, err := db.GetRun(ctx, id, false)
	require.NoError(t, err)
	assert.Zero(t, got.Audit.AchievedRate)
	assert.True(t, got.StartTime.Equal(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)), "started %s", got.StartTime)
	assert.True(t, got.EndTime.Equal(time.Date(2024, 12, 31, 23, 1, 0, 0, time.UTC)), "ended %s", got.EndTime)
	runs, err := db.ListRuns(ctx, store.RunFilter{})
	require.NoError(t, err)
	require.Len(t, runs, 1)
	assert.Equal(t, 2025, runs[0].StartedAt.Year())

	raw, err = sql.Open("sqlite3", path)
	require.NoError(t, err)
	_, err = raw.Exec(`UPDATE runs SET started_at = '2025-02-03 04:05:06'`) // SQLite's CURRENT_TIMESTAMP
	require.NoError(t, err)
	require.NoError(t, raw.Close())
	got, err = db.GetRun(ctx, id, false)
	require.NoError(t, err)
	assert.True(t, got.StartTime.Equal(time.Date(2025, 2, 3, 4, 5, 6, 0, time.UTC)), "started %s", got.StartTime)
}

// A run given no concurrency lists the one it ran at, 1 (the flags'
// default), not a bare "concurrency"; so does one stored before the
// default was written (its column NULL), so that compare does not call it
// a configuration difference against a newer run of the same command.
func TestDefaultConcurrencyIsListed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "aiperf.db")
	listedAt := func() int {
		db, err := store.Open(path)
		require.NoError(t, err)
		defer db.Close()
		rows, err := db.ListRuns(ctx, store.RunFilter{})
		require.NoError(t, err)
		require.Len(t, rows, 1)
		require.NotNil(t, rows[0].Concurrency)
		return *rows[0].Concurrency
	}
	db, err := store.Open(path)
	require.NoError(t, err)
	in := newRun(runOpts{name: "default"})
	in.Config.Concurrency = nil
	_, err = db.SaveRun(ctx, in, "artifacts/x")
	require.NoError(t, err)
	require.NoError(t, db.Close())
	assert.Equal(t, 1, listedAt())

	raw, err := sql.Open("sqlite3", path)
	require.NoError(t, err)
	_, err = raw.Exec(`UPDATE runs SET concurrency = NULL`)
	require.NoError(t, err)
	require.NoError(t, raw.Close())
	assert.Equal(t, 1, listedAt(), "stored before the default was written")
}
