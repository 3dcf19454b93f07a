package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/aiperf-go/aiperf/hooks"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
)

// Phases of run_stats rows.
const (
	phaseProfiling = plan.KindProfiling
	phaseWarmup    = plan.KindWarmup
	phaseAudit     = "audit" // the client's send_lag
)

// statValue is the stat name of a derived or aggregate metric's single
// value (request_throughput, error_request_count, ...).
const statValue = "value"

// SaveRun stores a run and everything it carries (statistics, records,
// control-hook calls, error summary, audit, server metrics) in one immediate
// transaction: the run is either fully stored or not at all. A sweep trial
// (Info.SweepID set) also registers its cell; storing a trial again (same
// sweep, cell and trial number, e.g. a failed trial rerun by --resume)
// replaces the earlier row. The configuration is redacted again before it is
// written, and its secrets are scrubbed from the command line, errors, hook
// messages and scraped endpoints, so no secret reaches the file even if the
// caller forgot.
//
// A transient failure (a full disk, an I/O error, a lock held past the busy
// timeout) is tried again as db.Retry says. The write itself is never cut
// by ctx; a wait for another process's lock, or between attempts, ends when
// ctx is cancelled during it (not when it had ended before: an interrupted
// run is stored).
func (db *DB) SaveRun(ctx context.Context, r *result.Run, artifactDir string) (int64, error) {
	var id int64
	err := db.retry(ctx, "store run "+describeRun(r), false, func(wait context.Context) error {
		return db.inTxInterruptible(wait, func(ctx context.Context, tx *sql.Tx) error {
			var err error
			id, err = saveRun(ctx, tx, r, artifactDir, 0, r.Records)
			return err
		})
	})
	if err != nil {
		return 0, fmt.Errorf("save run %s: %w", describeRun(r), err)
	}
	return id, nil
}

func describeRun(r *result.Run) string {
	if r.Info.CellID != "" {
		return fmt.Sprintf("%s/%s trial %d", r.Info.Sweep, r.Info.CellLabel, r.Info.Trial)
	}
	if r.BenchmarkID != "" {
		return r.BenchmarkID
	}
	return fmt.Sprintf("%q", r.Name)
}

// saveRun writes the run with everything it owns. With at > 0 it
// completes that pending run's row instead of adding one, and writes only
// the given records (nil: none).
func saveRun(ctx context.Context, tx *sql.Tx, r *result.Run, artifactDir string, at int64, records []metrics.Record) (int64, error) {
	switch r.Status {
	case result.StatusComplete, result.StatusFailed, result.StatusInterrupted:
	default:
		return 0, fmt.Errorf("invalid status %q", r.Status)
	}
	// The configuration's own secrets, replaced in every text that could
	// echo one (a run from bench is already clean: its config is redacted).
	rd := r.Config.Redactor()
	r = r.Redacted(rd)
	cfg := r.Config
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		return 0, fmt.Errorf("encode config: %w", err)
	}
	warnings, err := json.Marshal(nonNil(r.Audit.Warnings))
	if err != nil {
		return 0, fmt.Errorf("encode warnings: %w", err)
	}
	workers, err := json.Marshal(nonNil(r.Audit.Workers))
	if err != nil {
		return 0, fmt.Errorf("encode workers: %w", err)
	}
	exports, err := json.Marshal(nonNil(r.Exports))
	if err != nil {
		return 0, fmt.Errorf("encode exports: %w", err)
	}
	tallies, err := encodeTallies(&r.Audit)
	if err != nil {
		return 0, err
	}

	var sweepID, trial sql.NullInt64
	var cellID, trialKey sql.NullString
	switch {
	case r.Info.SweepID != 0:
		sweepID = sql.NullInt64{Int64: r.Info.SweepID, Valid: true}
		if r.Info.CellID == "" {
			break
		}
		label := r.Info.CellLabel
		if label == "" {
			label = plan.CellLabel(r.Info.Params)
		}
		if err := upsertCell(ctx, tx, r.Info.SweepID, r.Info.CellID, label, -1, r.Info.Params); err != nil {
			return 0, fmt.Errorf("register cell %s: %w", label, err)
		}
		cellID = sql.NullString{String: r.Info.CellID, Valid: true}
		trial = sql.NullInt64{Int64: int64(r.Info.Trial), Valid: true}
		key := plan.Trial{Cell: plan.Cell{ID: r.Info.CellID}, Number: r.Info.Trial}.Key()
		trialKey = sql.NullString{String: key, Valid: true}
		if _, err := tx.ExecContext(ctx, `DELETE FROM runs WHERE sweep_id = ? AND trial_key = ? AND id != ?`,
			sweepID, trialKey, at); err != nil {
			return 0, fmt.Errorf("replace earlier attempt of trial %s: %w", key, err)
		}
	case r.Info.CellID != "":
		return 0, fmt.Errorf("run has cell %q but no sweep id", r.Info.CellID)
	}

	conc, rate := loadOf(cfg)
	id, err := upsertRun(ctx, tx, at, runRow{
		sweepID, cellID, trial, trialKey, r.Name, r.BenchmarkID, r.Status, r.Error, r.WasCancelled,
		strings.Join(cfg.Model, ","), strings.Join(cfg.URL, ","), cfg.EndpointType, cfg.Streaming, runMode(r),
		conc, rate, cfg.SyntheticInputTokensMean, cfg.OutputTokensMean, cfg.RandomSeed,
		string(cfgJSON), r.CLICommand, r.ToolVersion, r.Host, formatTime(r.StartTime), formatTime(r.EndTime),
		artifactDir, len(r.Records),
		nullIfZero(r.Audit.TargetRate), r.Audit.AchievedRate, r.Audit.CapDelayed, r.Audit.Retried,
		r.Audit.PrecisePacing, r.Audit.ClientBound, string(warnings), r.Audit.KVReset, r.Audit.KVResetDetail,
		strings.Join(r.Audit.KVResetEvidence, ","), r.Audit.CapSkipped, string(workers), string(exports),
		r.Audit.RxCoalesceUsecs, r.Audit.TokensCountedWith, nullIfZero(r.Audit.ScheduledRate), tallies,
	})
	if err != nil {
		return 0, err
	}
	if err := insertStats(ctx, tx, id, r); err != nil {
		return 0, fmt.Errorf("insert statistics: %w", err)
	}
	if err := insertErrors(ctx, tx, id, r.ErrorSummary); err != nil {
		return 0, fmt.Errorf("insert error summary: %w", err)
	}
	if err := insertCalls(ctx, tx, id, r.ControlHooks); err != nil {
		return 0, fmt.Errorf("insert control-hook calls: %w", err)
	}
	if records != nil {
		if err := insertRecords(ctx, tx, id, records); err != nil {
			return 0, fmt.Errorf("insert records: %w", err)
		}
	}
	if err := insertServer(ctx, tx, id, r, rd); err != nil {
		return 0, fmt.Errorf("insert server metrics: %w", err)
	}
	return id, nil
}

// runColumns are the columns of a runs row, in runRow's order.
var runColumns = []string{"sweep_id", "cell_id", "trial", "trial_key", "name", "benchmark_id", "status", "error",
	"was_cancelled", "model", "url", "endpoint_type", "streaming", "mode", "concurrency", "request_rate", "isl", "osl",
	"seed", "config", "cli_command", "tool_version", "host", "started_at", "ended_at", "artifact_dir", "record_count",
	"target_rate", "achieved_rate", "cap_delayed", "retried", "precise_pacing", "client_bound", "warnings",
	"kv_reset", "kv_reset_detail", "kv_reset_evidence", "cap_skipped", "workers", "exports",
	"rx_coalesce_usecs", "tokens_counted_with", "scheduled_rate", "audit_tallies"}

// runRow is the values of runColumns.
type runRow []any

// insertRunSQL and updateRunSQL are the INSERT of a new runs row and the UPDATE of a
// pending one, both from runColumns.
var insertRunSQL, updateRunSQL = func() (string, string) {
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(runColumns)), ", ")
	cols := strings.Join(runColumns, ", ")
	return "INSERT INTO runs (" + cols + ") VALUES (" + marks + ")",
		"UPDATE runs SET (" + cols + ") = (" + marks + ") WHERE id = ?"
}()

// upsertRun inserts a runs row, or with at > 0 rewrites row at, and
// returns its id.
func upsertRun(ctx context.Context, tx *sql.Tx, at int64, row runRow) (int64, error) {
	if at > 0 {
		res, err := tx.ExecContext(ctx, updateRunSQL, append(row, at)...)
		if err != nil {
			return 0, fmt.Errorf("complete run %d: %w", at, err)
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return 0, fmt.Errorf("complete run %d: its row is gone (deleted while the run went?)", at)
		}
		return at, nil
	}
	res, err := tx.ExecContext(ctx, insertRunSQL, row...)
	if err != nil {
		return 0, fmt.Errorf("insert run: %w", err)
	}
	return res.LastInsertId()
}

// loadOf is a run's concurrency and request rate as its row shows them:
// the flags', else those of the first profiling phase, as a config file
// listed it or the flags' defaults make it (concurrency 1 when none is
// given) (nil: not set).
func loadOf(cfg plan.Profile) (*int, *float64) {
	conc, rate := cfg.Concurrency, cfg.RequestRate
	phases := cfg.PhaseList()
	i := slices.IndexFunc(phases, func(ph plan.Phase) bool { return ph.Kind == plan.KindProfiling })
	if i < 0 {
		return conc, rate
	}
	if ph := phases[i]; conc == nil && ph.Concurrency > 0 {
		conc = &ph.Concurrency
	}
	if ph := phases[i]; rate == nil && ph.Rate > 0 {
		rate = &ph.Rate
	}
	return conc, rate
}

// runMode is the audit's load mode, or the configuration's when the run
// failed before the audit was filled in.
func runMode(r *result.Run) string {
	switch {
	case r.Audit.Mode != "":
		return r.Audit.Mode
	case r.Config.RequestRate != nil:
		return "rate"
	}
	return "concurrency"
}

func insertStats(ctx context.Context, tx *sql.Tx, runID int64, r *result.Run) error {
	stmt, err := tx.PrepareContext(ctx, `
		INSERT INTO run_stats (run_id, phase, metric, stat, value, unit, header, ord) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	put := func(phase string, ord int, m metrics.Metric) error {
		for stat, v := range statMap(m) {
			if _, err := stmt.ExecContext(ctx, runID, phase, m.Tag, stat, v, m.Unit, m.Header, ord); err != nil {
				return fmt.Errorf("%s %s.%s: %w", phase, m.Tag, stat, err)
			}
		}
		return nil
	}
	summaries := []struct {
		phase string
		s     *metrics.Summary
	}{{phaseProfiling, &r.Profiling}, {phaseWarmup, r.Warmup}}
	for _, ps := range summaries {
		if ps.s == nil {
			continue
		}
		for i, m := range ps.s.Metrics {
			if err := put(ps.phase, i, m); err != nil {
				return err
			}
		}
	}
	if r.Audit.SendLagMs != nil {
		if err := put(phaseAudit, 0, metrics.Metric{Tag: metrics.TagSendLag, Header: "Send Lag", Unit: metrics.UnitMs, Stats: r.Audit.SendLagMs}); err != nil {
			return err
		}
	}
	for i, m := range healthMetrics(r.Audit.Health) {
		if err := put(phaseAudit, i+1, m); err != nil {
			return err
		}
	}
	return nil
}

// statMap flattens a metric into stat name → value: the Stats fields under
// their JSON (AIPerf) names, or the single statValue of a scalar metric. A
// statistic that is not a finite number (NaN, ±Inf: no JSON number can
// carry it, and SQLite stores NaN as NULL) is left out, and so is one the
// metric does not have (metrics.HasStat: a time-weighted metric's p75 is
// not 0), the others kept.
func statMap(m metrics.Metric) map[string]float64 {
	out := map[string]float64{}
	put := func(name string, v float64) {
		if isFinite(v) && (m.Stats == nil || metrics.HasStat(m.Tag, name)) {
			out[name] = v
		}
	}
	if m.Stats == nil {
		put(statValue, m.Value)
		return out
	}
	v, t := reflect.ValueOf(*m.Stats), reflect.TypeFor[metrics.Stats]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		switch f := v.Field(i); f.Kind() {
		case reflect.Float64:
			put(name, f.Float())
		case reflect.Int:
			put(name, float64(f.Int()))
		}
	}
	return out
}

// isFinite reports whether v is a number JSON can carry (not NaN, not ±Inf).
func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// statsFromMap is the inverse of statMap for a record metric, a statistic
// the store lacks read as absent. In a summary, absent is NaN, not 0
// (statMap leaves out one that is not a finite number), and a stored ±Inf
// (written by another tool) is kept: the tables and exports show both as
// not a number (n/a, null), never as 0. A count that is absent or not
// finite is 0: an int has no NaN.
func statsFromMap(m map[string]float64, absent float64) *metrics.Stats {
	var st metrics.Stats
	v, t := reflect.ValueOf(&st).Elem(), reflect.TypeFor[metrics.Stats]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		x, ok := m[name]
		switch f := v.Field(i); f.Kind() {
		case reflect.Float64:
			if !ok {
				x = absent
			}
			f.SetFloat(x)
		case reflect.Int:
			if ok && isFinite(x) && math.Abs(x) < math.MaxInt64 { // 1e300 would wrap to a negative count
				f.SetInt(int64(x))
			}
		}
	}
	return &st
}

func insertErrors(ctx context.Context, tx *sql.Tx, runID int64, errs []metrics.ErrorCount) error {
	for i, e := range errs {
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO run_errors (run_id, seq, code, type, message, count) VALUES (?, ?, ?, ?, ?, ?)`,
			runID, i, e.Error.Code, e.Error.Type, e.Error.Message, e.Count); err != nil {
			return err
		}
	}
	return nil
}

func insertCalls(ctx context.Context, tx *sql.Tx, runID int64, calls []hooks.Call) error {
	for i, c := range calls {
		if _, err := tx.ExecContext(ctx, `
			INSERT INTO control_calls (run_id, seq, hook, phase, origin, path, status, attempts, duration_ms, ok, error, warning,
				started_at_ns, unanswered, unanswered_at_ns)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			runID, i, c.Hook, c.Phase, c.Origin, c.Path, c.Status, c.Attempts, c.DurationMs, c.OK, c.Error, c.Warning,
			c.StartedAt, c.Unanswered, c.UnansweredAt); err != nil {
			return err
		}
	}
	return nil
}

func insertRecords(ctx context.Context, tx *sql.Tx, runID int64, records []metrics.Record) error {
	if len(records) == 0 {
		return nil
	}
	rows := newBatch(tx, `INSERT INTO records (run_id, idx, phase, phase_kind, url_idx, scheduled_ns, sent_ns, ttft_ns,
		latency_ns, end_ns, wall_start_ns, isl, osl, reasoning_tokens, status, error_type, retried, cancelled,
		first_chunk_tokens) VALUES `, 19)
	defer rows.close()
	for i := range records {
		rec := &records[i]
		var ttft, latency sql.NullInt64
		if rec.ResponseNs.Len() > 0 {
			// A reply that was not streamed has a latency and no TTFT (NULL).
			ttft = sql.NullInt64{Int64: rec.ResponseNs.First() - rec.SentNs, Valid: !rec.NotStreamed}
			latency = sql.NullInt64{Int64: rec.ResponseNs.Last() - rec.SentNs, Valid: true}
		}
		var errType sql.NullString
		if rec.Error != nil {
			errType = sql.NullString{String: rec.Error.Type, Valid: true}
		}
		if err := rows.add(ctx, runID, rec.Index, rec.Phase, rec.PhaseKind, rec.URL,
			rec.ScheduledNs, rec.SentNs, ttft, latency, rec.EndNs, rec.WallStartNs,
			rec.InputTokens, rec.OutputTokens, rec.ReasoningTokens, rec.Status, errType, rec.Retried, rec.Cancelled,
			firstChunkTokens(rec)); err != nil {
			return fmt.Errorf("record %d: %w", rec.Index, err)
		}
	}
	return rows.flush(ctx)
}

// firstChunkTokens is the records.first_chunk_tokens of rec: its first
// content chunk's count (metrics.Usage.FirstChunkTokens) when its usage is
// trusted, the only usage metrics.DecodeTokens reads it from; else nil
// (NULL), as the ITL then divides by OSL − 1. A plain int64 rather than an
// sql.NullInt64: nil and a small count box without allocating, once per
// record of a large run.
func firstChunkTokens(rec *metrics.Record) any {
	if u := rec.Usage; u.Trusted() && u.FirstChunkTokens != nil {
		return int64(*u.FirstChunkTokens)
	}
	return nil
}

// DeleteRuns deletes the given runs with everything they own, in one
// transaction: if any id is unknown nothing is deleted; an id given twice
// counts once. A wait for another process's lock on the store ends when
// ctx is cancelled, and then nothing is deleted (the error says so).
func (db *DB) DeleteRuns(ctx context.Context, ids ...int64) error {
	ids = slices.Compact(slices.Sorted(slices.Values(ids))) // an id given twice is deleted once
	err := db.inTxInterruptible(ctx, func(ctx context.Context, tx *sql.Tx) error {
		for _, id := range ids {
			if err := db.notRunning(ctx, tx, id); err != nil {
				return err
			}
			res, err := tx.ExecContext(ctx, `DELETE FROM runs WHERE id = ?`, id)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return fmt.Errorf("run %d %w", id, ErrNotFound)
			}
		}
		return nil
	})
	if err != nil {
		return wrap(err, "delete runs (nothing was deleted)")
	}
	return nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func nullIfZero(v float64) sql.NullFloat64 { return sql.NullFloat64{Float64: v, Valid: v != 0} }
