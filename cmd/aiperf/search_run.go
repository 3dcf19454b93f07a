package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/aiperf-go/aiperf/internal/compare"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/report"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/runner"
	"github.com/aiperf-go/aiperf/store"
)

// searchOptions are how runSearch runs a search.
type searchOptions struct {
	dir        string // the search's artifact directory
	confidence float64
	ui         string
	resume     bool
	script     string
	vars       map[string]string
	name       string // --name of every trial
	cliCommand string // redacted, exported by every trial
	executor   runner.Executor
	workers    int
	workerArgs []string // the flags of the workers' deadlines
	// overwrite lets a new search replace an earlier one's artifacts in dir
	// (aiperf profile, which overwrites its artifact directory); without it
	// a new search refuses a directory that holds one.
	overwrite bool
}

// runSearch records the search in the store (a sweep of kind search, or
// the one --resume continues), runs it (runner.Search), and prints its
// answer and its probes' table. Exit codes as runSweep's.
func runSearch(ctx context.Context, g *Globals, s plan.Search, o searchOptions) error {
	db, err := openStoreToWrite(ctx, g.Store, otherStoreNothing)
	if err != nil {
		return err
	}
	defer db.Close()
	db.Retry = retryOn(g.Stderr)
	release, id, resumed, err := beginRun(ctx, g, db, store.SweepClaim{Name: s.Name, PlanSHA256: s.Digest(), ArtifactDir: o.dir}, o.resume)
	if err != nil {
		return err
	}
	defer release()
	if !resumed {
		if err := clearEarlierSearch(g, s, o); err != nil {
			return err
		}
		id, err = db.BeginSweep(ctx, store.SweepMeta{Name: s.Name, ScriptPath: o.script, PlanSHA256: s.Digest(),
			Vars: redactVars(o.vars, s.Base.Redactor()), Trials: max(1, s.Config.Trials.Min), Kind: store.KindSearch})
	} else if err = refusedResume(runner.CheckSearchResume(ctx, s, runner.SearchOptions{Store: db, SweepID: id, Dir: o.dir})); err == nil {
		err = db.ReopenSweep(ctx, id, max(1, s.Config.Trials.Min)) // a search that cannot go on from what the store holds is refused first, untouched
	}
	if err != nil {
		return err
	}
	if o.resume && !resumed {
		fmt.Fprintf(g.Stderr, "note: --resume found no search %q with this configuration in %s to continue (the script, a loaded module, "+
			"a flag or a --set value changed, or it never ran): nothing was resumed; a new search (#%d) starts\n", s.Name, g.Store, id)
	}
	if o.executor == nil {
		if o.executor, err = localExecutor(o.workers, o.workerArgs); err != nil {
			return err
		}
	}
	opts := runner.SearchOptions{Executor: o.executor, Store: db, SweepID: id, SweepUUID: runner.NewSweepUUID(),
		CLICommand: o.cliCommand, Name: o.name, Confidence: o.confidence, Dir: o.dir, Discarded: g.scratch}
	if o.ui != "none" {
		opts.Progress = g.Stderr
		fmt.Fprintln(g.Stderr, report.Fit(g.Stderr, fmt.Sprintf("search %q (#%d): %s; artifacts under %s, store %s",
			s.Name, id, s.Describe(), o.dir, g.storeName())))
	}
	parent := searchParent(ctx, g, &s) // after the digest: where results also go is no part of it
	out, runErr := runner.Search(ctx, s, opts)
	status := result.StatusComplete
	switch {
	case out.Interrupted:
		status = result.StatusInterrupted
	case runErr != nil:
		status = result.StatusFailed
	}
	endParent(ctx, g, parent, status)
	if err := db.FinishSweep(context.WithoutCancel(ctx), id, status); err != nil {
		return errors.Join(runErr, err)
	}
	if out.Completed+out.Failed+out.Skipped > 0 {
		fmt.Fprintln(g.Stdout)
		if err := printSweepTable(context.WithoutCancel(ctx), g, db, fmt.Sprint(id), o.confidence, searchKeys(s)...); err != nil {
			fmt.Fprintf(g.Stderr, "warning: render the search's table: %v\n", err)
		}
		fmt.Fprintln(g.Stdout, report.Fit(g.Stdout, fmt.Sprintf("search %s: %s", s.Name, out.Summary)))
		fmt.Fprintf(g.Stdout, "History: %s\n", filepath.Join(o.dir, runner.HistoryFile))
	}
	for _, f := range out.Failures {
		fmt.Fprintf(g.Stderr, "failed: %s\n", f)
	}
	switch {
	case errors.Is(runErr, runner.ErrTrialsFailed):
		return withCode(ExitSomeFailed, runErr)
	case out.Interrupted && o.script != "":
		return fmt.Errorf("%w (rerun with --resume to continue it: its stored trials are not run again)", runErr)
	}
	return runErr
}

// searchKeys are the statistics a search judges its probes by, its SLA
// filters', its objective's and its post-process's, the columns of its
// probes' table (nil, the default view, when it has none or one is not a
// stored statistic).
func searchKeys(s plan.Search) []compare.Key {
	var specs []string
	for _, f := range s.Config.Filters {
		specs = append(specs, f.Key())
	}
	if s.Config.Objective.Metric != "" {
		specs = append(specs, s.Config.Objective.Key())
	}
	keys, err := compare.ParseKeys(append(specs, s.Config.Extra...))
	if err != nil {
		return nil
	}
	return keys
}

// beginRun claims a sweep or search and its artifact directory for this
// process (two processes never run one at once) and, with resume, finds
// the stored run it continues (resumed false: none); release ends the
// claim.
func beginRun(ctx context.Context, g *Globals, db *store.DB, claim store.SweepClaim, resume bool) (release func(), id int64, resumed bool, err error) {
	lock, err := db.LockSweep(ctx, claim)
	var le *store.LockedError
	if errors.As(err, &le) {
		return nil, 0, false, usageErr(fmt.Errorf("%w (nothing was sent)", err))
	}
	if err != nil {
		return nil, 0, false, err
	}
	for _, owner := range lock.TookOver {
		fmt.Fprintf(g.Stderr, "note: %s was claimed by pid %d on this host since %s, which is no longer running: taking it over\n",
			owner.What, owner.PID, owner.Since.Local().Format("2006-01-02 15:04:05"))
	}
	release = func() {
		if err := lock.Release(context.WithoutCancel(ctx)); err != nil {
			fmt.Fprintf(g.Stderr, "warning: %v\n", err)
		}
	}
	if resume {
		if id, resumed, err = db.FindResumableSweep(ctx, claim.Name, claim.PlanSHA256); err != nil {
			release()
			return nil, 0, false, err
		}
	}
	return release, id, resumed, nil
}

// localExecutor runs trials as subprocesses of this binary, each sending
// its load from workers processes.
func localExecutor(workers int, workerArgs []string) (runner.Executor, error) {
	self, err := executable()
	if err != nil {
		return nil, fmt.Errorf("find the aiperf executable for trial subprocesses: %w", err)
	}
	return runner.Local{Binary: self, Workers: workers, WorkerArgs: workerArgs}, nil
}

// clearEarlierSearch makes room for a new search in o.dir: an earlier
// search's artifacts (its history, iterations and aggregates) are removed
// when o.overwrite, and refused otherwise.
func clearEarlierSearch(g *Globals, s plan.Search, o searchOptions) error {
	found, _ := filepath.Glob(filepath.Join(o.dir, "search_iter_*"))
	for _, f := range []string{runner.HistoryFile, runner.AggregateDir} {
		if _, err := os.Stat(filepath.Join(o.dir, f)); err == nil {
			found = append(found, filepath.Join(o.dir, f))
		}
	}
	if len(found) == 0 {
		return nil
	}
	if !o.overwrite {
		how := "--resume continues it (same script and --set values)"
		if o.resume {
			how = "--resume found no search " + fmt.Sprintf("%q", s.Name) + " with this configuration in " + g.Store + " to continue"
		}
		return usageErr(fmt.Errorf("search %q: %s holds an earlier search's artifacts, which a new search would overwrite; nothing was sent: "+
			"%s, --artifact-dir DIR writes elsewhere, or remove the directory", s.Name, o.dir, how))
	}
	for _, f := range found {
		if err := os.RemoveAll(f); err != nil {
			return fmt.Errorf("remove the earlier search's %s: %w", f, err)
		}
	}
	fmt.Fprintf(g.Stderr, "note: removed the earlier search's artifacts in %s (the store keeps its runs)\n", o.dir)
	return nil
}

// redactVars is vars with rd's secrets (an API key given as --set key=...)
// replaced, so the store never holds one.
func redactVars(vars map[string]string, rd *plan.Redactor) map[string]string {
	if vars == nil {
		return nil
	}
	out := make(map[string]string, len(vars))
	for k, v := range vars {
		out[k] = rd.Redact(v)
	}
	return out
}

// maybeSearch runs the search the profile command line asks for (done
// false when it asks for none): every probe a trial subprocess, stored,
// in the artifact directory as AIPerf lays a search out.
func (c *ProfileCmd) maybeSearch(ctx context.Context, g *Globals, spec runner.Spec, dir string) (bool, error) {
	s, ok, err := c.SearchArgs.Search(searchInput{name: cmp.Or(c.Name, c.SearchRecipe, "search"), base: spec.Profile, trials: c.NumProfileRuns,
		confidence: c.ConfidenceLevel, lists: g.sweepLists, cooldown: c.ProfileRunCooldownSeconds})
	switch {
	case err != nil:
		return true, usageErr(err)
	case !ok:
		return false, nil
	case len(c.yamlCells) > 0:
		return true, usageErr(errors.New("a config file's sweep: and a search cannot be combined: the search chooses its own points"))
	}
	corners, err := s.Corners()
	if err == nil {
		err = checkWorkers(c.Workers, corners[0].Profile, corners[1].Profile)
	}
	if err != nil {
		return true, usageErr(fmt.Errorf("search %q: %w", s.Name, err))
	}
	return true, runSearch(ctx, g, s, searchOptions{dir: dir, confidence: c.ConfidenceLevel, ui: c.UI, name: c.Name,
		cliCommand: redactedCommand(g.Args, spec.Profile.URL, spec.Profile.Redactor()), workers: c.Workers, workerArgs: c.WorkerDeadlines.args(), overwrite: true,
		resume: c.Resume})
}
