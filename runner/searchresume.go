package runner

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/search"
)

// CheckSearchResume tells whether Search can go on with search s from what
// the store holds of it (o.SweepID): every trial its probes ran is still
// stored, and the planner, given the probes before each stored one,
// proposes it again. A search one of whose stored trials was deleted
// (aiperf runs delete) cannot: the probes after it were chosen from it. It
// is refused with an error that is ErrRefused, naming the probe. Search
// checks it too; a command calls it before it marks the search running.
func CheckSearchResume(ctx context.Context, s plan.Search, o SearchOptions) error {
	srch, err := s.New()
	if err != nil {
		return fmt.Errorf("search %q: %w", s.Name, err)
	}
	h, err := o.Store.SearchHistory(ctx, o.SweepID, srch.Config().Keys())
	if err != nil {
		return err
	}
	return checkSearchStored(ctx, s, srch, h, o)
}

// checkSearchStored is CheckSearchResume with the stored history h.
func checkSearchStored(ctx context.Context, s plan.Search, srch *search.Search, h search.History, o SearchOptions) error {
	if len(h.Probes) == 0 {
		return nil
	}
	done, err := o.Store.CompletedTrialKeys(ctx, o.SweepID)
	if err != nil {
		return fmt.Errorf("search %q: read its stored trials: %w", s.Name, err)
	}
	for i, p := range h.Probes {
		cell, err := s.Cell(i, p.Point)
		if err != nil {
			return err
		}
		n := len(p.Trials)
		if nums := storedNumbers(cell.ID, done); len(nums) > 0 && nums[len(nums)-1] > n {
			return missingTrial(s, i, p, fmt.Sprintf("its trial %d is stored, so one before it is not", nums[len(nums)-1]))
		}
		if i < len(h.Probes)-1 && endedUnstored(o, cell, i, n+1) {
			return missingTrial(s, i, p, fmt.Sprintf("its trial %d ended, its %s is in %s, but it is not stored", n+1, ResultFile,
				filepath.Join(o.Dir, search.TrialDir(i, n+1))))
		}
	}
	return replay(s, srch, h)
}

// endedUnstored tells whether trial k of probe i (cell) ended in this
// search, complete or failed: its result.json is there.
func endedUnstored(o SearchOptions, cell plan.Cell, i, k int) bool {
	if o.Dir == "" {
		return false
	}
	run, err := ReadResult(filepath.Join(o.Dir, search.TrialDir(i, k), ResultFile))
	return err == nil && run.Info.SweepID == o.SweepID && run.Info.CellID == cell.ID && run.Info.Trial == k &&
		(run.Status == result.StatusComplete || run.Status == result.StatusFailed)
}

// missingTrial is the refusal of a search one of whose stored trials is
// gone from the store (how says how it shows).
func missingTrial(s plan.Search, i int, p search.Probe, how string) error {
	return refuse("search %q: probe %d (%s) has %s in the store, fewer than it ran (%s): a stored trial of the search was "+
		"deleted (aiperf runs delete), and the probes after it were chosen from it, so the search cannot go on from what the "+
		"store holds; nothing was sent: start it anew without --resume (aiperf profile replaces the search's artifacts; "+
		"aiperf sweep needs another --artifact-dir, or the search's directory removed)",
		s.Name, i, pointText(s, p.Point), plural(len(p.Trials), "trial"), how)
}

// replay checks that the stored probes are the ones this search proposes:
// given the probes before it, the planner proposes each stored one again.
// A planner that asks for more trials of an earlier probe instead finds
// one of its stored trials missing (deleted).
func replay(s plan.Search, srch *search.Search, h search.History) error {
	for i, p := range h.Probes {
		step, err := srch.Next(search.History{Probes: h.Probes[:i]})
		if err != nil {
			return searchErr(s.Name, fmt.Errorf("replay the stored probe %d: %w", i, err))
		}
		if !step.Stop && step.Probe < i {
			return missingTrial(s, step.Probe, h.Probes[step.Probe],
				fmt.Sprintf("the search went on to probe %d, but it needs %s more: %s", i, plural(step.Trials, "trial"), step.Why))
		}
		if step.Stop || step.Probe != i || !step.Point.Equal(p.Point) {
			now := "stops"
			if !step.Stop {
				now = fmt.Sprintf("proposes %s for probe %d", pointText(s, step.Point), step.Probe)
			}
			return refuse("search %q: the store holds probe %d at %s, but this search now %s: it is not the search that stored "+
				"them (its configuration or planner changed, or a stored trial was deleted); nothing was sent: "+
				"start it anew without --resume", s.Name, i, pointText(s, p.Point), now)
		}
	}
	return nil
}

// pointText renders a point as its options, e.g. "concurrency 16".
func pointText(s plan.Search, pt search.Point) string {
	var parts []string
	for _, p := range s.Params(pt) {
		parts = append(parts, fmt.Sprintf("%s %v", p.Name, p.Value))
	}
	return strings.Join(parts, ", ")
}
