package store

import (
	"cmp"
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
)

// sweepRunning is the status of a sweep still in progress; a finished sweep
// has one of the run statuses result.StatusComplete, StatusFailed or
// StatusInterrupted.
const sweepRunning = "running"

// SweepMeta describes a sweep when it starts.
type SweepMeta struct {
	Name       string
	ScriptPath string
	PlanSHA256 string
	Vars       map[string]string // --set values
	Trials     int               // planned trials per cell
	// Cells, when given, registers every planned cell up front (in Index
	// order); SaveRun also registers a cell the first time one of its trials
	// is stored.
	Cells []plan.Cell
	// Kind is KindSweep (the default) or KindSearch.
	Kind string
}

// Sweep is a stored sweep.
type Sweep struct {
	ID         int64             `json:"id"`
	Name       string            `json:"name"`
	ScriptPath string            `json:"script_path,omitempty"`
	PlanSHA256 string            `json:"plan_sha256,omitempty"`
	Vars       map[string]string `json:"vars,omitempty"`
	Trials     int               `json:"trials"`
	StartedAt  time.Time         `json:"started_at"`
	EndedAt    time.Time         `json:"ended_at,omitzero"`
	Status     string            `json:"status"`
	Kind       string            `json:"kind"` // KindSweep or KindSearch
}

// BeginSweep records a new sweep with status running and returns its id.
func (db *DB) BeginSweep(ctx context.Context, m SweepMeta) (int64, error) {
	if m.Name == "" {
		return 0, errors.New("begin sweep: name is required")
	}
	vars, err := json.Marshal(scrubVars(m.Vars, m.Cells)) // encoding/json sorts map keys: one canonical text
	if err != nil {
		return 0, fmt.Errorf("begin sweep %q: encode vars: %w", m.Name, err)
	}
	if m.Vars == nil {
		vars = []byte("{}")
	}
	var id int64
	err = db.inTx(ctx, func(tx *sql.Tx, now time.Time) error {
		res, err := tx.ExecContext(ctx, `
			INSERT INTO sweeps (name, script_path, plan_sha256, vars, trials, started_at, status, kind)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			m.Name, m.ScriptPath, m.PlanSHA256, string(vars), max(1, m.Trials), formatTime(now), sweepRunning, cmp.Or(m.Kind, KindSweep))
		if err != nil {
			return err
		}
		if id, err = res.LastInsertId(); err != nil {
			return err
		}
		for _, c := range m.Cells {
			if err := upsertCell(ctx, tx, id, c.ID, c.Label, c.Index, c.Params); err != nil {
				return fmt.Errorf("cell %s: %w", c.Label, err)
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("begin sweep %q: %w", m.Name, err)
	}
	return id, nil
}

// scrubVars replaces the secrets of the cells' configurations (an API key
// given as --set key=...) in the --set values, so the store never holds one.
func scrubVars(vars map[string]string, cells []plan.Cell) map[string]string {
	var secrets []string
	for i := range cells {
		secrets = append(secrets, cells[i].Profile.Secrets()...)
	}
	rd := plan.NewRedactor(secrets...)
	if rd.Empty() {
		return vars
	}
	out := make(map[string]string, len(vars))
	for k, v := range vars {
		out[k] = rd.Redact(v)
	}
	return out
}

// FindResumableSweep returns the latest sweep with the given name that was
// started from a script with the given SHA-256, whatever its status: the
// sweep `--resume` continues. ok is false when there is none.
func (db *DB) FindResumableSweep(ctx context.Context, name, planSHA string) (id int64, ok bool, err error) {
	err = db.db.QueryRowContext(ctx,
		`SELECT id FROM sweeps WHERE name = ? AND plan_sha256 = ? ORDER BY id DESC LIMIT 1`,
		name, planSHA).Scan(&id)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, false, nil
	case err != nil:
		return 0, false, fmt.Errorf("find resumable sweep %q: %w", name, err)
	}
	return id, true, nil
}

// ReopenSweep marks a sweep running again (for --resume) with trials
// planned per cell (a resume may change them), and clears its cells'
// convergence marks: the resumed run sets them again (MarkConverged) for
// the cells that converge under its criterion.
func (db *DB) ReopenSweep(ctx context.Context, id int64, trials int) error {
	err := db.inTx(ctx, func(tx *sql.Tx, _ time.Time) error {
		res, err := tx.ExecContext(ctx, `UPDATE sweeps SET status = ?, ended_at = NULL, trials = ? WHERE id = ?`,
			sweepRunning, max(1, trials), id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("sweep %d %w", id, ErrNotFound)
		}
		_, err = tx.ExecContext(ctx, `UPDATE cells SET converged = NULL, converged_after = NULL WHERE sweep_id = ?`, id)
		return err
	})
	if err != nil {
		return wrap(err, "reopen sweep %d", id)
	}
	return nil
}

// MarkConverged records why a cell of the sweep stopped adding trials
// before its planned number (a convergence criterion was met) after the
// given number of them, so that its missing trials read as not needed
// rather than lost.
func (db *DB) MarkConverged(ctx context.Context, sweepID int64, cellID string, after int, why string) error {
	err := db.inTx(ctx, func(tx *sql.Tx, _ time.Time) error {
		res, err := tx.ExecContext(ctx, `UPDATE cells SET converged = ?, converged_after = ? WHERE sweep_id = ? AND id = ?`,
			why, after, sweepID, cellID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("cell %s of sweep %d %w", cellID, sweepID, ErrNotFound)
		}
		return nil
	})
	if err != nil {
		return wrap(err, "mark cell %s of sweep %d converged", cellID, sweepID)
	}
	return nil
}

// FinishSweep records a sweep's final status (result.StatusComplete,
// StatusFailed or StatusInterrupted) and its end time.
func (db *DB) FinishSweep(ctx context.Context, id int64, status string) error {
	switch status {
	case result.StatusComplete, result.StatusFailed, result.StatusInterrupted:
		return db.setSweepStatus(ctx, id, status)
	}
	return fmt.Errorf("finish sweep %d: invalid status %q", id, status)
}

func (db *DB) setSweepStatus(ctx context.Context, id int64, status string) error {
	err := db.inTx(ctx, func(tx *sql.Tx, now time.Time) error {
		ended := sql.NullString{String: formatTime(now), Valid: status != sweepRunning}
		res, err := tx.ExecContext(ctx, `UPDATE sweeps SET status = ?, ended_at = ? WHERE id = ?`, status, ended, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("sweep %d %w", id, ErrNotFound)
		}
		return nil
	})
	if err != nil {
		return wrap(err, "mark sweep %d %s", id, status)
	}
	return nil
}

// CompletedTrialKeys returns the trial keys (plan.Trial.Key) of the sweep's
// trials stored with status complete: those `--resume` skips.
func (db *DB) CompletedTrialKeys(ctx context.Context, sweepID int64) (map[string]bool, error) {
	rows, err := db.db.QueryContext(ctx,
		`SELECT trial_key FROM runs WHERE sweep_id = ? AND trial_key IS NOT NULL AND status = ?`,
		sweepID, result.StatusComplete)
	if err != nil {
		return nil, fmt.Errorf("list completed trials of sweep %d: %w", sweepID, err)
	}
	defer rows.Close()
	keys := map[string]bool{}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, fmt.Errorf("list completed trials of sweep %d: %w", sweepID, err)
		}
		keys[k] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list completed trials of sweep %d: %w", sweepID, err)
	}
	return keys, nil
}

// upsertCell registers a cell of a sweep; idx < 0 appends it after the
// sweep's last known cell. An existing cell is left as it is.
func upsertCell(ctx context.Context, q querier, sweepID int64, id, label string, idx int, params []plan.Param) error {
	if params == nil {
		params = []plan.Param{}
	}
	pj, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("encode params: %w", err)
	}
	_, err = q.ExecContext(ctx, `
		INSERT INTO cells (sweep_id, id, label, idx, params)
		VALUES (?1, ?2, ?3, CASE WHEN ?4 >= 0 THEN ?4 ELSE (SELECT coalesce(max(idx) + 1, 0) FROM cells WHERE sweep_id = ?1) END, ?5)
		ON CONFLICT (sweep_id, id) DO NOTHING`,
		sweepID, id, label, idx, string(pj))
	return err
}

// findSweep resolves a sweep reference: a numeric id, or a name (the latest
// sweep with that name).
func findSweep(ctx context.Context, q querier, ref string) (Sweep, error) {
	query := `SELECT id, name, script_path, plan_sha256, vars, trials, started_at, ended_at, status, kind FROM sweeps `
	var row *sql.Row
	if id, err := strconv.ParseInt(ref, 10, 64); err == nil {
		row = q.QueryRowContext(ctx, query+`WHERE id = ? OR name = ? ORDER BY id = ? DESC, id DESC LIMIT 1`, id, ref, id)
	} else {
		row = q.QueryRowContext(ctx, query+`WHERE name = ? ORDER BY id DESC LIMIT 1`, ref)
	}
	var (
		s     Sweep
		vars  string
		start string
		end   sql.NullString
	)
	err := row.Scan(&s.ID, &s.Name, &s.ScriptPath, &s.PlanSHA256, &vars, &s.Trials, &start, &end, &s.Status, &s.Kind)
	if errors.Is(err, sql.ErrNoRows) {
		return Sweep{}, fmt.Errorf("sweep %q %w%s", ref, ErrNotFound, nearSweeps(ctx, q, ref))
	}
	if err != nil {
		return Sweep{}, err
	}
	if err := json.Unmarshal([]byte(vars), &s.Vars); err != nil {
		return Sweep{}, fmt.Errorf("decode vars of sweep %d: %w", s.ID, err)
	}
	s.StartedAt, s.EndedAt = parseTime(start), nullTime(end)
	return s, nil
}

// DirRun is a stored run found by its artifact directory.
type DirRun struct {
	RunID   int64
	SweepID int64 // 0: not a sweep's trial
	Dir     string
}

// RunsInDirs returns the stored runs whose artifact directory is one of
// dirs, compared as stored (a path as the run was given it).
func (db *DB) RunsInDirs(ctx context.Context, dirs []string) ([]DirRun, error) {
	const chunk = 500 // bound parameters a statement
	var out []DirRun
	for len(dirs) > 0 {
		n := min(chunk, len(dirs))
		args := make([]any, n)
		for i, d := range dirs[:n] {
			args[i] = d
		}
		dirs = dirs[n:]
		rows, err := db.db.QueryContext(ctx, `SELECT id, coalesce(sweep_id, 0), artifact_dir FROM runs WHERE artifact_dir IN (?`+
			strings.Repeat(",?", n-1)+`) ORDER BY id`, args...)
		if err != nil {
			return nil, fmt.Errorf("find the runs stored in trial directories: %w", err)
		}
		for rows.Next() {
			var r DirRun
			if err := rows.Scan(&r.RunID, &r.SweepID, &r.Dir); err != nil {
				rows.Close()
				return nil, fmt.Errorf("find the runs stored in trial directories: %w", err)
			}
			out = append(out, r)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("find the runs stored in trial directories: %w", err)
		}
	}
	return out, nil
}

// SweepTrialDir returns the artifact directory of one of the sweep's
// stored trials ("" when none is stored).
func (db *DB) SweepTrialDir(ctx context.Context, sweepID int64) (string, error) {
	var dir string
	err := db.db.QueryRowContext(ctx, `SELECT artifact_dir FROM runs WHERE sweep_id = ? AND coalesce(artifact_dir, '') != '' LIMIT 1`,
		sweepID).Scan(&dir)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("find the trial directory of sweep %d: %w", sweepID, err)
	}
	return dir, nil
}

// nearSweeps proposes the stored sweep names closest to a misspelt ref
// (plan.Suggest); "" when none is close or they cannot be read.
func nearSweeps(ctx context.Context, q querier, ref string) string {
	rows, err := q.QueryContext(ctx, `SELECT DISTINCT name FROM sweeps ORDER BY name LIMIT 10000`)
	if err != nil {
		return ""
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if rows.Scan(&n) == nil {
			names = append(names, n)
		}
	}
	return plan.Suggest(ref, names)
}

// numberNotARun refuses a ref that reads as a run id no stored run has
// (deleted, or never there), unless a sweep is named so: a sweep's id
// standing in for it would compare other runs under the same number.
func numberNotARun(ctx context.Context, q querier, ref string) error {
	id, err := strconv.ParseInt(ref, 10, 64)
	if err != nil {
		return nil
	}
	var name string
	switch err := q.QueryRowContext(ctx, `SELECT name FROM sweeps WHERE name = ? LIMIT 1`, ref).Scan(&name); {
	case err == nil:
		return nil
	case !errors.Is(err, sql.ErrNoRows):
		return err
	}
	if err := q.QueryRowContext(ctx, `SELECT name FROM sweeps WHERE id = ?`, id).Scan(&name); err == nil {
		return fmt.Errorf("run %d %w: deleted, or never stored; sweep #%d, %q, is another thing: to compare its runs give %q "+
			"(or %s/CELL)", id, ErrNotFound, id, name, name, name)
	}
	return fmt.Errorf("run %d %w: deleted, or never stored", id, ErrNotFound)
}
