package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/search"
)

// Sweep kinds (sweeps.kind): a declared grid of cells, or an adaptive
// search whose cells are its probes.
const (
	KindSweep  = "sweep"
	KindSearch = "search"
)

// AddSearchProbe records a probe of search sweepID before its first trial
// runs: its cell (cell.Index is the probe's iteration index), its point
// (the searched parameters' values, in the space's order) and why the
// planner chose it. Recording a probe again leaves it as it is.
func (db *DB) AddSearchProbe(ctx context.Context, sweepID int64, cell plan.Cell, point []float64, why string) error {
	pt, err := json.Marshal(point)
	if err != nil {
		return fmt.Errorf("record probe %d of search %d: encode point: %w", cell.Index, sweepID, err)
	}
	err = db.inTx(ctx, func(tx *sql.Tx, _ time.Time) error {
		if err := upsertCell(ctx, tx, sweepID, cell.ID, cell.Label, cell.Index, cell.Params); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `
			INSERT INTO search_probes (sweep_id, idx, cell_id, point, why) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (sweep_id, idx) DO NOTHING`, sweepID, cell.Index, cell.ID, string(pt), why)
		return err
	})
	return wrap(err, "record probe %d of search %d", cell.Index, sweepID)
}

// SearchHistory is what search sweepID has stored: every recorded probe in
// order, each with its point and the trials stored for it in trial order —
// a complete trial with the given "metric.stat" statistics (a metric with a
// single value answers avg, see RunRow.Stat), a failed one with none. An
// interrupted attempt is not a trial. A search replays this through its
// planner to resume.
func (db *DB) SearchHistory(ctx context.Context, sweepID int64, keys []string) (search.History, error) {
	var h search.History
	err := db.inSnapshot(ctx, func(q querier) error {
		rows, err := q.QueryContext(ctx, `SELECT idx, cell_id, point FROM search_probes WHERE sweep_id = ? ORDER BY idx`, sweepID)
		if err != nil {
			return err
		}
		defer rows.Close()
		cellOf := map[string]int{}
		for rows.Next() {
			var (
				idx      int
				cell, pt string
				p        search.Probe
			)
			if err := rows.Scan(&idx, &cell, &pt); err != nil {
				return err
			}
			if idx != len(h.Probes) {
				return fmt.Errorf("probe %d is missing (the next stored is %d)", len(h.Probes), idx)
			}
			if err := json.Unmarshal([]byte(pt), &p.Point); err != nil {
				return fmt.Errorf("decode the point of probe %d: %w", idx, err)
			}
			p.Trials = []search.Trial{}
			cellOf[cell] = idx
			h.Probes = append(h.Probes, p)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		runs, err := queryRuns(ctx, q, runSelect+` WHERE r.sweep_id = ? AND r.status IN (?, ?) ORDER BY r.trial, r.id`,
			sweepID, result.StatusComplete, result.StatusFailed)
		if err != nil {
			return err
		}
		if err := loadStats(ctx, q, runs, keys); err != nil {
			return err
		}
		for i := range runs {
			r := &runs[i]
			idx, ok := cellOf[r.CellID]
			if !ok {
				continue
			}
			t := search.Trial{OK: r.Status == result.StatusComplete}
			if t.OK {
				t.Values = trialValues(r, keys)
			}
			h.Probes[idx].Trials = append(h.Probes[idx].Trials, t)
		}
		return nil
	})
	if err != nil {
		return search.History{}, wrap(err, "read the history of search %d", sweepID)
	}
	return h, nil
}

// trialValues are the finite values of keys a run measured.
func trialValues(r *RunRow, keys []string) map[string]float64 {
	out := map[string]float64{}
	for _, k := range keys {
		m, s, _ := strings.Cut(k, ".")
		if v, ok := r.Stat(m, s); ok && isFinite(v) {
			out[k] = v
		}
	}
	return out
}

// SaveSearchHistory stores search sweepID's search_history.json (doc) and
// its one-line answer, and each probe's verdict from doc's iterations (a
// pending probe's as the empty verdict, none yet).
func (db *DB) SaveSearchHistory(ctx context.Context, sweepID int64, doc search.HistoryDoc, answer string) error {
	b, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("store the history of search %d: encode: %w", sweepID, err)
	}
	err = db.inTx(ctx, func(tx *sql.Tx, _ time.Time) error {
		res, err := tx.ExecContext(ctx, `UPDATE sweeps SET search_history = ?, search_answer = ? WHERE id = ? AND kind = ?`,
			string(b), answer, sweepID, KindSearch)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("search %d %w", sweepID, ErrNotFound)
		}
		for _, it := range doc.Iterations {
			verdict := string(it.Verdict)
			if it.Verdict == search.Pending || it.Verdict == search.Unmeasured { // neither is a verdict on the SLA
				verdict = ""
			}
			if _, err := tx.ExecContext(ctx, `UPDATE search_probes SET verdict = ?, confidence = ? WHERE sweep_id = ? AND idx = ?`,
				verdict, it.Confidence, sweepID, it.IterationIdx); err != nil {
				return err
			}
		}
		return nil
	})
	return wrap(err, "store the history of search %d", sweepID)
}

// SearchDoc is the stored search_history.json of a search, by sweep id or
// name (the latest sweep of that name), with the sweep: what `aiperf plot`
// and `aiperf report` draw its trajectory from. A sweep that is not a
// search, or a search with no trial stored yet, is an error wrapping
// ErrNotFound.
func (db *DB) SearchDoc(ctx context.Context, ref string) (*search.HistoryDoc, Sweep, error) {
	var (
		doc  search.HistoryDoc
		sw   Sweep
		kind string
		text sql.NullString
	)
	err := db.inSnapshot(ctx, func(q querier) error {
		var err error
		if sw, err = findSweep(ctx, q, ref); err != nil {
			return err
		}
		if err := q.QueryRowContext(ctx, `SELECT kind, search_history FROM sweeps WHERE id = ?`, sw.ID).Scan(&kind, &text); err != nil {
			return err
		}
		switch {
		case kind != KindSearch:
			return fmt.Errorf("sweep %q (id %d) is a %s, not a search: it has no search history, %w", sw.Name, sw.ID, kind, ErrNotFound)
		case !text.Valid:
			return fmt.Errorf("the history of search %q (id %d) %w: no trial of it is stored yet", sw.Name, sw.ID, ErrNotFound)
		}
		return json.Unmarshal([]byte(text.String), &doc)
	})
	if err != nil {
		return nil, Sweep{}, wrap(err, "read the search history of %q", ref)
	}
	return &doc, sw, nil
}

// SweepRow is a sweep as `aiperf runs sweeps` lists it.
type SweepRow struct {
	Sweep
	Kind   string `json:"kind"`
	Cells  int    `json:"cells"`
	Runs   int    `json:"runs"`
	Answer string `json:"answer,omitempty"` // a search's one-line answer
	// Abandoned is set on a running sweep whose process is gone: killed
	// on this host (its claim's process has exited) or its claim lost.
	// --resume goes on with it.
	Abandoned bool `json:"abandoned,omitempty"`
}

// ListSweeps lists the stored sweeps and searches, newest first (limit 0:
// all), with their kind, cells (a search's probes), stored runs and, for a
// search, its answer.
func (db *DB) ListSweeps(ctx context.Context, limit int) ([]SweepRow, error) {
	query := `
		SELECT s.id, s.name, s.script_path, s.trials, s.started_at, s.ended_at, s.status, s.kind, coalesce(s.search_answer, ''),
			(SELECT count(*) FROM cells c WHERE c.sweep_id = s.id), (SELECT count(*) FROM runs r WHERE r.sweep_id = s.id),
			l.pid, coalesce(l.host, ''), coalesce(s.plan_sha256, ''), coalesce(l.process, '')
		FROM sweeps s LEFT JOIN sweep_locks l ON l.key = 'sweep ' || s.name || ' ' || s.plan_sha256 -- LockSweep's key
		ORDER BY s.id DESC`
	if limit > 0 {
		query += fmt.Sprintf(" LIMIT %d", limit)
	}
	rows, err := db.db.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("list sweeps: %w", err)
	}
	thisHost := hostname()
	defer rows.Close()
	var out []SweepRow
	for rows.Next() {
		var (
			r     SweepRow
			start string
			end   sql.NullString
			pid   sql.NullInt64
			host  string
			plan  string
			proc  string
		)
		if err := rows.Scan(&r.ID, &r.Name, &r.ScriptPath, &r.Trials, &start, &end, &r.Status, &r.Kind, &r.Answer,
			&r.Cells, &r.Runs, &pid, &host, &plan, &proc); err != nil {
			return nil, fmt.Errorf("list sweeps: %w", err)
		}
		if r.Status == sweepRunning && plan != "" { // without its plan's digest its claim cannot be found
			r.Abandoned = !pid.Valid || ownerGone(host, thisHost, int(pid.Int64), proc)
		}
		r.StartedAt, r.EndedAt = parseTime(start), nullTime(end)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list sweeps: %w", err)
	}
	return out, nil
}
