package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/servermetrics"
)

// insertServer writes a run's scraped server metrics (endpoints, series and
// their statistics) with prepared statements inside the run's transaction.
// URLs lose their credentials and every text a server or an error could
// echo loses the run's secrets (rd), as the rest of the run does. The phase
// kind of each series comes from the run's phases, so that compare finds
// the profiling statistics whatever the phase was called.
func insertServer(ctx context.Context, tx *sql.Tx, runID int64, r *result.Run, rd *plan.Redactor) error {
	sm := r.Server
	if sm == nil {
		return nil
	}
	warnings := make([]string, len(sm.Warnings))
	for i, w := range sm.Warnings {
		warnings[i] = rd.Redact(w)
	}
	warnJSON, err := json.Marshal(warnings)
	if err != nil {
		return fmt.Errorf("encode warnings: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE runs SET server_warnings = ?, server_span = ?, server_start_ns = ?, server_end_ns = ? WHERE id = ?`,
		string(warnJSON), sm.Span, sm.StartNs, sm.EndNs, runID); err != nil {
		return err
	}
	for i, e := range sm.Endpoints {
		if _, err := tx.ExecContext(ctx, `
			INSERT INTO server_endpoints (run_id, seq, url, source, scrapes, failures, interval_ns, last_error)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			runID, i, redactURL(rd, e.URL), e.Source, e.Scrapes, e.Failures, int64(e.Interval), rd.Redact(e.LastError)); err != nil {
			return fmt.Errorf("endpoint %d: %w", i, err)
		}
	}
	if len(sm.Series) == 0 {
		return nil
	}
	series := newBatch(tx, `INSERT INTO server_series
		(run_id, seq, source, endpoint, metric, labels, type, phase, phase_kind, unit, friendly) VALUES `, 11)
	defer series.close()
	stats := newBatch(tx, `INSERT INTO server_stats (run_id, series, stat, value) VALUES `, 4)
	defer stats.close()
	kinds := phaseKinds(&r.Config)
	endpoints := map[string]string{} // raw → redacted, computed once per endpoint
	for i := range sm.Series {
		s := &sm.Series[i]
		ep, ok := endpoints[s.Endpoint]
		if !ok {
			ep = redactURL(rd, s.Endpoint)
			endpoints[s.Endpoint] = ep
		}
		labels, err := labelsJSON(s.Labels)
		if err != nil {
			return fmt.Errorf("series %s: %w", s.Metric, err)
		}
		metric := servermetrics.AIPerfName(s.Metric, s.Type) // one name per counter, whoever built the result
		if err := series.add(ctx, runID, i, s.Source, ep, metric, labels, s.Type, s.Phase, kinds[s.Phase], s.Unit, s.Friendly); err != nil {
			return fmt.Errorf("series: %w", err)
		}
	}
	if err := series.flush(ctx); err != nil {
		return fmt.Errorf("series: %w", err)
	}
	// The statistics after every series they refer to.
	for i := range sm.Series {
		for stat, v := range sm.Series[i].Stats {
			if !isFinite(v) {
				continue
			}
			if err := stats.add(ctx, runID, i, stat, v); err != nil {
				return fmt.Errorf("statistics: %w", err)
			}
		}
	}
	if err := stats.flush(ctx); err != nil {
		return fmt.Errorf("statistics: %w", err)
	}
	return nil
}

// redactURL removes a URL's credentials and any of the run's secrets.
func redactURL(rd *plan.Redactor, u string) string { return rd.Redact(plan.RedactURL(u)) }

// labelsJSON is a label set as canonical JSON text: keys sorted (as
// encoding/json writes maps), "{}" for none.
func labelsJSON(labels map[string]string) (string, error) {
	if len(labels) == 0 {
		return "{}", nil
	}
	b, err := json.Marshal(labels)
	if err != nil {
		return "", fmt.Errorf("encode labels: %w", err)
	}
	return string(b), nil
}

// phaseKinds maps the run's phase names to their kinds; the kinds also map
// to themselves, so a series named by its phase kind is found too.
func phaseKinds(cfg *plan.Profile) map[string]string {
	kinds := map[string]string{plan.KindProfiling: plan.KindProfiling, plan.KindWarmup: plan.KindWarmup}
	for _, p := range cfg.PhaseList() {
		kinds[p.Name] = p.Kind
	}
	return kinds
}

// loadServer rebuilds result.Run.Server: nil when the run was saved without
// server metrics.
func loadServer(ctx context.Context, q querier, id int64, r *result.Run) error {
	var (
		warns, span    sql.NullString
		startNs, endNs sql.NullInt64
	)
	if err := q.QueryRowContext(ctx, `SELECT server_warnings, server_span, server_start_ns, server_end_ns FROM runs WHERE id = ?`,
		id).Scan(&warns, &span, &startNs, &endNs); err != nil {
		return err
	}
	if !warns.Valid {
		return nil
	}
	sm := &servermetrics.Result{Span: span.String, StartNs: startNs.Int64, EndNs: endNs.Int64}
	if err := json.Unmarshal([]byte(warns.String), &sm.Warnings); err != nil {
		return fmt.Errorf("decode warnings: %w", err)
	}
	if len(sm.Warnings) == 0 {
		sm.Warnings = nil
	}
	rows, err := q.QueryContext(ctx, `
		SELECT url, source, scrapes, failures, interval_ns, last_error FROM server_endpoints WHERE run_id = ? ORDER BY seq`, id)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			e        servermetrics.Endpoint
			interval int64
		)
		if err := rows.Scan(&e.URL, &e.Source, &e.Scrapes, &e.Failures, &interval, &e.LastError); err != nil {
			return err
		}
		e.Interval = time.Duration(interval)
		sm.Endpoints = append(sm.Endpoints, e)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	series, err := querySeries(ctx, q, `WHERE s.run_id = ?1 ORDER BY s.seq`, id)
	if err != nil {
		return err
	}
	for _, s := range series {
		sm.Series = append(sm.Series, s.Series)
	}
	if !span.Valid {
		sm.Span = inferSpan(series, phaseKinds(&r.Config))
	}
	r.Server = sm
	return nil
}

// inferSpan is the profiling span of a run stored before the span was
// kept: PhaseSpan when series were reduced over it, else the one profiling
// phase ("" when there is none).
func inferSpan(series []runSeries, kinds map[string]string) string {
	span := ""
	for _, s := range series {
		switch {
		case s.Phase == servermetrics.PhaseSpan:
			return servermetrics.PhaseSpan
		case kinds[s.Phase] == plan.KindProfiling:
			span = s.Phase
		}
	}
	return span
}

// runSeries is a stored series with the run it belongs to.
type runSeries struct {
	runID int64
	servermetrics.Series
}

// querySeries reads series with their statistics; tail filters and orders
// server_series s, keeping the rows of a series together. A counter is
// named by servermetrics.AIPerfName, so that the runs of versions that
// stored it with its _total compare with newer ones.
func querySeries(ctx context.Context, q querier, tail string, args ...any) ([]runSeries, error) {
	rows, err := q.QueryContext(ctx, `
		SELECT s.run_id, s.seq, s.source, s.endpoint, s.metric, s.labels, s.type, s.phase, s.unit, s.friendly, t.stat, t.value
		FROM server_series s LEFT JOIN server_stats t ON t.run_id = s.run_id AND t.series = s.seq
		`+tail, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var (
		out              []runSeries
		lastRun, lastSeq int64 = -1, -1
	)
	for rows.Next() {
		var (
			rs     runSeries
			seq    int64
			labels string
			stat   sql.NullString
			value  sql.NullFloat64
			s      = &rs.Series
		)
		if err := rows.Scan(&rs.runID, &seq, &s.Source, &s.Endpoint, &s.Metric, &labels, &s.Type, &s.Phase, &s.Unit,
			&s.Friendly, &stat, &value); err != nil {
			return nil, err
		}
		s.Metric = servermetrics.AIPerfName(s.Metric, s.Type)
		if rs.runID != lastRun || seq != lastSeq { // the first statistic of a series
			lastRun, lastSeq = rs.runID, seq
			if labels != "{}" {
				if err := json.Unmarshal([]byte(labels), &s.Labels); err != nil {
					return nil, fmt.Errorf("decode labels of series %s: %w", s.Metric, err)
				}
			}
			s.Stats = map[string]float64{}
			out = append(out, rs)
		}
		if stat.Valid {
			out[len(out)-1].Stats[stat.String] = value.Float64
		}
	}
	return out, rows.Err()
}

// Server metric keys of RunFilter.Stats and RunsByRef: "server.FAMILY.STAT"
// or "gpu.FAMILY.STAT" load every statistic of the profiling-phase series
// of that family into RunRow.Server.
const (
	serverKeyPrefix = servermetrics.SourceServer + "."
	gpuKeyPrefix    = servermetrics.SourceGPU + "."
)

// splitServerKeys separates server metric keys ("server.FAMILY.STAT",
// "gpu.FAMILY.STAT") from run statistic keys, returning the families the
// former name as source → family set.
func splitServerKeys(keys []string) (stats []string, families map[string]map[string]bool) {
	families = map[string]map[string]bool{}
	for _, k := range keys {
		source, rest, ok := strings.Cut(k, ".")
		if !ok || (source != servermetrics.SourceServer && source != servermetrics.SourceGPU) {
			stats = append(stats, k)
			continue
		}
		if i := strings.LastIndex(rest, "."); i > 0 {
			rest = rest[:i]
		}
		if families[source] == nil {
			families[source] = map[string]bool{}
		}
		families[source][rest] = true
	}
	return stats, families
}

// loadServerSeries fills RunRow.Server with the profiling-phase series of
// the wanted families (source → family names), statistics and all.
func loadServerSeries(ctx context.Context, q querier, runs []RunRow, families map[string]map[string]bool) error {
	if len(runs) == 0 || len(families) == 0 {
		return nil
	}
	index, idJSON := indexRuns(runs)
	names := map[string]bool{}
	for _, fs := range families {
		for f := range fs {
			// either spelling of a counter, as asked and as stored
			names[f], names[f+counterSuffix], names[strings.TrimSuffix(f, counterSuffix)] = true, true, true
		}
	}
	nameJSON, _ := json.Marshal(setKeys(names))
	series, err := querySeries(ctx, q, `
		WHERE s.run_id IN (SELECT value FROM json_each(?1)) AND s.phase_kind = ?2
			AND s.metric IN (SELECT value FROM json_each(?3))
		ORDER BY s.run_id, s.metric, s.seq`, idJSON, phaseProfiling, string(nameJSON)) // as server_series_metric
	if err != nil {
		return fmt.Errorf("load server metrics: %w", err)
	}
	for _, s := range series {
		asked := families[s.Source]
		if asked[s.Metric] || (s.Type == servermetrics.TypeCounter && asked[s.Metric+counterSuffix]) {
			r := index[s.runID]
			r.Server = append(r.Server, s.Series)
		}
	}
	return nil
}

// counterSuffix is what Prometheus text appends to a counter's samples;
// the store names counters without it (servermetrics.AIPerfName).
const counterSuffix = "_total"

// ServerMetric names a metric family some stored run has.
type ServerMetric struct {
	Source string `json:"source"`
	Metric string `json:"metric"`
	Type   string `json:"type"`
}

// ServerMetrics lists the metric families with profiling-phase series in
// the given runs, by source and name: what `compare --metric server.…`
// can name.
func (db *DB) ServerMetrics(ctx context.Context, runIDs []int64) ([]ServerMetric, error) {
	var out []ServerMetric
	err := db.inSnapshot(ctx, func(q querier) error {
		ids, _ := json.Marshal(runIDs)
		rows, err := q.QueryContext(ctx, `
			SELECT DISTINCT source, metric, type FROM server_series
			WHERE run_id IN (SELECT value FROM json_each(?1)) AND phase_kind = ?2 ORDER BY source, metric, type`,
			string(ids), phaseProfiling)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var m ServerMetric
			if err := rows.Scan(&m.Source, &m.Metric, &m.Type); err != nil {
				return err
			}
			m.Metric = servermetrics.AIPerfName(m.Metric, m.Type)
			out = append(out, m)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, wrap(err, "list server metrics")
	}
	// a counter stored under both spellings (older and newer runs) is one
	slices.SortFunc(out, func(a, b ServerMetric) int {
		return cmp.Or(cmp.Compare(a.Source, b.Source), cmp.Compare(a.Metric, b.Metric), cmp.Compare(a.Type, b.Type))
	})
	return slices.Compact(out), nil
}
