package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/servermetrics"
)

// RunRow is one run as listed and compared: where it sits, what it ran, how
// it ended, and the profiling statistics that were asked for.
type RunRow struct {
	ID          int64        `json:"id"`
	SweepID     int64        `json:"sweep_id,omitempty"`
	Sweep       string       `json:"sweep,omitempty"`
	CellID      string       `json:"cell_id,omitempty"`
	CellLabel   string       `json:"cell_label,omitempty"`
	Params      []plan.Param `json:"params,omitempty"`
	Trial       int          `json:"trial,omitempty"`
	Name        string       `json:"name,omitempty"`
	BenchmarkID string       `json:"benchmark_id"`
	Status      string       `json:"status"`
	Error       string       `json:"error,omitempty"`

	Model        string   `json:"model"`
	URL          string   `json:"url"`
	EndpointType string   `json:"endpoint_type"`
	Streaming    bool     `json:"streaming"`
	Mode         string   `json:"mode"`
	Concurrency  *int     `json:"concurrency,omitempty"`
	RequestRate  *float64 `json:"request_rate,omitempty"`
	ISL          *int     `json:"isl,omitempty"`
	OSL          *int     `json:"osl,omitempty"`
	Seed         *int64   `json:"seed,omitempty"`

	StartedAt   time.Time `json:"started_at"`
	EndedAt     time.Time `json:"ended_at,omitzero"` // zero: not ended (a run still going, or killed)
	ArtifactDir string    `json:"artifact_dir,omitempty"`
	RecordCount int       `json:"record_count"`
	// ClientBound is the run's CLIENT-BOUND flag: the client, not the
	// server, shaped its numbers.
	ClientBound bool `json:"client_bound,omitempty"`
	// RxCoalesceUsecs is the receive coalescing window the client read
	// with (0: off).
	RxCoalesceUsecs int `json:"rx_coalesce_usecs,omitempty"`
	// KVReset is the verdict of the run's KV-cache reset check
	// (result.ResetVerified, ...; "" without a reset).
	KVReset string `json:"kv_reset,omitempty"`
	// HookWarnings are the run's warnings that say the server was not in the
	// state its numbers assume (result.HookFlag: a profiler stop that
	// failed, a prefix cache warm at the start, ...).
	HookWarnings []string `json:"hook_warnings,omitempty"`
	// Config is the run's stored configuration (plan.Profile, secrets
	// redacted), key by key; nil when it cannot be read.
	Config map[string]json.RawMessage `json:"-"`

	// Stats maps "metric.stat" (e.g. "time_to_first_token.p99",
	// "request_throughput.value") to the profiling-phase value.
	Stats map[string]float64 `json:"stats,omitempty"`
	// Units maps a metric tag to its unit.
	Units map[string]string `json:"units,omitempty"`
	// Server holds the profiling-phase series, with every statistic, of the
	// server and GPU metric families that were asked for ("server.FAMILY.STAT"
	// or "gpu.FAMILY.STAT" keys), by family and then in result order.
	Server []servermetrics.Series `json:"server,omitempty"`
}

// Stat returns the run's value of metric.stat. A derived or aggregate metric
// has only a "value", which also answers "avg" (the average of one value is
// itself), so request_throughput.avg works.
func (r *RunRow) Stat(metric, stat string) (float64, bool) {
	if v, ok := r.Stats[metric+"."+stat]; ok {
		return v, true
	}
	if stat == "avg" {
		v, ok := r.Stats[metric+"."+statValue]
		return v, ok
	}
	return 0, false
}

// RunFilter selects runs for ListRuns. Zero fields do not filter.
type RunFilter struct {
	IDs   []int64
	Sweep string // sweep id, or name (its latest sweep)
	Name  string // --name label
	Limit int    // newest first; 0 = all
	// Stats lists the "metric.stat" keys to load into RunRow.Stats, and
	// the "server.FAMILY.STAT" and "gpu.FAMILY.STAT" keys whose families to
	// load into RunRow.Server.
	Stats []string
}

// ListRuns returns the runs matching f, newest first.
func (db *DB) ListRuns(ctx context.Context, f RunFilter) ([]RunRow, error) {
	var runs []RunRow
	err := db.inSnapshot(ctx, func(q querier) error {
		var (
			where []string
			args  []any
		)
		if len(f.IDs) > 0 {
			ids, _ := json.Marshal(f.IDs)
			where, args = append(where, "r.id IN (SELECT value FROM json_each(?))"), append(args, string(ids))
		}
		if f.Sweep != "" {
			s, err := findSweep(ctx, q, f.Sweep)
			if err != nil {
				return err
			}
			where, args = append(where, "r.sweep_id = ?"), append(args, s.ID)
		}
		if f.Name != "" {
			where, args = append(where, "r.name = ?"), append(args, f.Name)
		}
		query := runSelect
		if len(where) > 0 {
			query += " WHERE " + strings.Join(where, " AND ")
		}
		query += " ORDER BY r.id DESC"
		if f.Limit > 0 {
			query += fmt.Sprintf(" LIMIT %d", f.Limit)
		}
		var err error
		if runs, err = queryRuns(ctx, q, query, args...); err != nil {
			return err
		}
		return loadStats(ctx, q, runs, f.Stats)
	})
	if err != nil {
		return nil, wrap(err, "list runs")
	}
	return runs, nil
}

// Group is a set of runs compared as one side: the trials of a cell, the
// runs sharing a --name, or a single run.
type Group struct {
	Ref  string `json:"ref"`  // as the user wrote it
	Desc string `json:"desc"` // how Ref was resolved, e.g. `run 12`, `sweep "scan" (id 3), 3 trials`
	// Also is what else Ref names, by a rule it lost to (e.g. `a sweep
	// named "slow"`); "" when nothing else.
	Also string   `json:"also,omitempty"`
	Runs []RunRow `json:"runs"`
}

// RunsByRef resolves a compare argument into a group of runs, loading the
// given "metric.stat" keys. The rules, in order:
//
//  1. A number is a run id: that run alone.
//  2. A --name label: the runs with that name in the sweep of the newest
//     such run (e.g. the trials of `aiperf profile --name x
//     --num-profile-runs 3`); when that run is standalone, every standalone
//     run with that name (so repeating `aiperf profile --name x` builds a
//     replicated group).
//  3. A sweep name (its latest sweep) or id that has a single cell: the
//     trials of that cell.
//  4. SWEEP/CELL, where CELL is a cell label or id of the latest sweep named
//     SWEEP: that cell's trials.
//
// A sweep with several cells is an error wrapping ErrAmbiguous; anything
// else is an error wrapping ErrNotFound.
func (db *DB) RunsByRef(ctx context.Context, ref string, stats []string) (*Group, error) {
	g := &Group{Ref: ref}
	err := db.inSnapshot(ctx, func(q querier) error {
		if err := resolveRef(ctx, q, g); err != nil {
			return err
		}
		return loadStats(ctx, q, g.Runs, stats)
	})
	if err != nil {
		return nil, wrap(err, "find runs %q", ref)
	}
	return g, nil
}

func resolveRef(ctx context.Context, q querier, g *Group) error {
	ref := g.Ref
	if id, err := strconv.ParseInt(ref, 10, 64); err == nil {
		runs, err := queryRuns(ctx, q, runSelect+" WHERE r.id = ?", id)
		if err != nil || len(runs) == 1 {
			g.Desc, g.Runs = fmt.Sprintf("run %d", id), runs
			if err == nil {
				g.Also, err = alsoNamed(ctx, q, ref, true, 0)
			}
			return err
		}
	}

	var latestSweep sql.NullInt64
	err := q.QueryRowContext(ctx, `SELECT sweep_id FROM runs WHERE name = ? ORDER BY id DESC LIMIT 1`, ref).Scan(&latestSweep)
	switch {
	case err == nil && latestSweep.Valid:
		g.Desc = fmt.Sprintf("runs named %q in sweep %d", ref, latestSweep.Int64)
		if g.Runs, err = queryRuns(ctx, q, runSelect+" WHERE r.name = ? AND r.sweep_id = ? ORDER BY r.trial, r.id", ref, latestSweep.Int64); err == nil {
			g.Also, err = alsoNamed(ctx, q, ref, false, latestSweep.Int64)
		}
		return err
	case err == nil:
		g.Desc = fmt.Sprintf("standalone runs named %q", ref)
		if g.Runs, err = queryRuns(ctx, q, runSelect+" WHERE r.name = ? AND r.sweep_id IS NULL ORDER BY r.id", ref); err == nil {
			g.Also, err = alsoNamed(ctx, q, ref, false, 0)
		}
		return err
	case !errors.Is(err, sql.ErrNoRows):
		return err
	}

	if err := numberNotARun(ctx, q, ref); err != nil {
		return err
	}
	sweepRef, cellRef, hasCell := ref, "", false
	s, err := findSweep(ctx, q, ref)
	if errors.Is(err, ErrNotFound) {
		if i := strings.LastIndex(ref, "/"); i > 0 {
			sweepRef, cellRef, hasCell = ref[:i], ref[i+1:], true
			s, err = findSweep(ctx, q, sweepRef)
		}
	}
	if errors.Is(err, ErrNotFound) {
		return fmt.Errorf("run, run name or sweep %q %w", ref, ErrNotFound)
	}
	if err != nil {
		return err
	}
	cells, err := queryCells(ctx, q, s.ID)
	if err != nil {
		return err
	}
	var cell *Cell
	switch {
	case hasCell:
		for i := range cells {
			if cells[i].Label == cellRef || cells[i].ID == cellRef {
				cell = &cells[i]
			}
		}
		if cell == nil {
			return fmt.Errorf("cell %q of sweep %q (id %d) %w", cellRef, sweepRef, s.ID, ErrNotFound)
		}
	case len(cells) == 1:
		cell = &cells[0]
	case len(cells) == 0:
		return fmt.Errorf("runs of sweep %q (id %d) %w", s.Name, s.ID, ErrNotFound)
	default:
		return fmt.Errorf("%q is %w: sweep %q (id %d) has %d cells; compare them with --sweep %s, or pick one as %s/<cell label>, e.g. %s/%s",
			ref, ErrAmbiguous, s.Name, s.ID, len(cells), ref, ref, ref, cells[0].Label)
	}
	g.Desc = fmt.Sprintf("sweep %q (id %d) cell %s", s.Name, s.ID, cell.Label)
	g.Runs, err = queryRuns(ctx, q, runSelect+" WHERE r.sweep_id = ? AND r.cell_id = ? ORDER BY r.trial, r.id", s.ID, cell.ID)
	return err
}

// alsoNamed says what else ref names than the runs it was read as: runs
// named ref (asked when runs), a sweep named ref other than sweep (the
// one the runs are in, as --num-profile-runs names it); "" when nothing.
func alsoNamed(ctx context.Context, q querier, ref string, runs bool, sweep int64) (string, error) {
	var what []string
	var n int
	if runs {
		if err := q.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE name = ?`, ref).Scan(&n); err != nil {
			return "", err
		}
		if n > 0 {
			what = append(what, fmt.Sprintf("runs named %q (--name)", ref))
		}
	}
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM sweeps WHERE name = ? AND id != ?`, ref, sweep).Scan(&n); err != nil {
		return "", err
	}
	if n > 0 {
		what = append(what, fmt.Sprintf("a sweep named %q", ref))
	}
	return strings.Join(what, " and "), nil
}

// Cell is a stored sweep cell with its runs (trials).
type Cell struct {
	ID     string       `json:"id"`
	Label  string       `json:"label"`
	Index  int          `json:"index"`
	Params []plan.Param `json:"params"`
	// Converged says why the cell stopped before its planned trials under
	// the sweep's convergence criterion ("" when it did not), after
	// ConvergedAfter of them had ended.
	Converged      string   `json:"converged,omitempty"`
	ConvergedAfter int      `json:"converged_after,omitempty"`
	Runs           []RunRow `json:"runs"`
}

// SweepRuns is a sweep with its cells in index order, each holding its
// trials in trial order.
type SweepRuns struct {
	Sweep Sweep  `json:"sweep"`
	Cells []Cell `json:"cells"`
}

// SweepRuns loads a sweep, by id or by name (its latest sweep), with every
// cell and trial and the given "metric.stat" keys.
func (db *DB) SweepRuns(ctx context.Context, ref string, stats []string) (*SweepRuns, error) {
	var out SweepRuns
	err := db.inSnapshot(ctx, func(q querier) error {
		var err error
		if out.Sweep, err = findSweep(ctx, q, ref); err != nil {
			return err
		}
		if out.Cells, err = queryCells(ctx, q, out.Sweep.ID); err != nil {
			return err
		}
		runs, err := queryRuns(ctx, q, runSelect+" WHERE r.sweep_id = ? ORDER BY r.trial, r.id", out.Sweep.ID)
		if err != nil {
			return err
		}
		if err := loadStats(ctx, q, runs, stats); err != nil {
			return err
		}
		byID := make(map[string]*Cell, len(out.Cells))
		for i := range out.Cells {
			byID[out.Cells[i].ID] = &out.Cells[i]
		}
		for _, r := range runs {
			if c := byID[r.CellID]; c != nil {
				c.Runs = append(c.Runs, r)
			}
		}
		return nil
	})
	if err != nil {
		return nil, wrap(err, "load sweep %q", ref)
	}
	return &out, nil
}

func queryCells(ctx context.Context, q querier, sweepID int64) ([]Cell, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, label, idx, params, COALESCE(converged, ''), COALESCE(converged_after, 0) FROM cells WHERE sweep_id = ? ORDER BY idx, id`, sweepID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cells []Cell
	for rows.Next() {
		var (
			c      Cell
			params string
		)
		if err := rows.Scan(&c.ID, &c.Label, &c.Index, &params, &c.Converged, &c.ConvergedAfter); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(params), &c.Params); err != nil {
			return nil, fmt.Errorf("decode params of cell %s: %w", c.ID, err)
		}
		cells = append(cells, c)
	}
	return cells, rows.Err()
}

// runSelect reads RunRow columns; queryRuns appends WHERE/ORDER clauses.
const runSelect = `
	SELECT r.id, r.sweep_id, s.name, r.cell_id, c.label, c.params, r.trial, r.name, r.benchmark_id, r.status, r.error,
		r.model, r.url, r.endpoint_type, r.streaming, r.mode, r.concurrency, r.request_rate, r.isl, r.osl, r.seed,
		r.started_at, r.ended_at, r.artifact_dir, r.record_count, r.client_bound, r.rx_coalesce_usecs,
		COALESCE(r.kv_reset, ''), COALESCE(r.warnings, '[]'), r.config, COALESCE(l.pid, 0), COALESCE(l.host, ''), COALESCE(l.process, '')
	FROM runs r
	LEFT JOIN sweeps s ON s.id = r.sweep_id
	LEFT JOIN cells c ON c.sweep_id = r.sweep_id AND c.id = r.cell_id
	LEFT JOIN sweep_locks l ON l.key = 'run ' || r.id`

func queryRuns(ctx context.Context, q querier, query string, args ...any) ([]RunRow, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []RunRow
	for rows.Next() {
		var (
			r                              RunRow
			sweepID, trial, conc, isl, osl sql.NullInt64
			seed                           sql.NullInt64
			sweep, cellID, label, params   sql.NullString
			rate                           sql.NullFloat64
			start, end, config, claimHost  string
			claimStart                     string
			warnings                       string
			claimPID                       int
		)
		if err := rows.Scan(&r.ID, &sweepID, &sweep, &cellID, &label, &params, &trial, &r.Name, &r.BenchmarkID,
			&r.Status, &r.Error, &r.Model, &r.URL, &r.EndpointType, &r.Streaming, &r.Mode, &conc, &rate, &isl, &osl,
			&seed, &start, &end, &r.ArtifactDir, &r.RecordCount, &r.ClientBound, &r.RxCoalesceUsecs, &r.KVReset, &warnings, &config,
			&claimPID, &claimHost, &claimStart); err != nil {
			return nil, err
		}
		if stillGoing(r.Status, claimPID, claimHost, claimStart) {
			r.Status = result.StatusRunning
		}
		r.SweepID, r.Sweep, r.CellID, r.CellLabel, r.Trial = sweepID.Int64, sweep.String, cellID.String, label.String, int(trial.Int64)
		if params.Valid {
			if err := json.Unmarshal([]byte(params.String), &r.Params); err != nil {
				return nil, fmt.Errorf("decode params of run %d: %w", r.ID, err)
			}
		}
		r.Concurrency, r.ISL, r.OSL = intPtr(conc), intPtr(isl), intPtr(osl)
		if r.Concurrency == nil && r.Mode == "concurrency" { // stored before loadOf wrote the default
			r.Concurrency = new(int)
			*r.Concurrency = 1
		}
		if rate.Valid {
			r.RequestRate = &rate.Float64
		}
		if seed.Valid {
			r.Seed = &seed.Int64
		}
		r.StartedAt, r.EndedAt = parseTime(start), parseTime(end)
		var ws []string
		if json.Unmarshal([]byte(warnings), &ws) == nil { // unreadable: no flags, as before they were read
			r.HookWarnings = result.HookWarnings(ws)
		}
		if json.Unmarshal([]byte(config), &r.Config) != nil {
			r.Config = nil // a comparison then shows no configuration difference, not an error
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func intPtr(v sql.NullInt64) *int {
	if !v.Valid {
		return nil
	}
	n := int(v.Int64)
	return &n
}
