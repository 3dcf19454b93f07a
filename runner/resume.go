package runner

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
)

// ErrRefused is what the errors of a run refused before it sent anything
// are (errors.Is): a --resume that cannot go on from what the store and
// the artifact directory hold. The command exits 2 for it, as for any
// usage error.
var ErrRefused = errors.New("refused: nothing was sent")

// refusal is an error that is ErrRefused, its message its own.
type refusal struct{ msg string }

func (e *refusal) Error() string        { return e.msg }
func (e *refusal) Is(target error) bool { return target == ErrRefused }

// refuse is a refusal; its message should say that nothing was sent and
// what to do.
func refuse(format string, args ...any) error { return &refusal{msg: fmt.Sprintf(format, args...)} }

// trialDirStore is the part of the store (store.DB has it) that names the
// directory of one of a sweep's stored trials.
type trialDirStore interface {
	SweepTrialDir(ctx context.Context, sweepID int64) (string, error)
}

// CheckResume tells whether Run can resume sweep sw (o.SweepID, o.Resume)
// from what the store holds: each trial it holds complete must have its
// result.json where o.TrialDir puts it, since the cell's aggregate is
// rebuilt from them. A resume into another --artifact-dir than the sweep
// ran in is refused (an error that is ErrRefused) naming that directory.
// Run checks it too; a command calls it before it marks the sweep running.
func CheckResume(ctx context.Context, sw plan.Sweep, o Options) error {
	done, err := o.Store.CompletedTrialKeys(ctx, o.SweepID)
	if err != nil {
		return fmt.Errorf("read completed trials: %w", err)
	}
	return checkStored(ctx, sw, o, done)
}

// checkStored is CheckResume with the trials the store holds complete.
func checkStored(ctx context.Context, sw plan.Sweep, o Options, done map[string]bool) error {
	if o.TrialDir == nil {
		return nil
	}
	var missing []plan.Trial
	for _, t := range storedTrials(sw, done) {
		if !resultOf(o, t) {
			missing = append(missing, t)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	t := missing[0]
	if ds, ok := o.Store.(trialDirStore); ok {
		if dir, err := ds.SweepTrialDir(ctx, o.SweepID); err == nil && dir != "" {
			if was, now, ok := roots(dir, sw, o, done); ok && was != now {
				return refuse("sweep %q: --resume continues sweep #%d, whose stored trials are under %s (e.g. %s), not under %s: a resume goes on "+
					"in the --artifact-dir its sweep was started with, where each cell's aggregate counts them; nothing was sent: "+
					"give --artifact-dir %s", sw.Name, o.SweepID, was, dir, now, was)
			}
		}
	}
	return refuse("sweep %q: --resume continues sweep #%d, but %d of its stored trials have no %s where this run looks for them "+
		"(%s trial %d: %s): their files were moved or removed, and each cell's aggregate is rebuilt from them; nothing was sent: "+
		"give the --artifact-dir the sweep was started with, or restore the files", sw.Name, o.SweepID, len(missing), ResultFile,
		t.Cell.Label, t.Number, o.TrialDir(t))
}

// resultOf tells whether t's directory holds the result.json of t, as this
// sweep stored it complete.
func resultOf(o Options, t plan.Trial) bool {
	run, err := ReadResult(filepath.Join(o.TrialDir(t), ResultFile))
	return err == nil && run.Status == result.StatusComplete && run.Info.SweepID == o.SweepID &&
		run.Info.CellID == t.Cell.ID && run.Info.Trial == t.Number
}

// storedTrials are the trials of sw's cells the store holds complete
// (done), in cell and trial order, those beyond sw.Trials included (stored
// by an earlier run of the sweep with more trials).
func storedTrials(sw plan.Sweep, done map[string]bool) []plan.Trial {
	var out []plan.Trial
	for _, c := range sw.Cells {
		for _, n := range storedNumbers(c.ID, done) {
			out = append(out, plan.Trial{Sweep: sw.Name, Cell: c, Number: n})
		}
	}
	return out
}

// storedNumbers are the numbers of cell's trials in done, ascending.
func storedNumbers(cell string, done map[string]bool) []int {
	var out []int
	for k := range done {
		id, num, ok := strings.Cut(k, "/") // plan.Trial.Key: <cell id>/NNNN
		if n, err := strconv.Atoi(num); ok && err == nil && id == cell {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// roots are the artifact roots the stored trial directory dir and this
// run's trial directories hang from: the part before the path they share
// at their end (<sweep>/<cell>/trial_NNNN, or profile_runs/run_NNNN), each
// cleaned and absolute; ok is false when no trial of this run ends as dir.
func roots(dir string, sw plan.Sweep, o Options, done map[string]bool) (was, now string, ok bool) {
	best := 0
	for _, t := range slices.Concat(sw.TrialList(), storedTrials(sw, done)) {
		here := o.TrialDir(t)
		if k := sharedTail(dir, here); k > best {
			best, was, now = k, trimTail(dir, k), trimTail(here, k)
		}
	}
	return abs(was), abs(now), best > 0
}

// sharedTail counts the path elements a and b end with alike.
func sharedTail(a, b string) int {
	as := strings.Split(filepath.Clean(a), string(filepath.Separator))
	bs := strings.Split(filepath.Clean(b), string(filepath.Separator))
	k := 0
	for k < len(as) && k < len(bs) && as[len(as)-1-k] == bs[len(bs)-1-k] {
		k++
	}
	return k
}

// trimTail is path without its last k elements ("." when nothing is left).
func trimTail(path string, k int) string {
	p := filepath.Clean(path)
	for range k {
		p = filepath.Dir(p)
	}
	return p
}

func abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// beyond are the trials the store holds complete for sw's cells past
// sw.Trials (an earlier run of the sweep had more trials), by cell id: they
// are no part of this run's plan, but each stays in its cell's aggregate.
func beyond(sw plan.Sweep, done map[string]bool) map[string][]plan.Trial {
	out := map[string][]plan.Trial{}
	for _, t := range storedTrials(sw, done) {
		if t.Number > sw.Trials {
			out[t.Cell.ID] = append(out[t.Cell.ID], t)
		}
	}
	return out
}

// keepBeyond keeps the trials the store holds complete past the plan's
// trials (done), for their cells' aggregates, and says so: a resume with
// fewer trials than the sweep ran neither runs nor drops them.
func (s *sweepRun) keepBeyond(done map[string]bool) {
	s.beyond = beyond(s.sw, done)
	n, most := 0, 0
	for _, ts := range s.beyond {
		n += len(ts)
		most = max(most, ts[len(ts)-1].Number)
	}
	if n > 0 {
		s.o.warn("note: sweep %q: the store holds %s of it past trials = %d (up to trial %d of a cell), from an earlier run with more "+
			"trials: they stay stored and count in their cells' aggregates and table; none runs again\n", s.sw.Name, plural(n, "complete trial"),
			s.sw.Trials, most)
	}
}
