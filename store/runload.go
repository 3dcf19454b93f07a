package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/aiperf-go/aiperf/hooks"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/result"
)

// GetRun reconstructs a stored run: configuration, summaries, error summary,
// control-hook calls, audit and server metrics, plus its records when
// withRecords is set.
// Records come back compact: no request id, model or error message,
// ResponseNs holds only the first and last response stamps (the last
// alone for a reply that was not streamed: NotStreamed), and Usage is
// nil but for a record stored with its first content chunk's count
// (--per-chunk-usage), whose Usage holds that count alone
// (FirstChunkTokens), so that metrics.Times gives the run's own ITL.
func (db *DB) GetRun(ctx context.Context, id int64, withRecords bool) (*result.Run, error) {
	var r *result.Run
	err := db.inSnapshot(ctx, func(q querier) error {
		var err error
		if r, err = getRun(ctx, q, id); err != nil {
			return err
		}
		if r.EndTime.IsZero() { // never summarised: what it has is its records
			if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM records WHERE run_id = ? AND phase_kind = ?`,
				id, phaseProfiling).Scan(&r.StoredProfiling); err != nil {
				return fmt.Errorf("count the records: %w", err)
			}
		}
		if err := loadRunStats(ctx, q, id, r); err != nil {
			return fmt.Errorf("statistics: %w", err)
		}
		if err := loadErrors(ctx, q, id, r); err != nil {
			return fmt.Errorf("error summary: %w", err)
		}
		if err := loadCalls(ctx, q, id, r); err != nil {
			return fmt.Errorf("control-hook calls: %w", err)
		}
		if err := loadServer(ctx, q, id, r); err != nil {
			return fmt.Errorf("server metrics: %w", err)
		}
		if withRecords {
			if err := loadRecords(ctx, q, id, r); err != nil {
				return fmt.Errorf("records: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, wrap(err, "get run %d", id)
	}
	return r, nil
}

func getRun(ctx context.Context, q querier, id int64) (*result.Run, error) {
	var (
		r                                result.Run
		sweepID                          sql.NullInt64
		sweepName, cellID, cellLabel     sql.NullString
		params                           sql.NullString
		trial                            sql.NullInt64
		mode, cfgJSON, start, end, warns string
		workers, exports, tallies        string
		evidence                         string
		targetRate, achievedRate         sql.NullFloat64
		scheduledRate                    sql.NullFloat64
		claimPID                         int
		claimHost                        string
		claimStart                       string
	)
	err := q.QueryRowContext(ctx, `
		SELECT r.sweep_id, s.name, r.cell_id, c.label, c.params, r.trial, r.name, r.benchmark_id, r.status, r.error,
			r.was_cancelled, r.mode, r.config, r.cli_command, r.tool_version, r.host, r.started_at, r.ended_at,
			r.target_rate, r.achieved_rate, r.cap_delayed, r.retried, r.precise_pacing, r.client_bound, r.warnings,
			r.kv_reset, r.kv_reset_detail, r.kv_reset_evidence, r.cap_skipped, r.workers,
			r.exports, r.rx_coalesce_usecs, r.tokens_counted_with, r.scheduled_rate, r.audit_tallies,
			COALESCE(l.pid, 0), COALESCE(l.host, ''), COALESCE(l.process, '')
		FROM runs r
		LEFT JOIN sweeps s ON s.id = r.sweep_id
		LEFT JOIN cells c ON c.sweep_id = r.sweep_id AND c.id = r.cell_id
		LEFT JOIN sweep_locks l ON l.key = 'run ' || r.id
		WHERE r.id = ?`, id).Scan(
		&sweepID, &sweepName, &cellID, &cellLabel, &params, &trial, &r.Name, &r.BenchmarkID, &r.Status, &r.Error,
		&r.WasCancelled, &mode, &cfgJSON, &r.CLICommand, &r.ToolVersion, &r.Host, &start, &end,
		&targetRate, &achievedRate, &r.Audit.CapDelayed, &r.Audit.Retried, &r.Audit.PrecisePacing,
		&r.Audit.ClientBound, &warns, &r.Audit.KVReset, &r.Audit.KVResetDetail, &evidence, &r.Audit.CapSkipped, &workers,
		&exports, &r.Audit.RxCoalesceUsecs, &r.Audit.TokensCountedWith, &scheduledRate, &tallies, &claimPID, &claimHost, &claimStart)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("run %d %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	if stillGoing(r.Status, claimPID, claimHost, claimStart) {
		r.Status = result.StatusRunning
	}
	if err := json.Unmarshal([]byte(cfgJSON), &r.Config); err != nil {
		return nil, fmt.Errorf("decode config: %w", err)
	}
	if err := json.Unmarshal([]byte(warns), &r.Audit.Warnings); err != nil {
		return nil, fmt.Errorf("decode warnings: %w", err)
	}
	if len(r.Audit.Warnings) == 0 {
		r.Audit.Warnings = nil
	}
	if err := json.Unmarshal([]byte(workers), &r.Audit.Workers); err != nil {
		return nil, fmt.Errorf("decode workers: %w", err)
	}
	if len(r.Audit.Workers) == 0 {
		r.Audit.Workers = nil
	}
	if err := decodeTallies(&r.Audit, tallies); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(exports), &r.Exports); err != nil {
		return nil, fmt.Errorf("decode exports: %w", err)
	}
	if len(r.Exports) == 0 {
		r.Exports = nil
	}
	r.Info = result.TrialInfo{Sweep: sweepName.String, SweepID: sweepID.Int64, CellID: cellID.String,
		CellLabel: cellLabel.String, Trial: int(trial.Int64)}
	if params.Valid {
		if err := json.Unmarshal([]byte(params.String), &r.Info.Params); err != nil {
			return nil, fmt.Errorf("decode cell params: %w", err)
		}
	}
	r.Audit.Mode, r.Audit.TargetRate, r.Audit.AchievedRate = mode, targetRate.Float64, achievedRate.Float64
	r.Audit.ScheduledRate = scheduledRate.Float64
	if evidence != "" {
		r.Audit.KVResetEvidence = strings.Split(evidence, ",")
	}
	r.StartTime, r.EndTime = parseTime(start), parseTime(end)
	return &r, nil
}

// loadRunStats rebuilds the profiling and warmup summaries (in display
// order) and the audit's send lag from run_stats. A summary's statistic
// that is not a finite number (±Inf, written by another tool) is kept as
// it is, so that the tables and exports show it as such (n/a, null)
// rather than as 0 or not at all; the audit's is read as absent.
func loadRunStats(ctx context.Context, q querier, id int64, r *result.Run) error {
	rows, err := q.QueryContext(ctx, `
		SELECT phase, metric, stat, value, unit, header FROM run_stats WHERE run_id = ? ORDER BY phase, ord, metric`, id)
	if err != nil {
		return err
	}
	defer rows.Close()
	type key struct{ phase, metric string }
	var (
		order  []key
		metric = map[key]*metrics.Metric{}
		values = map[key]map[string]float64{}
	)
	for rows.Next() {
		var (
			k                  key
			stat, unit, header string
			v                  float64
		)
		if err := rows.Scan(&k.phase, &k.metric, &stat, &v, &unit, &header); err != nil {
			return err
		}
		if !isFinite(v) && k.phase == phaseAudit {
			continue // the audit's JSON carries no such number: read as absent
		}
		if metric[k] == nil {
			order = append(order, k)
			metric[k] = &metrics.Metric{Tag: k.metric, Header: header, Unit: unit}
			values[k] = map[string]float64{}
		}
		values[k][stat] = v
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, k := range order {
		m := metric[k]
		if v, ok := values[k][statValue]; ok && len(values[k]) == 1 {
			m.Value = v
		} else if k.phase == phaseAudit {
			m.Stats = statsFromMap(values[k], 0) // the audit's JSON carries no NaN
		} else {
			m.Stats = statsFromMap(values[k], math.NaN())
		}
		switch k.phase {
		case phaseProfiling:
			r.Profiling.Metrics = append(r.Profiling.Metrics, *m)
		case phaseWarmup:
			if r.Warmup == nil {
				r.Warmup = &metrics.Summary{}
			}
			r.Warmup.Metrics = append(r.Warmup.Metrics, *m)
		case phaseAudit:
			if m.Tag == metrics.TagSendLag {
				r.Audit.SendLagMs = m.Stats
			} else {
				loadHealth(&r.Audit, m.Tag, m.Value)
			}
		}
	}
	return nil
}

func loadErrors(ctx context.Context, q querier, id int64, r *result.Run) error {
	rows, err := q.QueryContext(ctx, `SELECT code, type, message, count FROM run_errors WHERE run_id = ? ORDER BY seq`, id)
	if err != nil {
		return err
	}
	defer rows.Close()
	r.ErrorSummary = []metrics.ErrorCount{}
	for rows.Next() {
		var e metrics.ErrorCount
		if err := rows.Scan(&e.Error.Code, &e.Error.Type, &e.Error.Message, &e.Count); err != nil {
			return err
		}
		r.ErrorSummary = append(r.ErrorSummary, e)
	}
	return rows.Err()
}

func loadCalls(ctx context.Context, q querier, id int64, r *result.Run) error {
	rows, err := q.QueryContext(ctx, `
		SELECT hook, phase, origin, path, status, attempts, duration_ms, ok, error, warning, started_at_ns,
			unanswered, unanswered_at_ns
		FROM control_calls WHERE run_id = ? ORDER BY seq`, id)
	if err != nil {
		return err
	}
	defer rows.Close()
	r.ControlHooks = []hooks.Call{}
	for rows.Next() {
		var c hooks.Call
		if err := rows.Scan(&c.Hook, &c.Phase, &c.Origin, &c.Path, &c.Status, &c.Attempts, &c.DurationMs, &c.OK,
			&c.Error, &c.Warning, &c.StartedAt, &c.Unanswered, &c.UnansweredAt); err != nil {
			return err
		}
		r.ControlHooks = append(r.ControlHooks, c)
	}
	return rows.Err()
}

func loadRecords(ctx context.Context, q querier, id int64, r *result.Run) error {
	rows, err := q.QueryContext(ctx, `
		SELECT idx, phase, phase_kind, url_idx, scheduled_ns, sent_ns, ttft_ns, latency_ns, end_ns, wall_start_ns,
			isl, osl, reasoning_tokens, status, error_type, retried, cancelled, first_chunk_tokens
		FROM records WHERE run_id = ? ORDER BY idx`, id)
	if err != nil {
		return err
	}
	defer rows.Close()
	// Scan sets every nullable column, NULL or not: declared once, they
	// are not allocated again for each record.
	var (
		ttft, latency, firstChunk sql.NullInt64
		errType                   sql.NullString
	)
	for rows.Next() {
		var rec metrics.Record
		if err := rows.Scan(&rec.Index, &rec.Phase, &rec.PhaseKind, &rec.URL, &rec.ScheduledNs, &rec.SentNs,
			&ttft, &latency, &rec.EndNs, &rec.WallStartNs, &rec.InputTokens, &rec.OutputTokens,
			&rec.ReasoningTokens, &rec.Status, &errType, &rec.Retried, &rec.Cancelled, &firstChunk); err != nil {
			return err
		}
		if firstChunk.Valid { // stored from trusted usage only (firstChunkTokens)
			n := int(firstChunk.Int64)
			rec.Usage = &metrics.Usage{FirstChunkTokens: &n}
		}
		switch {
		case ttft.Valid:
			rec.ResponseNs = metrics.StampsOf(rec.SentNs + ttft.Int64)
			if latency.Int64 != ttft.Int64 {
				rec.ResponseNs = metrics.StampsOf(rec.SentNs+ttft.Int64, rec.SentNs+latency.Int64)
			}
		case latency.Valid: // a reply under --streaming that was not streamed (stored without a TTFT)
			rec.ResponseNs, rec.NotStreamed = metrics.StampsOf(rec.SentNs+latency.Int64), true
		}
		if errType.Valid {
			rec.Error = &metrics.Error{Code: rec.Status, Type: errType.String}
		}
		rec.Streaming = r.Config.Streaming
		r.Records = append(r.Records, rec)
	}
	return rows.Err()
}
