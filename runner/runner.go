// Package runner executes a plan.Sweep: every trial of every cell runs as its
// own `aiperf profile` process (which does its own KV reset and profiler
// bracketing; the parent sends no control traffic), started by an Executor (a
// local subprocess, or a Kubernetes Job with runner/kube), one at a time or
// several at once on different servers (Lanes); the parent ingests each
// finished trial into the store in one transaction, one trial at a time,
// and writes a per-cell aggregate over the trials and, once every trial
// ended, AIPerf's sweep aggregate over the cells (Options.SweepAggregateDir).
package runner

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/report"
	"github.com/aiperf-go/aiperf/internal/result"
)

// Store is what the runner needs from the run store.
type Store interface {
	SaveRun(ctx context.Context, run *result.Run, artifactDir string) (int64, error)
	CompletedTrialKeys(ctx context.Context, sweepID int64) (map[string]bool, error)
}

// Options configure a sweep run.
type Options struct {
	Executor Executor // where trials run: Local, or runner/kube's Jobs
	Store    Store
	SweepID  int64
	// SweepUUID identifies this invocation in every trial's exports
	// (AIPerf's run_info.sweep_id; see NewSweepUUID).
	SweepUUID string
	// CLICommand is the user's command line, redacted, exported by every
	// trial as run_info.cli_command.
	CLICommand string
	// TrialDir and CellDir place artifacts (absolute or relative to the
	// working directory).
	TrialDir func(plan.Trial) string
	CellDir  func(plan.Cell) string
	Name     string // --name label given to every trial's run (optional)
	Resume   bool   // skip trials the store holds as complete
	// Discarded says the store is dropped at exit (profile --no-store): an
	// interrupted sweep cannot be resumed, and its message says so.
	Discarded  bool
	Confidence float64 // for the per-cell aggregate
	// Progress receives a line when each trial starts and one when it ends,
	// with its headline metrics and the ETA (nil: none).
	Progress io.Writer
	// Warnings receives a line for each cell whose trials' KV-cache resets
	// could not be verified (nil: Progress).
	Warnings io.Writer
	// Parallel is how many server lanes may run at once (see Lanes); 0 or
	// 1 runs one trial at a time in plan order.
	Parallel int
	// SweepAggregateDir is where AIPerf's sweep aggregate
	// (profile_export_aiperf_sweep.json and .csv) is written once every
	// trial has ended ("": none; see SweepAggregates).
	SweepAggregateDir string
}

// Outcome summarises a sweep run.
type Outcome struct {
	Total, Skipped, Completed, Failed int
	// Converged counts the trials not run because their cell had converged
	// (plan.Sweep.Convergence).
	Converged int
	// ConvergedCells says, per cell that converged, after how many trials
	// and on what.
	ConvergedCells []string
	// Unconverged says, per cell that ran all its trials without its
	// criterion holding, why (its last judgement, on every trial).
	Unconverged []string
	Interrupted bool
	// TrialInterrupted names the trial ("cell trial N") whose own process
	// was interrupted while the sweep was not: that stops the sweep too.
	TrialInterrupted string
	// StoreFailed says a trial's result could not be stored, which stopped
	// the sweep (Run's error says which and where its result is kept).
	StoreFailed bool
	Failures    []string // "cell trial N: error"
}

// ErrTrialsFailed is returned when the sweep finished but some trials failed.
var ErrTrialsFailed = errors.New("some trials failed")

// Run executes every trial of the sweep: one at a time in the sweep's order
// (see plan.Sweep.TrialList), or with Parallel > 1 up to Parallel server
// lanes at once (see Lanes), each lane's trials one at a time in plan
// order, with the sweep's cooldowns between a lane's consecutive trials.
// Each trial is stored as it ends (one at a time), a failed trial with its
// error, and the sweep continues. On ctx cancellation every running trial
// is stopped (its child interrupted cleanly, its Job deleted), nothing
// partial is stored, and Run returns an error wrapping context.Canceled.
// With Resume, the trials stored complete are skipped and stay in their
// cells' aggregates, those past sw.Trials too (a resume with fewer trials);
// one whose result.json is not where o.TrialDir puts it (a resume into
// another --artifact-dir) refuses the run before any trial (CheckResume).
func Run(ctx context.Context, sw plan.Sweep, o Options) (Outcome, error) {
	trials := sw.TrialList()
	removeStaleSpecs(trials, o.TrialDir)
	done := map[string]bool{}
	if o.Resume {
		var err error
		if done, err = o.Store.CompletedTrialKeys(ctx, o.SweepID); err != nil {
			return Outcome{Total: len(trials)}, fmt.Errorf("read completed trials: %w", err)
		}
		if err := checkStored(ctx, sw, o, done); err != nil {
			return Outcome{Total: len(trials)}, err
		}
	}
	lanes, ids, notes := lanesFor(ctx, sw, o.Parallel, lookupHost)
	for _, n := range notes {
		o.warn("note: sweep %q --parallel %d: %s\n", sw.Name, o.Parallel, n)
	}
	if o.Parallel > 1 && len(sw.Lanes()) > 1 && len(lanes) <= 1 {
		o.warn("note: sweep %q --parallel %d: every cell loads one server, so its trials run one at a time\n", sw.Name, o.Parallel)
	}
	s := newSweepRun(sw, o, lanes, trials, done)
	s.ids = ids
	s.keepBeyond(done)
	out, storeErr := s.run(ctx)
	if storeErr == nil && !out.Interrupted && ctx.Err() == nil {
		s.sweepAggregate()
	}
	switch {
	case storeErr != nil:
		return out, storeErr
	case out.Interrupted || ctx.Err() != nil:
		out.Interrupted = true
		ended := fmt.Sprintf("%d of %d trials", out.Completed+out.Failed+out.Skipped, out.Total)
		if out.Converged > 0 {
			ended += fmt.Sprintf(", %d more not needed (their cells converged)", out.Converged)
		}
		msg := fmt.Sprintf("sweep %q interrupted after %s (%s)", sw.Name, ended, resumeHint(o.Discarded, "rerun with --resume to finish"))
		if ctx.Err() == nil && out.TrialInterrupted != "" {
			msg += ": " + out.TrialInterrupted + " was interrupted by a signal to its own process, not to the sweep"
		}
		return out, &interrupted{msg: msg, cause: context.Cause(ctx)}
	case out.Failed > 0:
		return out, fmt.Errorf("%w: %d of %d trials of sweep %q failed", ErrTrialsFailed, out.Failed, out.Total, sw.Name)
	}
	return out, nil
}

// interrupted is the error of a sweep stopped by a cancellation: it is
// context.Canceled, and its message says how far the sweep got and what
// stopped it when the cause names something (a signal), never a bare
// "context canceled".
type interrupted struct {
	msg   string
	cause error // ctx's cause; nil when only a trial was interrupted
}

// resumeHint is what an interrupted run's message advises: resume, or,
// when its store is discarded at exit, nothing kept to resume.
func resumeHint(discarded bool, resume string) string {
	if discarded {
		return "--no-store kept nothing to resume"
	}
	return resume
}

func (e *interrupted) Error() string {
	if e.cause == nil || e.cause == context.Canceled {
		return e.msg
	}
	return e.msg + ": " + e.cause.Error()
}

// Unwrap returns the cause, which is context.Canceled.
func (e *interrupted) Unwrap() error {
	if e.cause == nil {
		return context.Canceled
	}
	return e.cause
}

// aggregate writes the aggregate of t's cell over runs (in trial order),
// trials in all (called when t is the cell's last trial, whether it ran now or was stored
// by an earlier run).
func (o Options) aggregate(sw plan.Sweep, t plan.Trial, runs []*result.Run, trials int) {
	if o.CellDir == nil {
		return
	}
	trialDir := func(n int) string { return o.TrialDir(plan.Trial{Sweep: t.Sweep, Cell: t.Cell, Number: n}) }
	if o.TrialDir == nil {
		trialDir = nil
	}
	if err := writeAggregate(o.CellDir(t.Cell), t.Cell, runs, trials, o.Confidence, trialDir, sw.CooldownSeconds); err != nil {
		o.progress("warning: write aggregate for %s: %v\n", t.Cell.Label, err)
	}
}

// progress prints a line, fitted to the terminal's width (report.Fit).
func (o Options) progress(format string, args ...any) {
	if o.Progress != nil {
		line := strings.TrimSuffix(fmt.Sprintf(format, args...), "\n")
		fmt.Fprintln(o.Progress, report.Fit(o.Progress, line))
	}
}

// warn prints a line on Warnings (or Progress when nil).
func (o Options) warn(format string, args ...any) {
	w := o.Warnings
	if w == nil {
		w = o.Progress
	}
	if w != nil {
		fmt.Fprintf(w, format, args...)
	}
}

// headline is the one-line summary of a finished trial.
func headline(run *result.Run) string {
	if run.Status != result.StatusComplete {
		return "FAILED: " + run.Error
	}
	s := "complete"
	if m, ok := run.Profiling.Get("request_throughput"); ok {
		s += fmt.Sprintf(", %.1f req/s", m.Value)
	}
	if m, ok := run.Profiling.Get("time_to_first_token"); ok && m.Stats != nil {
		s += fmt.Sprintf(", TTFT p99 %.1f ms", m.Stats.P99)
	}
	if m, ok := run.Profiling.Get("request_latency"); ok && m.Stats != nil {
		s += fmt.Sprintf(", latency p99 %.1f ms", m.Stats.P99)
	}
	if m, ok := run.Profiling.Get("error_request_count"); ok && m.Value > 0 {
		s += fmt.Sprintf(", %.0f errors", m.Value)
	}
	if run.Audit.ClientBound {
		s += ", CLIENT-BOUND"
	}
	if run.Audit.KVReset == result.ResetNotCleared {
		s += ", KV cache NOT cleared by the reset"
	}
	if flags := result.HookFlags(run.Audit.Warnings); len(flags) > 0 {
		s += ", warning: " + strings.Join(flags, ", ")
	}
	return s
}

// failedRun records a trial that left no result behind.
func failedRun(spec Spec, err error) *result.Run {
	if err == nil {
		err = errors.New("trial produced no result")
	}
	host, _ := os.Hostname()
	now := time.Now()
	return &result.Run{
		Config: spec.Profile.Redacted(), Info: spec.Info, Name: spec.Name, Host: host,
		StartTime: now, EndTime: now, Status: result.StatusFailed, Error: err.Error(),
	}
}

// seconds converts a duration in seconds to a time.Duration without
// overflow: at most the longest Duration (about 292 years), 0 for a value
// that is not above 0 (NaN included). A cooldown is checked before it gets
// here (plan.CheckSeconds); this keeps one that was not from wrapping around
// to a negative Duration, which would mean no pause at all.
func seconds(x float64) time.Duration {
	switch {
	case !(x > 0):
		return 0
	case x >= float64(math.MaxInt64)/float64(time.Second):
		return math.MaxInt64
	}
	return time.Duration(x * float64(time.Second))
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// NewSweepUUID returns a random (version 4) UUID: the sweep_id AIPerf puts in
// the run_info of every trial of one sweep or multi-run invocation.
func NewSweepUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
