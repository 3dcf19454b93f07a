// Package runner executes a plan.Sweep: every trial of every cell runs as its
// own `aiperf profile` process (which does its own KV reset and profiler
// bracketing; the parent sends no control traffic), started by an Executor (a
// local subprocess, or a Kubernetes Job with runner/kube), the parent ingests each
// finished trial into the store in one transaction, and writes a per-cell
// aggregate over the trials.
package runner

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/aiperf-go/aiperf/internal/plan"
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
	TrialDir   func(plan.Trial) string
	CellDir    func(plan.Cell) string
	Name       string  // --name label given to every trial's run (optional)
	Resume     bool    // skip trials the store holds as complete
	Confidence float64 // for the per-cell aggregate
	// Progress receives a line when each trial starts and one when it ends,
	// with its headline metrics and the ETA (nil: none).
	Progress io.Writer
}

// Outcome summarises a sweep run.
type Outcome struct {
	Total, Skipped, Completed, Failed int
	Interrupted                       bool
	Failures                          []string // "cell trial N: error"
}

// ErrTrialsFailed is returned when the sweep finished but some trials failed.
var ErrTrialsFailed = errors.New("some trials failed")

// Run executes every trial in the sweep's order (see plan.Sweep.TrialList), with
// the sweep's cooldowns between consecutive trials. A failed trial is stored
// with its error and the sweep continues. On ctx cancellation the running
// child is interrupted cleanly, nothing partial is stored, and Run returns
// an error wrapping context.Canceled.
func Run(ctx context.Context, sw plan.Sweep, o Options) (Outcome, error) {
	trials := sw.TrialList()
	out := Outcome{Total: len(trials)}
	removeStaleSpecs(trials, o.TrialDir)
	done := map[string]bool{}
	if o.Resume {
		var err error
		if done, err = o.Store.CompletedTrialKeys(ctx, o.SweepID); err != nil {
			return out, fmt.Errorf("read completed trials: %w", err)
		}
	}
	var ran int
	var spent time.Duration
	cooldown := time.Duration(sw.CooldownSeconds * float64(time.Second))
	results := map[string][]*result.Run{} // cell id → ended trials (this run's and resumed ones)
	last := map[string]int{}              // cell id → index of its last trial
	for i, t := range trials {
		last[t.Cell.ID] = i
	}
	variation := make(map[string]int, len(sw.Cells))
	for i, c := range sw.Cells {
		variation[c.ID] = i
	}
	var prev plan.Trial // the last trial run
	for i, t := range trials {
		dir := o.TrialDir(t)
		if done[t.Key()] {
			out.Skipped++
			if r, err := ReadResult(filepath.Join(dir, ResultFile)); err == nil {
				results[t.Cell.ID] = append(results[t.Cell.ID], r)
			}
			o.progress("[%d/%d] %s %s trial %d: already stored, skipped\n", i+1, len(trials), sw.Name, t.Cell.Label, t.Number)
			o.aggregate(sw, t, last[t.Cell.ID] == i, results[t.Cell.ID])
			continue
		}
		if wait := time.Duration(sw.Cooldown(prev, t) * float64(time.Second)); ran > 0 && wait > 0 {
			if !sleep(ctx, wait) {
				break
			}
		}
		prev = t
		start := time.Now()
		spec := Spec{Profile: t.Cell.Profile, Name: o.Name, CLICommand: o.CLICommand, Info: result.TrialInfo{
			Sweep: sw.Name, SweepID: o.SweepID, CellID: t.Cell.ID, CellLabel: t.Cell.Label,
			Params: t.Cell.Params, Trial: t.Number, SweepUUID: o.SweepUUID, Variation: variation[t.Cell.ID],
		}}
		o.progress("[%d/%d] %s %s trial %d: running\n", i+1, len(trials), sw.Name, t.Cell.Label, t.Number)
		run, err := o.Executor.Launch(ctx, spec, dir)
		if ctx.Err() != nil || (run != nil && run.Status == result.StatusInterrupted) {
			out.Interrupted = true
			o.progress("[%d/%d] %s %s trial %d: interrupted (not stored)\n", i+1, len(trials), sw.Name, t.Cell.Label, t.Number)
			break
		}
		ran++
		spent += time.Since(start)
		if run == nil { // no result at all: record the failure ourselves
			run = failedRun(spec, err)
		}
		run.Info = spec.Info
		if _, serr := o.Store.SaveRun(context.WithoutCancel(ctx), run, dir); serr != nil {
			return out, fmt.Errorf("store %s %s trial %d: %w", sw.Name, t.Cell.Label, t.Number, serr)
		}
		results[t.Cell.ID] = append(results[t.Cell.ID], run) // the aggregate lists a failed trial
		if run.Status == result.StatusComplete {
			out.Completed++
		} else {
			out.Failed++
			out.Failures = append(out.Failures, fmt.Sprintf("%s trial %d: %s", t.Cell.Label, t.Number, run.Error))
		}
		eta := (spent/time.Duration(ran) + cooldown) * time.Duration(len(trials)-i-1)
		o.progress("[%d/%d] %s %s trial %d: %s (ETA %s)\n", i+1, len(trials), sw.Name, t.Cell.Label, t.Number,
			headline(run), eta.Round(time.Second))
		o.aggregate(sw, t, last[t.Cell.ID] == i, results[t.Cell.ID])
	}
	switch {
	case out.Interrupted || ctx.Err() != nil:
		out.Interrupted = true
		return out, fmt.Errorf("sweep %q interrupted after %d of %d trials (rerun with --resume to finish): %w",
			sw.Name, out.Completed+out.Failed+out.Skipped, out.Total, context.Canceled)
	case out.Failed > 0:
		return out, fmt.Errorf("%w: %d of %d trials of sweep %q failed", ErrTrialsFailed, out.Failed, out.Total, sw.Name)
	}
	return out, nil
}

// aggregate writes the cell's aggregate over runs when trials[i] is the
// cell's last trial, whether it ran now or was stored by an earlier run.
func (o Options) aggregate(sw plan.Sweep, t plan.Trial, cellDone bool, runs []*result.Run) {
	if o.CellDir == nil || !cellDone {
		return
	}
	if err := writeAggregate(o.CellDir(t.Cell), t.Cell, runs, sw.Trials, o.Confidence); err != nil {
		o.progress("warning: write aggregate for %s: %v\n", t.Cell.Label, err)
	}
}

func (o Options) progress(format string, args ...any) {
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, format, args...)
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
