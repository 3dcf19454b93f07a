package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/kong"

	"github.com/aiperf-go/aiperf/internal/bench"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/plot"
	"github.com/aiperf-go/aiperf/internal/report"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/search"
	"github.com/aiperf-go/aiperf/internal/termsafe"
	"github.com/aiperf-go/aiperf/runner"
	"github.com/aiperf-go/aiperf/store"
)

// ProfileCmd is `aiperf profile`: one benchmark cell (or N trials of it).
type ProfileCmd struct {
	Profile plan.Profile `embed:""`

	Config                    string   `short:"f" name:"config" type:"existingfile" group:"Run" help:"AIPerf-shaped YAML benchmark file; explicit flags override it." placeholder:"FILE"`
	ArtifactDir               string   `name:"artifact-dir" aliases:"output-artifact-dir" group:"Run" help:"Where exports go (default artifacts/<model>-openai-<endpoint>-<stimulus>)." placeholder:"DIR"`
	Name                      string   `name:"name" group:"Run" help:"Label for this run (or group of trials) in the store, for aiperf compare."`
	UI                        string   `name:"ui" aliases:"ui-type" enum:"none,simple,dashboard" default:"dashboard" group:"Run" help:"Progress display: dashboard (a live terminal view, AIPerf's default; simple when stdout or stderr is not a terminal, and for several trials), simple (a progress line) or none (default ${default})."`
	Verbose                   int      `short:"v" type:"counter" group:"Run" help:"Log control-hook calls and warnings as they happen (-vv: the same)."`
	ExtraVerbose              bool     `name:"extra-verbose" group:"Run" help:"AIPerf's -vv: the same as -v."`
	LogLevel                  string   `name:"log-level" default:"INFO" group:"Run" placeholder:"LEVEL" help:"AIPerf's log levels: TRACE or DEBUG log as -v; INFO, NOTICE, WARNING, SUCCESS, ERROR, CRITICAL log warnings with the progress display (default ${default})."`
	NumProfileRuns            int      `name:"num-profile-runs" default:"1" group:"Run" help:"Run the cell this many times, each as its own subprocess with its own KV reset, and aggregate (1-10)."`
	ProfileRunCooldownSeconds float64  `name:"profile-run-cooldown-seconds" group:"Run" placeholder:"SECONDS" help:"Pause between trials of --num-profile-runs."`
	ConfidenceLevel           float64  `name:"confidence-level" default:"0.95" group:"Run" help:"Confidence level of the multi-run intervals."`
	SetConsistentSeed         bool     `name:"set-consistent-seed" negatable:"" default:"true" group:"Run" help:"With --num-profile-runs above 1 and no --random-seed, every trial uses seed 42, so all draw the same workload (default); --no-set-consistent-seed draws a new seed per trial."`
	WarmupAfterFirst          bool     `name:"profile-run-disable-warmup-after-first" negatable:"" default:"true" group:"Run" help:"With --num-profile-runs, only the first trial of a cell runs the warmup: the others measure the server it warmed (default); --no-profile-run-disable-warmup-after-first warms up every trial. With a KV-cache reset (--reset-kv-cache), which empties the cache before each trial, every trial runs its warmup, and this flag, given explicitly, is not applied (with a warning)."`
	VarySeedPerTrial          bool     `name:"vary-seed-per-trial" negatable:"" group:"Run" help:"With --num-profile-runs, give each trial its own seed, derived from the cell's seed, label and trial number (the same on every rerun): the trials also vary the workload."`
	NoStore                   bool     `name:"no-store" group:"Run" help:"Do not record the run in the SQLite store."`
	Resume                    bool     `name:"resume" group:"Run" help:"With several trials (--num-profile-runs, comma lists, a config file's sweep:) or a search, continue the latest interrupted run of the same command (same name, cells and trials), skipping trials stored as complete."`
	SweepType                 string   `name:"sweep-type" enum:"grid,zip" default:"grid" group:"Sweep" help:"How comma lists (--concurrency 8,16,32 --osl 64,128) combine: grid (every combination) or zip (element-wise; lists of one length) (default ${default})."`
	ParameterSweepMode        string   `name:"parameter-sweep-mode" enum:"repeated,independent" default:"repeated" group:"Sweep" help:"With --num-profile-runs and a comma list: repeated (every value's trial 1, then trial 2, ...) or independent (every trial of one value, then the next) (default ${default})."`
	ParameterSweepCooldown    float64  `name:"parameter-sweep-cooldown-seconds" group:"Sweep" placeholder:"SECONDS" help:"Pause between the values of a comma-list sweep."`
	Variant                   []string `name:"variant" aliases:"sweep-variant" sep:"none" group:"Sweep" placeholder:"[NAME:] K=V, ..." help:"One cell of a sweep, AIPerf's: \"fast: concurrency=8, isl=128\" sets those flags (without their dashes) over the command line's; repeat it for each cell (two at least), named or variant_N. Not with comma lists or a config file's sweep:."`
	NoSweepTable              bool     `name:"no-sweep-table" group:"Sweep" help:"In a sweep of several cells (comma lists or a config file's sweep:), print no line as each trial starts and ends; the sweep table at the end stays."`
	ParameterSweepSameSeed    bool     `name:"parameter-sweep-same-seed" negatable:"" group:"Sweep" help:"Every value of a comma-list sweep uses --random-seed (default: the seed plus the value's position)."`
	AutoPlot                  bool     `name:"auto-plot" negatable:"" group:"Run" help:"When the run is stored, write its figures (TTFT/ITL CDFs, timeline) as PNG to <artifact-dir>/plots; a failure to draw is a warning."`
	PlotRequired              bool     `name:"plot-required" group:"Run" help:"With --auto-plot, a failure to draw fails the run (exit 1; its results stay stored and exported) instead of a warning."`
	Transport                 string   `name:"transport" aliases:"transport-type" enum:",http,sagemaker" default:"" group:"Run" placeholder:"TRANSPORT" help:"AIPerf's transport: http (for http:// and https:// URLs alike), or sagemaker (SageMaker Runtime, which --sagemaker-endpoint-name selects, and needs)."`
	Workers                   int      `name:"workers" default:"1" group:"Run" placeholder:"N" help:"Send the cell's load from N worker processes, split exactly (concurrency, rate and request counts divided, one KV reset and one profiler bracket from this process); at most the concurrency (default ${default}: this process)."`
	WorkersMax                int      `name:"workers-max" aliases:"max-workers" group:"Run" placeholder:"N" help:"AIPerf's cap on its worker processes: this client sends from one process unless --workers, which may not exceed it."`
	Executor                  string   `name:"executor" enum:"local,kubernetes" default:"local" group:"Run" help:"Where --workers run: local subprocesses, or kubernetes (a Job each, whose pod dials back to --coordinator-address) (default ${default})."`
	KubeArgs                  `embed:""`
	SearchArgs                `embed:""`
	CoordinatorAddress        string `name:"coordinator-address" group:"Executor" placeholder:"HOST:PORT" help:"Where worker pods dial this process (--workers N --executor kubernetes): a host they reach, port 0 for any (default: $POD_IP:0 in a pod)."`
	WorkerDeadlines           `embed:""`
	AIPerfIgnored             `embed:""`

	workers   bench.Workers // --executor kubernetes's, made by checkWorkers
	varySeed  bool          // every trial its own seed: VarySeedPerTrial, or no consistent seed
	drawnSeed bool          // --no-set-consistent-seed drew the seed now
	// converge is the --convergence-* criterion of a run of several trials
	// without a search (multiRunConvergence; nil: none).
	converge *search.Convergence

	yamlCells []plan.Cell // a config file's sweep: variations
	// where names a problem's field as the config file sets it for a
	// cell (-1: the body); nil without a config file.
	where        func(cell int, field string) string
	yamlNotes    []string // what reading the config file noted
	capFrom      string   // where --workers-max came from, when a config file's runtime.workers set it
	warmupOnce   bool     // multi_run.disable_warmup_after_first: the config file's, or the flag's
	yamlMultiRun bool     // the config file's multi_run: set warmupOnce

	// Set by the sweep runner for its children.
	SpecFile   string `name:"spec-file" hidden:"" help:"Run the trial described by this JSON file (sweep runner)."`
	ResultFile string `name:"result-file" hidden:"" help:"Write the full result as JSON here (sweep runner)."`
	// Set by the kubernetes executor for its pods.
	RemoteSpec  bool `name:"remote-spec" hidden:"" help:"The --spec-file is read-only and holds no secret: keep it; the API key comes from $AIPERF_API_KEY (sweep runner)."`
	ResultFrame bool `name:"result-frame" hidden:"" help:"Print the full result as a checksummed frame on stdout (sweep runner)."`
}

// Run executes the profile command.
func (c *ProfileCmd) Run(ctx context.Context, kctx *kong.Context, g *Globals) error {
	defer c.exitWithParent(g)()
	spec, err := c.spec(kctx)
	if err == nil {
		err = spec.Profile.LoadRateSeries()
	}
	if err != nil {
		return usageErr(err)
	}
	for _, n := range c.yamlNotes {
		fmt.Fprintln(g.Stderr, "note: "+n)
	}
	c.AIPerfIgnored.note(g.Stderr)
	c.trialPolicy(&spec.Profile, explicitFlags(kctx), g.Stderr)
	spec.Profile.WaitForAll()
	c.sageMakerDefaults(kctx, &spec.Profile)
	runErrs := c.checkTransport(spec.Profile)
	if !slices.Contains(logLevels, strings.ToUpper(c.LogLevel)) {
		runErrs = append(runErrs, &plan.FieldError{Field: "log_level",
			Msg: fmt.Sprintf("must be one of %s, got %q", strings.Join(logLevels, ", "), c.LogLevel)})
	}
	if c.NumProfileRuns < 1 || c.NumProfileRuns > 10 {
		runErrs = append(runErrs, &plan.FieldError{Field: "num_profile_runs",
			Msg: fmt.Sprintf("must be between 1 and 10, got %d", c.NumProfileRuns)})
	}
	if err := plan.CheckSeconds("parameter_sweep_cooldown_seconds", c.ParameterSweepCooldown, true); err != nil {
		runErrs = append(runErrs, err)
	}
	if !c.SearchArgs.searching() {
		var err error
		if c.converge, err = c.SearchArgs.multiRunConvergence(c.NumProfileRuns); err != nil {
			runErrs = append(runErrs, err)
		}
	}
	if err := errors.Join(append(runErrs, placeFields(spec.Profile.Check(), -1, c.where), plan.CheckConfidence("confidence_level", c.ConfidenceLevel),
		plan.CheckSeconds("profile_run_cooldown_seconds", c.ProfileRunCooldownSeconds, true))...); err != nil {
		return usageErr(err)
	}
	if err := c.checkWorkers(spec.Profile, len(g.sweepLists) == 0 && len(c.yamlCells) == 0 && c.NumProfileRuns == 1,
		g.Stderr); err != nil {
		return usageErr(err)
	}
	dir := c.ArtifactDir
	if dir == "" {
		dir = c.defaultDir(g, spec)
	}
	if err := writeInlineRecords(&spec.Profile, dir); err != nil {
		return err
	}
	for i := range c.yamlCells {
		if err := writeInlineRecords(&c.yamlCells[i].Profile, dir); err != nil {
			return err
		}
	}
	if err := c.checkResume(g); err != nil {
		return err
	}
	if c.NoStore && c.severalTrials(g) {
		drop, err := scratchStore(g)
		if err != nil {
			return err
		}
		defer drop()
	}
	if len(c.Variant) > 0 {
		return c.variants(ctx, g, spec, dir)
	}
	if done, err := c.maybeSearch(ctx, g, spec, dir); done {
		return err
	}
	if len(g.sweepLists) > 0 && len(c.yamlCells) > 0 {
		return usageErr(errors.New("comma lists cannot be combined with a config file's sweep: put the values in its sweep: section"))
	}
	if len(g.sweepLists) > 0 {
		return c.parameterSweep(ctx, g, spec, dir)
	}
	if len(c.yamlCells) > 0 {
		return c.runCells(ctx, g, spec, dir, c.yamlCells)
	}
	if c.NumProfileRuns > 1 {
		return c.multiRun(ctx, g, spec, dir)
	}
	return c.single(ctx, g, spec, dir)
}

// sageMakerDefaults fills in what the SageMaker transport implies
// (plan.Profile.SageMakerDefaults): without a --url of the user's (a flag
// or the config file's; --url's own default is a local server's), the
// base is SageMaker Runtime's in --aws-region. A runner's spec file holds
// the profile already filled in.
func (c *ProfileCmd) sageMakerDefaults(kctx *kong.Context, p *plan.Profile) {
	if c.SpecFile != "" || !p.SageMakerOn() {
		return
	}
	fromFile := c.Config != "" && c.where != nil && c.where(-1, "url") != ""
	if !slices.Contains(explicitFlags(kctx), "url") && !fromFile {
		p.URL = nil
	}
	p.SageMakerDefaults()
}

// checkTransport checks --transport against the SageMaker transport,
// which --sagemaker-endpoint-name selects: sagemaker needs it, http
// refuses it.
func (c *ProfileCmd) checkTransport(p plan.Profile) []error {
	switch {
	case c.Transport == plan.TransportSageMaker && !p.SageMakerOn():
		return []error{&plan.FieldError{Field: "transport", Msg: "sagemaker requires --sagemaker-endpoint-name: without it the request path " +
			"would be /endpoints//invocations. Name the SageMaker endpoint to invoke"}}
	case c.Transport == "http" && p.SageMakerOn():
		return []error{&plan.FieldError{Field: "transport", Msg: "http cannot invoke a SageMaker endpoint, which --sagemaker-endpoint-name " +
			"names: drop --transport (or give sagemaker), or drop --sagemaker-endpoint-name"}}
	}
	return nil
}

// logLevels are AIPerf's --log-level values.
var logLevels = []string{"TRACE", "DEBUG", "INFO", "NOTICE", "WARNING", "SUCCESS", "ERROR", "CRITICAL"}

// verbose reports whether hook calls and warnings are logged as they
// happen: -v, -vv, --extra-verbose or --log-level TRACE or DEBUG.
func (c *ProfileCmd) verbose() bool {
	level := strings.ToUpper(c.LogLevel)
	return c.Verbose > 0 || c.ExtraVerbose || level == "TRACE" || level == "DEBUG"
}

// spec builds the trial to run: the runner's spec file, or YAML overlaid
// with the flags given explicitly on the command line, or just the flags.
func (c *ProfileCmd) spec(kctx *kong.Context) (runner.Spec, error) {
	if c.SpecFile != "" && c.RemoteSpec {
		return runner.ReadRemoteSpec(c.SpecFile)
	}
	if c.SpecFile != "" {
		return runner.TakeSpec(c.SpecFile)
	}
	spec := runner.Spec{Profile: c.Profile, Name: c.Name}
	if c.Config == "" {
		return spec, nil
	}
	return c.fromConfig(kctx, spec)
}

// explicitFlags lists the Profile options (snake_case) given on the command line.
func explicitFlags(kctx *kong.Context) []string {
	var out []string
	for _, p := range kctx.Path {
		if p.Flag != nil {
			out = append(out, strings.ReplaceAll(p.Flag.Name, "-", "_"))
		}
	}
	return out
}

// single runs one cell in this process. The store is opened before
// anything is sent, so a store that cannot record the run is refused up
// front; once traffic was sent the table is printed and the exports written
// whatever fails afterwards.
func (c *ProfileCmd) single(ctx context.Context, g *Globals, spec runner.Spec, dir string) error {
	// Every secret of the profile is redacted from whatever a server or an
	// error echoes before it is printed, exported or stored.
	redact := spec.Profile.Redactor()
	var db *store.DB
	if c.ResultFile == "" && !c.NoStore { // a sweep child's parent stores the result
		var err error
		if db, err = openStoreToWrite(ctx, g.Store, otherStoreOrNone); err != nil {
			return err
		}
		defer db.Close()
		db.Retry = retryOn(g.Stderr)
	}
	opts := bench.Options{
		Profile:      spec.Profile,
		Info:         spec.Info,
		Name:         spec.Name,
		CLICommand:   cliCommand(g.Args, spec, redact),
		Version:      version,
		ProfilerMark: spec.ProfilerMark,
		ResetMark:    spec.ResetMark,
		InputsFile:   filepath.Join(dir, bench.InputsFile),
		JSONLFile:    jsonlFile(dir, spec.Profile),
		Redact:       redact.Redact,
	}
	var pending *store.Pending
	if db != nil {
		host, _ := os.Hostname()
		pending = db.BeginRun(&result.Run{Name: spec.Name, Config: spec.Profile, CLICommand: opts.CLICommand,
			ToolVersion: version, Host: host, StartTime: time.Now()})
		opts.Records = &recordsTo{ctx: ctx, pending: pending, log: g.Stderr} // a Ctrl-C ends a wait for a locked store
	}
	if c.UI != "none" { // a terminal's line overwrites itself (its phase name is escaped)
		opts.Progress = redact.Writer(termsafe.Raw(g.Stderr))
	}
	opts.Log = redact.Writer(g.Stderr)
	if !c.verbose() && c.UI == "none" {
		opts.Log = notices(opts.Log)
	}
	closeDashboard := c.dashboard(g, spec, &opts)
	if c.workers != nil {
		opts.Workers = c.workers
	} else if c.Workers > 1 {
		self, err := executable()
		if err != nil {
			return fmt.Errorf("find the aiperf executable for the worker processes: %w", err)
		}
		opts.Workers = startWorkers(self, c.Workers, opts.Log)
	}
	opts.WorkerDeadlines = c.deadlines()
	opts.BenchmarkID = bench.NewID()
	integ, err := startIntegrations(ctx, spec, opts.BenchmarkID, dir, redact.Writer(g.Stderr))
	if err != nil {
		closeDashboard()
		return usageErr(err)
	}
	opts.Exporters = integ.exporters()
	run, runErr := bench.Run(ctx, opts)
	closeDashboard()
	runErr = redact.Error(runErr)
	var input *bench.InputError
	if run == nil || errors.As(runErr, &input) { // a bad input found before any traffic: nothing to export or store
		integ.abort(ctx)
		if input != nil {
			return usageErr(runErr)
		}
		return runErr
	}
	return c.deliver(ctx, g, run.Redacted(redact), runErr, integ, db, pending, dir)
}

// deliver writes a finished run's exports into dir, ends its integrations,
// shows its table and stores it (or hands it to a sweep's parent), then
// draws its plots: runErr joined with what failed on the way.
func (c *ProfileCmd) deliver(ctx context.Context, g *Globals, run *result.Run, runErr error, integ *integrations,
	db *store.DB, pending *store.Pending, dir string) error {
	errs := []error{runErr}
	var paths []string
	var stored string          // the line that says where the run is stored
	var drawPlots func() error // --auto-plot, once everything is printed
	if len(run.Records) > 0 {
		var err error
		if paths, dir, err = writeExports(dir, run); err != nil {
			errs = append(errs, err)
		}
	} else {
		dir = "" // nothing was written there: the store must not point at it
	}
	shown := false
	show := func() { // the table and the export paths, once
		if !shown && len(run.Records) > 0 {
			report.Console(g.Stdout, run)
			for _, p := range paths {
				fmt.Fprintf(g.Stdout, "Export: %s\n", p)
			}
		}
		shown = true
	}
	if !c.ResultFrame {
		show() // before the integrations' waits (a last scrape) and the store's (another process's lock)
	}
	run.Exports = integ.finish(ctx, run)
	if c.ResultFile != "" {
		if err := runner.WriteResult(c.ResultFile, run); err != nil {
			errs = append(errs, err)
		}
	} else if db != nil {
		id, err := completeRun(ctx, g, pending, run, dir, len(paths) > 0)
		if err != nil {
			errs = append(errs, err)
		} else {
			stored = storedLine(g, id)
			if c.AutoPlot && dir != "" {
				sel, plots := plot.Selection{Refs: []string{strconv.FormatInt(id, 10)}}, filepath.Join(dir, "plots")
				drawPlots = func() error { return autoPlot(ctx, g, sel, plots, c.PlotRequired) }
			}
		}
	}
	if c.ResultFrame { // the exports, then the result, back to the parent through the log
		frames := termsafe.Raw(g.Stdout)
		if err := runner.WriteExports(frames, c.ArtifactDir, runner.ExportFrameLimit); err != nil {
			errs = append(errs, err)
		}
		if err := runner.WriteFrame(frames, run); err != nil {
			errs = append(errs, err)
		}
	}
	show()
	fmt.Fprint(g.Stdout, stored)
	if drawPlots != nil {
		errs = append(errs, drawPlots())
	}
	if runErr == nil && ctx.Err() != nil { // a Ctrl-C after the load, while the run was being delivered
		what := "interrupted after the run ended"
		if errors.Join(errs...) == nil {
			what += " (its table, exports and stored result are complete)"
		}
		errs = append(errs, fmt.Errorf("%s: %w", what, context.Cause(ctx)))
	}
	return errors.Join(errs...)
}

// jsonlFile is where the run streams its per-request export, "" when
// --export-level summary writes none.
func jsonlFile(dir string, p plan.Profile) string {
	if names := report.NamesOf(p); names.Records() {
		return filepath.Join(dir, names.JSONL)
	}
	return ""
}

// recordsTo stores a run's records while its load goes; it says so on log
// when a batch fails (bench then gives it no more: the run stores them all
// when it ends).
type recordsTo struct {
	ctx     context.Context
	pending *store.Pending
	log     io.Writer
}

func (r *recordsTo) Add(records []metrics.Record) error {
	err := r.pending.Add(r.ctx, records)
	if err != nil {
		fmt.Fprintf(r.log, "warning: %v; the run keeps its records and stores them all when it ends\n", err)
	}
	return err
}

// startWorkers is how --workers start (tests wrap it to fail one).
var startWorkers = func(self string, n int, log io.Writer) bench.Workers {
	return runner.Workers{Binary: self, Count: n, Log: log}
}

// checkWorkers refuses --workers and --executor values that cannot be
// honoured for this profile (single: one cell run once), before anything
// is sent; with --executor kubernetes it makes the workers.
func (c *ProfileCmd) checkWorkers(p plan.Profile, single bool, log io.Writer) error {
	switch {
	case c.WorkersMax < 0:
		return fmt.Errorf("--workers-max must be at least 1, got %d (nothing was sent)", c.WorkersMax)
	case c.WorkersMax > 0 && c.Workers > c.WorkersMax:
		from := ""
		if c.capFrom != "" {
			from = " (" + c.capFrom + ")"
		}
		return fmt.Errorf("--workers %d is more than --workers-max %d%s (nothing was sent)", c.Workers, c.WorkersMax, from)
	}
	profiles := []plan.Profile{p}
	if c.SearchArgs.searching() {
		profiles = nil // a search's probes set the load: its corners are checked (maybeSearch)
	}
	if err := checkWorkers(c.Workers, profiles...); err != nil {
		return err
	}
	if err := c.WorkerDeadlines.check(); err != nil {
		return err
	}
	if c.Executor != "kubernetes" {
		if c.CoordinatorAddress != "" {
			return errors.New("--coordinator-address is for --workers N --executor kubernetes (nothing was sent)")
		}
		return c.checkLocal()
	}
	switch {
	case c.Workers <= 1:
		return errors.New("aiperf profile runs its cell in this process: --executor kubernetes runs its --workers as pods " +
			"(--workers N, N above 1); aiperf sweep --executor kubernetes runs trials as Jobs (nothing was sent)")
	case !single:
		return errors.New("--workers with --executor kubernetes shards one cell run once: --num-profile-runs, comma lists " +
			"and a config's sweep run their trials as local processes, use --executor local for them (nothing was sent)")
	}
	addr := c.CoordinatorAddress
	if addr == "" {
		ip := os.Getenv("POD_IP")
		if ip == "" {
			return errors.New("--coordinator-address is required with --executor kubernetes outside a pod: a HOST:PORT " +
				"the worker pods can reach (port 0: any); in a pod, set $POD_IP from the downward API (status.podIP) " +
				"(nothing was sent)")
		}
		addr = net.JoinHostPort(ip, "0")
	}
	e, err := c.kubeExecutor()
	if err != nil {
		return err
	}
	if runner.HoldsOtherSecret(p) {
		return errors.New("--workers with --executor kubernetes: a secret in --header, --url, --server-metrics, " +
			"--gpu-telemetry or --extra-inputs would cross the network to the worker pods in their spec; only the API key (--api-key) " +
			"reaches them, as a Secret: move the credential there or use --executor local (nothing was sent)")
	}
	w, err := e.Workers(c.Workers, addr, log)
	if err != nil {
		return fmt.Errorf("%w (nothing was sent)", err)
	}
	w.APIKey = p.APIKey
	c.workers = w
	return nil
}
