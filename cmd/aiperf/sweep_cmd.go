package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aiperf-go/aiperf/internal/dataset"
	"github.com/aiperf-go/aiperf/internal/mlflow"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/plot"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/runner"
	"github.com/aiperf-go/aiperf/starlark"
	"github.com/aiperf-go/aiperf/store"
)

// ScriptArgs are the flags shared by `plan` and `sweep`. The command that
// embeds them sets only_verb, the verb of --only's help (Show, Run).
type ScriptArgs struct {
	Script string            `arg:"" type:"existingfile" help:"Starlark sweep script (.star)."`
	Set    map[string]string `name:"set" placeholder:"KEY=VALUE" help:"Script variable, read with vars.get(KEY) (repeatable)."`
	Only   []string          `name:"only" placeholder:"NAME" help:"${only_verb} only the sweeps and searches with this name (repeatable)."`

	// The sandbox and the size limit of the plan (see starlark.Options).
	LibPaths  []string `name:"lib-path" type:"existingdir" sep:"none" placeholder:"DIR" help:"Let load() also read modules under DIR (repeatable); by default only the script's own directory tree."`
	MaxTrials int      `name:"max-trials" default:"100000" placeholder:"N" help:"Refuse a plan of more trials (cells × trials, summed over the script's sweeps; default ${default})."`

	searches []plan.Search // the script's searches --only selects
}

// load runs the script and keeps the sweeps --only selects, in script
// order; the searches it selects are kept in a.searches. The input files
// of what is kept are read before anything runs (checkInputFiles).
func (a *ScriptArgs) load(ctx context.Context) ([]plan.Sweep, error) {
	sweeps, err := a.selected(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkInputFiles(sweeps, a.searches); err != nil {
		return nil, usageErr(err)
	}
	return sweeps, nil
}

// selected runs the script and keeps what --only selects.
func (a *ScriptArgs) selected(ctx context.Context) ([]plan.Sweep, error) {
	if a.MaxTrials < 1 {
		return nil, usageErr(fmt.Errorf("--max-trials must be at least 1, got %d", a.MaxTrials))
	}
	script, err := starlark.LoadScript(ctx, a.Script, starlark.Options{Vars: a.Set, LibPaths: a.LibPaths, MaxTrials: a.MaxTrials})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return nil, err
		}
		return nil, usageErr(err)
	}
	sweeps := script.Sweeps
	a.searches = script.Searches
	if len(sweeps)+len(a.searches) == 0 {
		return nil, usageErr(fmt.Errorf("%s declares no sweep: call sweep(name = ..., base = profile(...)) or search(...)", a.Script))
	}
	if len(a.Only) == 0 {
		return sweeps, nil
	}
	names := make([]string, 0, len(sweeps)+len(a.searches))
	for _, s := range sweeps {
		names = append(names, s.Name)
	}
	for _, s := range a.searches {
		names = append(names, s.Name)
	}
	what := "sweep of that name; its sweeps are"
	if len(a.searches) > 0 {
		what = "sweep or search of that name; its sweeps and searches are"
	}
	for _, name := range a.Only {
		if !slices.Contains(names, name) {
			return nil, usageErr(fmt.Errorf("--only %s: %s declares no %s %s", name, a.Script, what, strings.Join(names, ", ")))
		}
	}
	a.searches = slices.DeleteFunc(a.searches, func(s plan.Search) bool { return !slices.Contains(a.Only, s.Name) })
	return slices.DeleteFunc(sweeps, func(s plan.Sweep) bool { return !slices.Contains(a.Only, s.Name) }), nil
}

// checkInputFiles reads the head of the input file of every cell and of
// every search's base, once per file and format, so that a file a cell
// cannot read fails the script before any cell sends traffic rather than
// when its turn comes.
func checkInputFiles(sweeps []plan.Sweep, searches []plan.Search) error {
	seen := map[[2]string]bool{}
	check := func(p plan.Profile, where string) error {
		key := [2]string{p.InputFile, p.CustomDatasetType}
		if p.InputFile == "" || p.PublicDataset != "" || seen[key] {
			return nil
		}
		seen[key] = true
		if _, err := dataset.Detect(p.InputFile, p.CustomDatasetType); err != nil {
			return fmt.Errorf("%s: input_file: %w (nothing was sent)", where, err)
		}
		return nil
	}
	for _, sw := range sweeps {
		for _, cell := range sw.Cells {
			if err := check(cell.Profile, fmt.Sprintf("sweep %q cell %s", sw.Name, cell.Label)); err != nil {
				return err
			}
		}
	}
	for _, s := range searches {
		if err := check(s.Base, fmt.Sprintf("search %q", s.Name)); err != nil {
			return err
		}
	}
	return nil
}

// SweepCmd is `aiperf sweep`.
type SweepCmd struct {
	ScriptArgs      `embed:"" set:"only_verb=Run"`
	ArtifactDir     string  `name:"artifact-dir" default:"artifacts" help:"Root of the trial directories: <dir>/<sweep>/<cell>/trial_NNNN." placeholder:"DIR"`
	Resume          bool    `name:"resume" help:"Continue the latest run of the same sweep with the same cells (same script, vars and modules), skipping trials stored as complete."`
	ConfidenceLevel float64 `name:"confidence-level" default:"0.95" help:"Confidence level of per-cell intervals and compare verdicts."`
	UI              string  `name:"ui" enum:"none,simple" default:"simple" help:"Progress display: simple or none."`
	AutoPlot        bool    `name:"auto-plot" help:"When a sweep ends, write its figures (aiperf plot) as PNG to <artifact-dir>/<sweep>/plots; a failure to draw is a warning."`
	ParallelArg     `embed:""`
	ExecutorArgs    `embed:""`
	IntegrationArgs `embed:""`
}

// Run executes every selected sweep of the script.
func (c *SweepCmd) Run(ctx context.Context, g *Globals) error {
	if err := plan.CheckConfidence("confidence_level", c.ConfidenceLevel); err != nil {
		return usageErr(err)
	}
	if err := c.ParallelArg.check(); err != nil {
		return err
	}
	sweeps, err := c.load(ctx)
	if err != nil {
		return err
	}
	if err := c.IntegrationArgs.apply(sweeps, c.searches, c.Parallel); err != nil {
		return usageErr(err)
	}
	for _, sw := range sweeps {
		for _, cell := range sw.Cells {
			if err := cell.Profile.Check(); err != nil {
				return usageErr(fmt.Errorf("sweep %q cell %s: %w", sw.Name, cell.Label, err))
			}
		}
	}
	for _, s := range c.searches {
		if err := errors.Join(s.Check(), checkSearchMetrics(s)); err != nil {
			return usageErr(err)
		}
	}
	exec, err := c.executorFor(sweeps)
	if err != nil {
		return err
	}
	var errs []error
	for _, sw := range sweeps {
		err := runSweep(ctx, g, sw, sweepOptions{
			artifactDir: c.ArtifactDir,
			confidence:  c.ConfidenceLevel,
			ui:          c.UI,
			resume:      c.Resume,
			script:      c.Script,
			vars:        c.Set,
			cliCommand:  sweepCommand(g.Args, sw),
			executor:    exec,
			parallel:    c.Parallel,
		})
		if c.AutoPlot && !errors.Is(err, context.Canceled) && !refused(err) {
			_ = autoPlot(ctx, g, plot.Selection{Sweeps: []string{sw.Name}}, sweepPlotDir(c.ArtifactDir, sw.Name), false) // a warning
		}
		if err != nil {
			errs = append(errs, err)
			if errors.Is(err, context.Canceled) {
				break
			}
		}
	}
	return errors.Join(c.runSearches(ctx, g, errs)...)
}

type sweepOptions struct {
	artifactDir string
	confidence  float64
	ui          string
	resume      bool
	script      string
	vars        map[string]string
	name        string                  // --name of every trial (profile --num-profile-runs)
	trialDir    func(plan.Trial) string // default <artifactDir>/<sweep>/<cell>/trial_NNNN
	cellDir     func(plan.Cell) string  // default <artifactDir>/<sweep>/<cell>
	// sweepAggregateDir is where AIPerf's sweep aggregate goes ("": none;
	// profile's sweeps, see sweepAggregateDir).
	sweepAggregateDir string
	// overwrite lets a new sweep write over trial directories that hold
	// files (profile --num-profile-runs, which overwrites its artifact
	// directory as a single profile does).
	overwrite bool
	// cliCommand is the user's command line, redacted: every trial exports
	// it as run_info.cli_command.
	cliCommand string
	executor   runner.Executor // nil: runner.Local, this binary
	workers    int             // with runner.Local: each trial's --workers
	workerArgs []string        // and the flags of its deadlines
	parallel   int             // trials at once, on different servers (0 or 1: one at a time)
	// quietTrials leaves out the line as each trial starts and ends
	// (profile --no-sweep-table): AIPerf's streaming per-cell table.
	quietTrials bool
}

// runSweep records the sweep, runs its trials as subprocesses, and prints the
// sweep's comparison table. Exit code 3 when some trials failed, 130 when
// interrupted; 2, before anything is sent, when the store cannot be used,
// another process runs the sweep or writes its directory, or a new sweep
// would overwrite an earlier one's trials.
func runSweep(ctx context.Context, g *Globals, sw plan.Sweep, o sweepOptions) error {
	if err := sw.CheckConvergence(); err != nil { // a config file's or the flags', on the cells they made
		return usageErr(err)
	}
	if sw.Convergence != nil && sw.Trials <= 3 {
		fmt.Fprintf(g.Stderr, "note: a cell's convergence is judged once %d trials ended, so with %d trials a cell it holds "+
			"for still runs them all; with 4 or more it stops adding trials\n", min(3, sw.Trials), sw.Trials)
	}
	db, err := openStoreToWrite(ctx, g.Store, otherStoreNothing)
	if err != nil {
		return err
	}
	defer db.Close()
	db.Retry = retryOn(g.Stderr)
	if o.trialDir == nil {
		o.trialDir = func(t plan.Trial) string { return filepath.Join(o.artifactDir, t.Dir()) }
	}
	if o.cellDir == nil {
		o.cellDir = func(c plan.Cell) string {
			return filepath.Join(o.artifactDir, filepath.Dir(plan.Trial{Sweep: sw.Name, Cell: c}.Dir()))
		}
	}
	release, id, resumed, err := beginRun(ctx, g, db, sweepClaim(sw, o), o.resume)
	if err != nil {
		return err
	}
	storeCut := false // a Ctrl-C ended a wait for the store: it is not waited for again
	defer func() {
		if !storeCut {
			release()
		}
	}()
	if err := refuseRunningTrials(sw, o); err != nil {
		return err
	}
	switch {
	case o.overwrite:
	case resumed:
		err = refuseOtherSweepsTrials(ctx, db, id, sw, o)
	default:
		err = refuseEarlierTrials(g, sw, o)
	}
	if err == nil && resumed { // its stored trials must be in o's directories: their cells' aggregates are rebuilt from them
		err = refusedResume(runner.CheckResume(ctx, sw, runner.Options{Store: db, SweepID: id, TrialDir: o.trialDir}))
	}
	if err != nil {
		return err
	}
	if resumed {
		err = db.ReopenSweep(ctx, id, sw.Trials)
	} else {
		id, err = db.BeginSweep(ctx, store.SweepMeta{Name: sw.Name, ScriptPath: o.script, PlanSHA256: sw.Digest(),
			Vars: o.vars, Trials: sw.Trials, Cells: sw.Cells})
	}
	if err != nil {
		return err
	}
	if o.resume && !resumed {
		fmt.Fprintf(g.Stderr, "note: --resume found no sweep %q with these cells in %s to continue (the script, a loaded module "+
			"or a --set value changed, or it never ran): nothing was resumed; a new sweep (#%d) starts\n", sw.Name, g.Store, id)
	}
	if o.executor == nil {
		if o.executor, err = localExecutor(o.workers, o.workerArgs); err != nil {
			return err
		}
	}
	opts := runner.Options{
		Executor:   o.executor,
		Store:      db,
		SweepID:    id,
		SweepUUID:  runner.NewSweepUUID(),
		CLICommand: o.cliCommand,
		TrialDir:   o.trialDir,
		CellDir:    o.cellDir,
		Name:       o.name,
		Resume:     resumed,
		Discarded:  g.scratch,
		Confidence: o.confidence,
		Parallel:   o.parallel,
		Warnings:   g.Stderr,
	}
	opts.SweepAggregateDir = o.sweepAggregateDir
	if o.ui != "none" {
		if !o.quietTrials {
			opts.Progress = g.Stderr
		}
		fmt.Fprintf(g.Stderr, "sweep %q (#%d): %s × %s, artifacts under %s, store %s\n",
			sw.Name, id, plural(len(sw.Cells), "cell"), plural(max(1, sw.Trials), "trial"), o.artifactDir, g.storeName())
	}
	if o.parallel > 1 && (o.ui != "none" || len(sw.Lanes()) <= 1) {
		describeSchedule(ctx, g.Stderr, sw, o.parallel, false) // by spelling: the runner looks the names up and notes what it merged
	}
	parent, cells := sweepParent(ctx, g, sw)
	if cells != nil {
		sw.Cells = cells // the trials are the parent run's children
	}
	out, runErr := runner.Run(ctx, sw, opts)
	storeCut = out.StoreFailed && ctx.Err() != nil
	return endSweep(ctx, g, db, id, parent, o, out, runErr, storeCut)
}

// endSweep records how sweep id ended, prints its table and failures, and
// returns runErr with its exit code. storeCut says a Ctrl-C ended a wait for
// the store: the sweep is then not marked, as that would wait again.
func endSweep(ctx context.Context, g *Globals, db *store.DB, id int64, parent *mlflow.Run, o sweepOptions, out runner.Outcome,
	runErr error, storeCut bool) error {
	status := result.StatusComplete
	switch {
	case out.Interrupted || out.StoreFailed:
		status = result.StatusInterrupted
	case out.Failed > 0:
		status = result.StatusFailed
	}
	endParent(ctx, g, parent, status)
	if storeCut {
		// Marking the sweep and releasing its claim would wait for the
		// same lock: the claim is taken over by the next run (its pid is
		// gone), and a sweep left marked running is resumed as any.
		fmt.Fprintf(g.Stderr, "note: sweep #%d stays marked running in %s (the Ctrl-C came while waiting for the store); "+
			"--resume continues it\n", id, g.Store)
	} else if err := db.FinishSweep(context.WithoutCancel(ctx), id, status); err != nil {
		return errors.Join(runErr, err)
	}
	tabled := false // the table's notes say which cells converged, as the store records them
	if out.Completed+out.Skipped > 0 {
		fmt.Fprintln(g.Stdout)
		// What completed is shown even when the sweep was interrupted.
		if err := printSweepTable(context.WithoutCancel(ctx), g, db, fmt.Sprint(id), o.confidence); err != nil {
			fmt.Fprintf(g.Stderr, "warning: render sweep table: %v\n", err)
		} else {
			tabled = true
		}
	}
	for _, c := range out.ConvergedCells {
		if !tabled {
			fmt.Fprintf(g.Stderr, "converged: %s\n", c)
		}
	}
	for _, c := range out.Unconverged {
		fmt.Fprintf(g.Stderr, "not converged: %s\n", c)
	}
	for _, f := range out.Failures {
		fmt.Fprintf(g.Stderr, "failed: %s\n", f)
	}
	if errors.Is(runErr, runner.ErrTrialsFailed) {
		return withCode(ExitSomeFailed, runErr)
	}
	return runErr
}

// sweepClaim is what a sweep claims in the store while it runs: its name
// and plan, and its artifact directory, so that a second `--resume` of it
// (or any sweep writing the same directory) refuses instead of running
// trials twice.
func sweepClaim(sw plan.Sweep, o sweepOptions) store.SweepClaim {
	root := o.artifactDir
	if trials := sw.TrialList(); len(trials) > 0 {
		root = filepath.Dir(filepath.Dir(o.trialDir(trials[0]))) // <artifact-dir>/<sweep>
	}
	return store.SweepClaim{Name: sw.Name, PlanSHA256: sw.Digest(), ArtifactDir: root}
}

// refuseRunningTrials refuses to run a sweep while the trial child of an
// earlier run of it still runs in one of its trial directories (that run's
// parent died first, killed outright): both would write the same files.
func refuseRunningTrials(sw plan.Sweep, o sweepOptions) error {
	for _, t := range sw.TrialList() {
		if pid, running := runner.TrialRunning(o.trialDir(t)); running {
			return usageErr(fmt.Errorf("sweep %q: the trial process of an earlier run (pid %d) still runs in %s; nothing was sent: "+
				"wait for it to end (or stop it: kill %d), then run again", sw.Name, pid, o.trialDir(t), pid))
		}
	}
	return nil
}

// refuseEarlierTrials refuses to start a new sweep whose trial directories
// already hold files: the trials of an earlier sweep, which it would
// overwrite.
func refuseEarlierTrials(g *Globals, sw plan.Sweep, o sweepOptions) error {
	var found []string
	for _, t := range sw.TrialList() {
		if entries, err := os.ReadDir(o.trialDir(t)); err == nil && len(entries) > 0 {
			found = append(found, o.trialDir(t))
		}
	}
	if len(found) == 0 {
		return nil
	}
	what := found[0]
	if len(found) > 1 {
		what += fmt.Sprintf(" (and %d more)", len(found)-1)
	}
	if o.resume {
		return usageErr(fmt.Errorf("sweep %q: %s holds a trial of an earlier sweep, and --resume found no sweep %q with these cells "+
			"in %s to continue (the script, a loaded module or a --set value changed); nothing was sent: "+
			"--artifact-dir DIR writes elsewhere, or remove the directory", sw.Name, what, sw.Name, g.Store))
	}
	return usageErr(fmt.Errorf("sweep %q: %s holds a trial of an earlier sweep, which a new sweep would overwrite; nothing was sent: "+
		"--resume continues that sweep (same script and --set values), --artifact-dir DIR writes elsewhere, or remove the directory",
		sw.Name, what))
}

// refuseOtherSweepsTrials refuses to resume sweep id when a trial it has
// still to run would write a directory that holds another sweep's stored
// trial: the resume was given another --artifact-dir than the sweep ran
// with, one where an earlier sweep of the same script wrote.
func refuseOtherSweepsTrials(ctx context.Context, db *store.DB, id int64, sw plan.Sweep, o sweepOptions) error {
	done, err := db.CompletedTrialKeys(ctx, id)
	if err != nil {
		return err
	}
	var dirs []string
	for _, t := range sw.TrialList() {
		if !done[t.Key()] {
			d := o.trialDir(t)
			dirs = append(dirs, d)
			if abs, err := filepath.Abs(d); err == nil && abs != d {
				dirs = append(dirs, abs)
			}
		}
	}
	runs, err := db.RunsInDirs(ctx, dirs)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(runs, func(r store.DirRun) bool { return r.SweepID != id })
	if i < 0 {
		return nil
	}
	hint := fmt.Sprintf("the --artifact-dir sweep #%d started with", id)
	if own, err := db.SweepTrialDir(ctx, id); err == nil && own != "" {
		root := filepath.Dir(filepath.Dir(filepath.Dir(own))) // own is <root>/<sweep>/<cell>/trial_NNNN (plan.Trial.Dir)
		hint = "--artifact-dir " + root + ", where its trials are"
	}
	other := runs[i]
	return usageErr(fmt.Errorf("sweep %q: --resume continues sweep #%d, but %s holds run %d of sweep #%d, which it would overwrite; "+
		"nothing was sent: give %s", sw.Name, id, other.Dir, other.RunID, other.SweepID, hint))
}

// refusedResume is err, a usage error (exit 2) when the runner refused a
// --resume before anything was sent (runner.ErrRefused).
func refusedResume(err error) error {
	if errors.Is(err, runner.ErrRefused) {
		return usageErr(err)
	}
	return err
}

// sweepCommand is the command line args with the secrets of every
// cell of sw redacted.
func sweepCommand(args []string, sw plan.Sweep) string {
	var secrets, urls []string
	for _, c := range sw.Cells {
		secrets = append(secrets, c.Profile.Secrets()...)
		urls = append(urls, c.Profile.URL...)
	}
	return redactedCommand(args, urls, plan.NewRedactor(secrets...))
}
