package runner

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
)

// Lanes are the lanes Run runs with parallel: the sweep's server lanes
// (ServerLanes: plan.Sweep.Lanes, those that reach one server merged) when
// parallel > 1 and there are several, else one lane of every trial in plan
// order (today's one-at-a-time sweep, whatever servers its cells load).
func Lanes(sw plan.Sweep, parallel int) []plan.Lane {
	lanes, _, _ := lanesFor(context.Background(), sw, parallel, lookupHost)
	return lanes
}

// lookupHost resolves the host names of a --parallel sweep's servers.
var lookupHost lookupFunc = net.DefaultResolver.LookupIPAddr

// lanesFor is Lanes with the identities of the sweep's servers and the
// notes of ServerLanes; names are looked up only with parallel > 1.
func lanesFor(ctx context.Context, sw plan.Sweep, parallel int, lookup lookupFunc) ([]plan.Lane, serverIDs, []string) {
	if parallel <= 1 {
		lookup = noLookup
	}
	lanes, ids, notes := serverLanes(ctx, sw, lookup)
	if parallel <= 1 {
		notes = nil
	}
	if parallel > 1 && len(lanes) > 1 {
		return lanes, ids, notes
	}
	one := plan.Lane{Trials: sw.TrialList()}
	for _, l := range lanes {
		one.Servers = append(one.Servers, l.Servers...)
		one.Cells = append(one.Cells, l.Cells...)
	}
	return []plan.Lane{one}, ids, notes
}

// sweepRun is one Run: its lanes run on up to Options.Parallel goroutines,
// and everything a trial's end changes (the store, the outcome, progress
// lines, aggregates, the ETA) happens under mu, one trial at a time.
type sweepRun struct {
	sw        plan.Sweep
	o         Options
	lanes     []plan.Lane
	ids       serverIDs       // what identifies each server (lanesFor)
	done      map[string]bool // trials stored complete by an earlier run
	position  map[string]int  // trial key → its place in the plan, from 1
	last      map[string]int  // cell id → its last trial's number
	variation map[string]int  // cell id → the cell's index
	cooldown  time.Duration
	// beyond are the trials stored complete past the plan's trials (an
	// earlier run of the sweep had more), by cell id: each cell's
	// aggregate counts them too, as the store and its table do.
	beyond map[string][]plan.Trial

	cancel context.CancelFunc // stops every lane

	mu       sync.Mutex
	out      Outcome
	storeErr error
	results  map[string][]*result.Run // cell id → ended trials (this run's and resumed ones)
	stopped  map[string]string        // cell id → why it converged (Sweep.Convergence)
	notRun   map[string]int           // cell id → its trials passed over once it converged
	left     []int                    // lane → trials not ended yet, skipped or not
	started  []bool                   // lane → taken by a goroutine
	ran      int
	spent    time.Duration
}

// newSweepRun readies a run of trials in lanes (every trial of trials in
// one of them); done lists the trials an earlier run stored complete.
func newSweepRun(sw plan.Sweep, o Options, lanes []plan.Lane, trials []plan.Trial, done map[string]bool) *sweepRun {
	s := &sweepRun{
		sw: sw, o: o, lanes: lanes, done: done,
		position: make(map[string]int, len(trials)), last: map[string]int{}, variation: make(map[string]int, len(sw.Cells)),
		cooldown: seconds(sw.CooldownSeconds),
		out:      Outcome{Total: len(trials)}, results: map[string][]*result.Run{},
		stopped: map[string]string{}, notRun: map[string]int{},
	}
	for i, t := range trials {
		s.position[t.Key()] = i + 1
		s.last[t.Cell.ID] = max(s.last[t.Cell.ID], t.Number)
	}
	for i, c := range sw.Cells {
		s.variation[c.ID] = i
	}
	s.left, s.started = make([]int, len(s.lanes)), make([]bool, len(s.lanes))
	for i, l := range s.lanes {
		s.left[i] = len(l.Trials)
	}
	return s
}

// run runs the lanes, up to Parallel at once, taking them in order; it
// returns the outcome and the error of a store that failed (which stops
// the sweep).
func (s *sweepRun) run(ctx context.Context) (Outcome, error) {
	ctx, s.cancel = context.WithCancel(ctx)
	defer s.cancel()
	var wg sync.WaitGroup
	for range min(max(1, s.o.Parallel), len(s.lanes)) {
		wg.Go(func() {
			for l := s.take(); l >= 0 && ctx.Err() == nil; l = s.take() {
				s.runLane(ctx, l)
			}
		})
	}
	wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out, s.storeErr
}

// take hands out the next lane not started (-1: none left).
func (s *sweepRun) take() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, taken := range s.started {
		if !taken {
			s.started[i] = true
			return i
		}
	}
	return -1
}

// runLane runs lane l's trials one after another, with the sweep's
// cooldowns between those it runs. A trial whose KV-cache reset got no
// answer may see that reset run on its server later (a server finishes a
// call whose client left): the lane's next trial on that server waits for
// it (lateResetGrace, with the cooldown) and is stored with a warning. A
// trial whose profiler stop failed leaves the profiler possibly running:
// every later trial on that server is stored with a warning, until a stop
// there succeeds (latestop.go).
func (s *sweepRun) runLane(ctx context.Context, l int) {
	var prev plan.Trial // the lane's last trial run
	ran := false
	var late []lateReset // resets that may still run on a server of the lane
	// left are the profilers that may still run on a server of the lane.
	var left []leftProfiler
	for _, t := range s.lanes[l].Trials {
		if s.done[t.Key()] {
			s.skipped(l, t)
			continue
		}
		spec := Spec{Profile: t.Cell.Profile, Name: s.o.Name, CLICommand: s.o.CLICommand, Info: result.TrialInfo{
			Sweep: s.sw.Name, SweepID: s.o.SweepID, CellID: t.Cell.ID, CellLabel: t.Cell.Label,
			Params: t.Cell.Params, Trial: t.Number, SweepUUID: s.o.SweepUUID, Variation: s.variation[t.Cell.ID],
		}}
		if s.o.Resume {
			if stored, ok := s.storeUnstored(ctx, l, t, spec); stored || !ok {
				if !ok {
					return
				}
				continue
			}
		}
		if s.stopConverged(ctx, l, t) {
			continue
		}
		var under []lateReset // this trial's servers' late resets
		under, late = s.lateOn(late, t)
		wait := time.Duration(0)
		if ran {
			wait = seconds(s.sw.Cooldown(prev, t))
		}
		if grace := graceLeft(under); grace > wait {
			s.progress(t, fmt.Sprintf("waiting %s first: %s", grace.Round(time.Second), under[0].describe()))
			wait = grace
		}
		if wait > 0 && !sleep(ctx, wait) {
			return
		}
		if ctx.Err() != nil {
			return
		}
		prev, ran = t, true
		if _, err := os.Stat(filepath.Join(s.o.TrialDir(t), ProfilerMarkFile)); err == nil {
			s.progress(t, "an earlier run of this trial died with its server profiler possibly running: stopping it first")
		}
		s.progress(t, "running")
		running := s.profilersUnder(left, t)
		start := time.Now()
		noteStop := context.AfterFunc(ctx, func() { s.profilerNote(t) })
		run, err := s.o.Executor.Launch(ctx, spec, s.o.TrialDir(t))
		noteStop()
		if ctx.Err() != nil || (run != nil && run.Status == result.StatusInterrupted) {
			s.interrupted(t, ctx.Err() == nil)
			return
		}
		late = append(late, s.unanswered(t, run)...)
		if len(under) > 0 {
			if run == nil {
				run = failedRun(spec, err)
			}
			for _, r := range under {
				run.Audit.Warnings = append(slices.Clone(run.Audit.Warnings), r.describe()+" and may have run during this trial")
			}
		}
		run = withWarnings(run, spec, err, running)
		left = s.profilersLeft(left, t, run)
		if !s.ended(ctx, l, t, spec, run, err, time.Since(start)) {
			return
		}
		s.unconverged(t)
	}
}

// profilerNote says, at an interruption, that t's server profiler is
// running or being started (its trial's mark is there): the trial stops it
// before it ends, but a second Ctrl-C exits at once, the trial with it,
// and may leave it running, which the trial's next run stops first.
func (s *sweepRun) profilerNote(t plan.Trial) {
	if !t.Cell.Profile.ProfilerHook().Enabled {
		return
	}
	if _, err := os.Stat(filepath.Join(s.o.TrialDir(t), ProfilerMarkFile)); err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.o.warn("note: sweep %q %s trial %d: its server profiler is running or being started; the trial stops it before "+
		"it ends. A second Ctrl-C exits at once and may leave it running: `aiperf sweep --resume` (or the next run of "+
		"this trial) stops it first (its origins are in %s)\n", s.sw.Name, t.Cell.Label, t.Number,
		filepath.Join(s.o.TrialDir(t), ProfilerMarkFile))
}

// skipped notes a trial an earlier run stored complete.
func (s *sweepRun) skipped(l int, t plan.Trial) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.out.Skipped++
	s.left[l]--
	if r, err := ReadResult(filepath.Join(s.o.TrialDir(t), ResultFile)); err == nil {
		s.results[t.Cell.ID] = append(s.results[t.Cell.ID], r)
	}
	s.progressLocked(t, "already stored, skipped")
	s.cellEndedLocked(t)
}

// interrupted notes a trial stopped by a cancellation (or by Ctrl-C
// reaching its process) and stops every lane.
func (s *sweepRun) interrupted(t plan.Trial, ownSignal bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.out.Interrupted {
		s.out.Interrupted = true
		if ownSignal { // the trial's process was signalled, not the sweep
			s.out.TrialInterrupted = fmt.Sprintf("%s trial %d", t.Cell.Label, t.Number)
		}
		s.cancel()
	}
	s.progressLocked(t, "interrupted (not stored)")
}

// ended stores a finished trial and reports it; false when the store
// failed, which stops every lane.
func (s *sweepRun) ended(ctx context.Context, l int, t plan.Trial, spec Spec, run *result.Run, err error, took time.Duration) bool {
	if run == nil { // no result at all: record the failure ourselves
		run = failedRun(spec, err)
	}
	run.Info = spec.Info
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.storeErr != nil {
		return false
	}
	// A Ctrl-C during the store's wait (for another process's lock, or
	// between attempts) gives up at once: the result stays in the trial's
	// result.json, which --resume stores (storeUnstored).
	if _, serr := s.o.Store.SaveRun(ctx, run, s.o.TrialDir(t)); serr != nil {
		s.storeErr = fmt.Errorf("store %s %s trial %d: %w; the trial is not stored, its exports and %s are in %s "+
			"(--resume stores it from there)", s.sw.Name, t.Cell.Label, t.Number, serr, ResultFile, s.o.TrialDir(t))
		s.out.StoreFailed = true
		s.cancel()
		return false
	}
	s.ran++
	s.spent += took
	s.left[l]--
	s.results[t.Cell.ID] = append(s.results[t.Cell.ID], run) // the aggregate lists a failed trial
	if run.Status == result.StatusComplete {
		s.out.Completed++
	} else {
		s.out.Failed++
		s.out.Failures = append(s.out.Failures, fmt.Sprintf("%s trial %d: %s", t.Cell.Label, t.Number, run.Error))
	}
	s.progressLocked(t, fmt.Sprintf("%s (ETA %s)", headline(run), s.etaLocked().Round(time.Second)))
	s.cellEndedLocked(t)
	return true
}

// cellEndedLocked writes the aggregate of t's cell and warns of its
// unverifiable KV-cache resets when t is the cell's last trial.
func (s *sweepRun) cellEndedLocked(t plan.Trial) {
	if s.last[t.Cell.ID] != t.Number {
		return
	}
	runs, trials := s.cellRunsLocked(t.Cell.ID)
	s.o.aggregate(s.sw, t, runs, trials)
	s.o.warnUnverifiable(s.sw, t.Cell, runs)
}

// cellRunsLocked is every ended trial of a cell, those an earlier run
// stored past the plan's trials too, in trial order (lanes end them in any
// order), and how many trials it ran in all: what both the cell's
// aggregate and the sweep aggregate are computed from.
func (s *sweepRun) cellRunsLocked(id string) ([]*result.Run, int) {
	runs := slices.Clone(s.results[id])
	for _, b := range s.beyond[id] {
		if r, err := ReadResult(filepath.Join(s.o.TrialDir(b), ResultFile)); err == nil {
			runs = append(runs, r)
		}
	}
	slices.SortStableFunc(runs, func(a, b *result.Run) int { return cmp.Compare(a.Info.Trial, b.Info.Trial) })
	return runs, s.sw.Trials + len(s.beyond[id]) - s.notRun[id]
}

// sweepAggregate writes AIPerf's sweep aggregate over every cell's trials
// into Options.SweepAggregateDir (none when it is ""); a failure is a
// warning, as a cell's aggregate's.
func (s *sweepRun) sweepAggregate() {
	if s.o.SweepAggregateDir == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var cells []plan.Cell
	var aggs []Aggregate
	for _, c := range s.sw.Cells {
		runs, trials := s.cellRunsLocked(c.ID)
		if len(runs) == 0 {
			continue
		}
		cells = append(cells, c)
		aggs = append(aggs, Aggregates(c, runs, trials, s.o.Confidence))
	}
	sa, ok := SweepAggregates(cells, aggs)
	if !ok {
		s.o.warn("warning: sweep %q: no sweep aggregate: no cell has a successful trial\n", s.sw.Name)
		return
	}
	if err := writeSweepAggregate(s.o.SweepAggregateDir, sa); err != nil {
		s.o.warn("warning: sweep %q: write the sweep aggregate: %v\n", s.sw.Name, err)
		return
	}
	s.o.progress("sweep %s: sweep aggregate in %s\n", s.sw.Name, filepath.Join(s.o.SweepAggregateDir, SweepFile))
}

// etaLocked estimates the time left (see estimate), each trial left
// taking the mean of those run so far plus the cooldown.
func (s *sweepRun) etaLocked() time.Duration {
	var running, queued []int
	for l, started := range s.started {
		switch {
		case !started:
			queued = append(queued, s.left[l])
		case s.left[l] > 0:
			running = append(running, s.left[l])
		}
	}
	return estimate(s.spent/time.Duration(s.ran)+s.cooldown, max(1, s.o.Parallel), running, queued)
}

// estimate is when the last of slots lanes at once would end, each trial
// taking per: the running lanes finish their trials left, and each queued
// lane, in order, goes to the first slot to be free (as sweepRun.take
// hands them out).
func estimate(per time.Duration, slots int, running, queued []int) time.Duration {
	free := make([]time.Duration, max(slots, len(running)))
	for i, n := range running {
		free[i] = time.Duration(n) * per
	}
	for _, n := range queued {
		first := 0
		for i := range free {
			if free[i] < free[first] {
				first = i
			}
		}
		free[first] += time.Duration(n) * per
	}
	return slices.Max(free)
}

func (s *sweepRun) progress(t plan.Trial, what string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.progressLocked(t, what)
}

func (s *sweepRun) progressLocked(t plan.Trial, what string) {
	s.o.progress("[%d/%d] %s %s trial %d: %s\n", s.position[t.Key()], s.out.Total, s.sw.Name, t.Cell.Label, t.Number, what)
}
