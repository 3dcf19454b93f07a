package runner

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
)

// storeUnstored stores, instead of running it again, a trial of this sweep
// that completed in an earlier run of it but was not stored: the store
// gave up (a Ctrl-C during its wait for another process's lock, a disk full
// past the retries) or the parent died before storing it. Its child's
// result.json is still in the trial directory, written for this sweep,
// this cell and this trial. stored says it was; ok is false when storing
// it failed, which stops the sweep as any store failure does.
func (s *sweepRun) storeUnstored(ctx context.Context, l int, t plan.Trial, spec Spec) (stored, ok bool) {
	if ctx.Err() != nil {
		return false, true // interrupted: nothing more is stored (the store's wait could not be cut)
	}
	run, err := ReadResult(filepath.Join(s.o.TrialDir(t), ResultFile))
	if err != nil || run.Status != result.StatusComplete || run.Info.SweepID != spec.Info.SweepID ||
		run.Info.CellID != spec.Info.CellID || run.Info.Trial != spec.Info.Trial {
		return false, true // none, or not this trial's: it runs
	}
	s.progress(t, "completed in an earlier run but not stored: storing its "+ResultFile+" (not run again)")
	return true, s.ended(ctx, l, t, spec, run, nil, 0)
}

// warnUnverifiable warns once for a cell when the KV-cache reset of some
// of its complete trials could not be verified (neither the server's usage
// nor its counters could tell whether the cache was cleared), as the sweep
// table warns of resets that did not clear it.
func (o Options) warnUnverifiable(sw plan.Sweep, c plan.Cell, runs []*result.Run) {
	n, complete := 0, 0
	for _, r := range runs {
		if r == nil || r.Status != result.StatusComplete {
			continue
		}
		complete++
		if r.Audit.KVReset == result.ResetUnverifiable {
			n++
		}
	}
	w := o.Warnings
	if w == nil {
		w = o.Progress
	}
	if n == 0 || w == nil {
		return
	}
	fmt.Fprintf(w, "warning: sweep %q cell %s: KV cache reset unverifiable in %d of %d trials (the server's usage and counters "+
		"could not tell whether the cache was cleared: see `aiperf runs show` or the trial's %s)\n", sw.Name, c.Label, n, complete, LogFile)
}
