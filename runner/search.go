package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/report"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/search"
)

// Files of a search's artifact directory, as AIPerf names them.
const (
	HistoryFile  = "search_history.json"
	AggregateDir = "sweep_aggregate"
)

// SearchStore is what a search needs from the run store: a sweep's, plus
// its probes and history (store.DB has them).
type SearchStore interface {
	Store
	AddSearchProbe(ctx context.Context, sweepID int64, cell plan.Cell, point []float64, why string) error
	SearchHistory(ctx context.Context, sweepID int64, keys []string) (search.History, error)
	SaveSearchHistory(ctx context.Context, sweepID int64, doc search.HistoryDoc, answer string) error
}

// SearchOptions configure a search run.
type SearchOptions struct {
	Executor Executor
	Store    SearchStore
	SweepID  int64 // the search's sweep in the store (kind search)
	// SweepUUID and CLICommand are exported by every trial, as a sweep's.
	SweepUUID  string
	CLICommand string
	Name       string  // --name label given to every trial's run (optional)
	Confidence float64 // of each probe's aggregate over its trials
	// Dir is the search's artifact directory: search_history.json,
	// search_iter_NNNN/profile_runs/run_NNNN/ and sweep_aggregate/.
	Dir string
	// Discarded says the store is dropped at exit (profile --no-store), as
	// Options.Discarded.
	Discarded bool
	// Progress receives a line per probe (its point and why, then its
	// verdict), each trial's lines and why the search stopped (nil: none).
	Progress io.Writer
}

// SearchOutcome summarises a search run. Skipped counts the trials an
// earlier run of the search stored, which this one replayed.
type SearchOutcome struct {
	Outcome
	Reason  string // the convergence reason; "" unless the search stopped on its own
	Summary search.Summary
	History search.History
}

// Search runs search s: from what the store holds of it (nothing for a new
// search), it asks the planner for the next step, runs its trials as cells
// of the sweep runner (each its own process with its own KV reset and
// profiler bracket, stored as it ends), reads the stored results back and
// asks again, until the planner stops. search_history.json is rewritten
// after every trial, and the recipe's post-process file is written at the
// end. What the planner sees is what the store holds, so a search resumed
// after Ctrl-C or a crash replays the stored trials and continues with the
// first trial not yet run: nothing is run twice, and the same seed reaches
// the same answer. The stored probes must be the ones this search proposes
// (same config, seed and planner) and every trial they ran still stored,
// else Search refuses before any trial (CheckSearchResume, ErrRefused).
func Search(ctx context.Context, s plan.Search, o SearchOptions) (SearchOutcome, error) {
	var out SearchOutcome
	srch, err := s.New()
	if err != nil {
		return out, fmt.Errorf("search %q: %w", s.Name, err)
	}
	if err := plan.CheckSeconds("cooldown_seconds", s.CooldownSeconds, true); err != nil {
		return out, fmt.Errorf("search %q: %w (nothing was sent)", s.Name, err)
	}
	keys := srch.Config().Keys()
	h, err := o.Store.SearchHistory(ctx, o.SweepID, keys)
	if err != nil {
		return out, err
	}
	if err := checkSearchStored(ctx, s, srch, h, o); err != nil {
		return out, err
	}
	removeStaleSearchSpecs(o.Dir)
	r := &searchRun{s: s, srch: srch, o: o, keys: keys, h: h}
	out.Skipped = h.TrialsSpent()
	runErr := r.loop(ctx, &out)
	if ctx.Err() != nil && errors.Is(runErr, context.Canceled) { // a planner stopped by Ctrl-C
		out.Interrupted, runErr = true, nil
	}
	out.History = r.h
	out.Summary = srch.Summarize(r.h)
	if err := r.writeHistory(context.WithoutCancel(ctx), out.Reason); err != nil {
		runErr = errors.Join(runErr, err)
	}
	switch {
	case runErr != nil:
		return out, runErr
	case out.Interrupted || ctx.Err() != nil:
		out.Interrupted = true
		return out, &interrupted{msg: fmt.Sprintf("search %q interrupted after %s (%s)", s.Name, plural(r.h.TrialsSpent(), "trial"),
			resumeHint(o.Discarded, "rerun with --resume to continue it")), cause: context.Cause(ctx)}
	}
	r.postProcess()
	if out.Failed > 0 {
		return out, fmt.Errorf("%w: %d of the %d trials search %q ran failed", ErrTrialsFailed, out.Failed, out.Completed+out.Failed, s.Name)
	}
	return out, nil
}

// ReasonUndriven is the convergence reason of a search stopped before a
// probe it could not drive (its concurrency above the requests it sends);
// before its first one, Search fails with ErrNothingDriven.
const ReasonUndriven = "undriven_load"

// ReasonUnmeasured is the convergence reason of a search stopped at a probe
// whose trials all failed: nothing there says where the SLA holds, and a
// planner reading it as a failure would settle on a false boundary.
const ReasonUnmeasured = "unmeasured_probe"

// searchRun is one Search: the history so far, as the store holds it.
type searchRun struct {
	s    plan.Search
	srch *search.Search
	o    SearchOptions
	keys []string
	h    search.History
}

// loop runs steps until the planner stops (out.Reason), a trial is
// interrupted, the store or the planner fails, or the first probe cannot be
// driven (ErrNothingDriven).
func (r *searchRun) loop(ctx context.Context, out *SearchOutcome) error {
	cooldown := seconds(r.s.CooldownSeconds)
	for first := true; ; first = false {
		step, err := r.srch.Next(r.h)
		if err != nil {
			return searchErr(r.s.Name, err)
		}
		if step.Stop {
			out.Reason = step.Reason
			r.progress("search %s: stopped (%s): %s\n", r.s.Name, step.Reason, step.Why)
			return nil
		}
		cell, err := r.s.Cell(step.Probe, step.Point)
		if err != nil {
			return err
		}
		if _, why := plan.Undriven(cell.Profile.PhaseList()); why != "" {
			out.Reason = ReasonUndriven
			if len(r.h.Probes) == 0 { // nothing measured: no answer, a failure whatever the UI shows
				return fmt.Errorf("search %q: %w: it stopped (%s) before its first probe, %s, which cannot be driven: %s; "+
					"give a --request-count of at least the loads searched, or a --benchmark-duration",
					r.s.Name, ErrNothingDriven, out.Reason, r.point(step.Point), why)
			}
			r.progress("search %s: stopped (%s): the next probe, %s, cannot be driven: %s; the answer stops below it "+
				"(give a --request-count of at least the load searched, or a --benchmark-duration)\n", r.s.Name, out.Reason, r.point(step.Point), why)
			r.stopUndriven(step.Point, cell)
			return nil
		}
		if step.Probe == len(r.h.Probes) {
			if err := r.o.Store.AddSearchProbe(context.WithoutCancel(ctx), r.o.SweepID, cell, step.Point, step.Why); err != nil {
				return err
			}
			r.h.Probes = append(r.h.Probes, search.Probe{Point: step.Point})
			r.progress("search %s probe %d: %s (%s)\n", r.s.Name, step.Probe, r.point(step.Point), step.Why)
		} else {
			r.progress("search %s probe %d: %s more (%s)\n", r.s.Name, step.Probe, plural(step.Trials, "trial"), step.Why)
		}
		if !first && cooldown > 0 && !sleep(ctx, cooldown) {
			out.Interrupted = true
			return nil
		}
		trials := make([]plan.Trial, step.Trials)
		for k := range trials {
			trials[k] = plan.Trial{Sweep: r.s.Name, Cell: cell, Number: len(r.h.Probes[step.Probe].Trials) + k + 1}
		}
		ran, storeErr := r.runTrials(ctx, trials)
		out.Completed, out.Failed = out.Completed+ran.Completed, out.Failed+ran.Failed
		out.Failures = append(out.Failures, ran.Failures...)
		if storeErr != nil {
			return storeErr
		}
		if r.h, err = r.o.Store.SearchHistory(context.WithoutCancel(ctx), r.o.SweepID, r.keys); err != nil {
			return err
		}
		if err := r.writeHistory(context.WithoutCancel(ctx), ""); err != nil {
			return err
		}
		r.aggregate(cell)
		if ran.Interrupted || ctx.Err() != nil {
			out.Interrupted = true
			return nil
		}
		if r.verdict(step.Probe) == search.Unmeasured {
			out.Reason = ReasonUnmeasured
			r.progress("search %s: stopped (%s): every trial of probe %d, %s, failed, so it says nothing of the SLA; "+
				"the answer stops there (see the failures below; once the server is fixed, --resume goes on)\n",
				r.s.Name, out.Reason, step.Probe, r.point(step.Point))
			return nil
		}
	}
}

// runTrials runs one step's trials, one after another, as a lane of the
// sweep runner: each stored as it ends, a failed one with its error.
func (r *searchRun) runTrials(ctx context.Context, trials []plan.Trial) (Outcome, error) {
	o := Options{Executor: r.o.Executor, Store: r.o.Store, SweepID: r.o.SweepID, SweepUUID: r.o.SweepUUID,
		CLICommand: r.o.CLICommand, Name: r.o.Name, Confidence: r.o.Confidence, Progress: r.o.Progress,
		TrialDir: func(t plan.Trial) string { return filepath.Join(r.o.Dir, search.TrialDir(t.Cell.Index, t.Number)) }}
	sw := plan.Sweep{Name: r.s.Name, Cells: []plan.Cell{trials[0].Cell}, Trials: len(trials), CooldownSeconds: r.s.CooldownSeconds}
	s := newSweepRun(sw, o, []plan.Lane{{Trials: trials}}, trials, nil)
	out, err := s.run(ctx)
	if ctx.Err() != nil {
		out.Interrupted = true
	}
	return out, err
}

// writeHistory writes search_history.json and stores it with the answer.
func (r *searchRun) writeHistory(ctx context.Context, reason string) error {
	doc := r.srch.Document(r.h, reason)
	if err := report.WriteJSONFile(filepath.Join(r.o.Dir, HistoryFile), doc); err != nil {
		return fmt.Errorf("search %q: write %s: %w", r.s.Name, HistoryFile, err)
	}
	return r.o.Store.SaveSearchHistory(ctx, r.o.SweepID, doc, r.srch.Summarize(r.h).String())
}

// aggregate writes a probe's aggregate over its trials, once it has two
// or more, beside them: search_iter_NNNN/aggregate/.
func (r *searchRun) aggregate(cell plan.Cell) {
	n := len(r.h.Probes[cell.Index].Trials)
	if n < 2 {
		return
	}
	runs := make([]*result.Run, 0, n)
	for k := 1; k <= n; k++ {
		run, err := ReadResult(filepath.Join(r.o.Dir, search.TrialDir(cell.Index, k), ResultFile))
		if err != nil {
			run = &result.Run{Status: result.StatusFailed, Error: "trial produced no result", Info: result.TrialInfo{Trial: k}}
		}
		runs = append(runs, run)
	}
	dir := filepath.Join(r.o.Dir, filepath.Dir(filepath.Dir(search.TrialDir(cell.Index, 1))), "aggregate")
	trialDir := func(k int) string { return filepath.Join(r.o.Dir, search.TrialDir(cell.Index, k)) }
	if err := writeAggregate(dir, cell, runs, n, r.o.Confidence, trialDir, r.s.CooldownSeconds); err != nil {
		r.progress("warning: write the aggregate of %s: %v\n", cell.Label, err)
	}
}

// verdict prints a probe's verdict once it has all the trials it takes,
// and returns its outcome (Pending while it takes more).
func (r *searchRun) verdict(probe int) search.Outcome {
	c := r.srch.Config()
	if k, _ := c.Trials.More(r.h.Probes[probe], c.Filters); k > 0 {
		return search.Pending
	}
	o := r.srch.Observe(r.h)[probe]
	r.progress("search %s probe %d: %s: %s\n", r.s.Name, probe, r.point(o.Point), describeObservation(o, c))
	return o.Verdict.Outcome
}

// describeObservation is a probe's verdict in one line, e.g. "fail (98.1%):
// time_to_first_token:p99:lt:80 at 164.2; output_token_throughput.avg 412.5
// after 3 trials".
func describeObservation(o search.Observation, c search.Config) string {
	v := o.Verdict
	var s string
	switch {
	case v.Outcome == search.Unmeasured:
		s = "unmeasured (every trial failed)"
	case len(c.Filters) == 0:
		s = "measured"
	case math.IsNaN(v.Confidence):
		s = string(v.Outcome)
	default:
		s = fmt.Sprintf("%s (%.1f%%)", v.Outcome, 100*v.Confidence)
	}
	var parts []string
	for _, f := range v.Filters {
		switch {
		case v.Breach != nil && f.Filter != v.Breach.Filter:
		case math.IsNaN(f.Mean):
			parts = append(parts, fmt.Sprintf("%s not measured", f.Filter))
		default:
			parts = append(parts, fmt.Sprintf("%s at %.4g", f.Filter, f.Mean))
		}
	}
	if c.Objective.Metric != "" && !math.IsNaN(o.Objective) {
		parts = append(parts, fmt.Sprintf("%s %.4g", c.Objective.Key(), o.Objective))
	}
	if len(parts) > 0 {
		s += ": " + strings.Join(parts, "; ")
	}
	return s + " after " + plural(o.Trials, "trial")
}

// postProcess writes the recipe's sweep_aggregate/ file; a failure is a
// warning (the search's results are stored and its history written).
func (r *searchRun) postProcess() {
	if r.s.Recipe == nil {
		return
	}
	name, doc, err := r.s.Recipe.Aggregate(r.h)
	if err == nil && name != "" {
		path := filepath.Join(r.o.Dir, AggregateDir, name)
		if err = report.WriteJSONFile(path, doc); err == nil {
			r.progress("search %s: %s\n", r.s.Name, path)
		}
	}
	if err != nil {
		r.progress("warning: search %s: %v\n", r.s.Name, err)
	}
}

// point renders a point as its options, e.g. "concurrency 16".
func (r *searchRun) point(pt search.Point) string { return pointText(r.s, pt) }

// progress prints a line, fitted to the terminal's width (report.Fit), as
// a sweep's progress is.
func (r *searchRun) progress(format string, args ...any) {
	if r.o.Progress != nil {
		line := strings.TrimSuffix(fmt.Sprintf(format, args...), "\n")
		fmt.Fprintln(r.o.Progress, report.Fit(r.o.Progress, line))
	}
}

// searchErr is err of search name, prefixed with the name unless it
// already says it (a Starlark planner's error names its search at its
// line).
func searchErr(name string, err error) error {
	if strings.Contains(err.Error(), fmt.Sprintf("search %q", name)) {
		return err
	}
	return fmt.Errorf("search %q: %w", name, err)
}

// removeStaleSearchSpecs removes the trial specs a killed run left under
// the search's directory (see removeStaleSpecs).
func removeStaleSearchSpecs(dir string) {
	specs, _ := filepath.Glob(filepath.Join(dir, "search_iter_*", "profile_runs", "run_*", SpecFile))
	for _, f := range specs {
		_ = os.Remove(f)
	}
}

// plural is "1 trial", "2 trials", ...
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
