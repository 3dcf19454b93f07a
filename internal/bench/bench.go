// Package bench runs one benchmark cell end to end, as a short list of
// stages: prepare (tokenizer, dataset), share out (the load among the
// workers of --workers, checked before anything is sent), ready (the wait for the model, when
// asked, then a preflight dial), collect (the server's
// metrics and GPU telemetry scraped from here on), reset (the KV cache, once,
// before any load), run phases (the load, from this process or from the
// worker processes of --workers: workers.go; every phase marked for the
// scrapes, profiling phases bracketed by the server profiler, each record
// finished as its request ends: finisher.go; the network's round trip
// probed meanwhile when asked: network.go) and reduce (summaries, the
// network adjustment, the client's audit, the reset checks). It writes inputs.json and, when asked,
// profile_export.jsonl while the run goes; the caller writes the other
// exports and stores the result.
package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/aiperf-go/aiperf/hooks"
	"github.com/aiperf-go/aiperf/internal/dataset"
	"github.com/aiperf-go/aiperf/internal/load"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/report"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/seqdist"
	"github.com/aiperf-go/aiperf/internal/servermetrics"
	"github.com/aiperf-go/aiperf/internal/shard"
	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// Options configure one run.
type Options struct {
	Profile plan.Profile // validated by the caller
	Info    result.TrialInfo
	Name    string
	// BenchmarkID is the run's id (empty: a new one); the caller sets it
	// when its exporters label their points with it.
	BenchmarkID string
	CLICommand  string // already redacted
	Version     string
	// Progress receives live progress lines (nil: none).
	Progress io.Writer
	// Watch, when set, follows the run live (the terminal dashboard)
	// instead of the progress lines.
	Watch Watcher
	// Exporters follow the run live for systems outside this process
	// (OpenTelemetry, the live Prometheus endpoint), beside the progress
	// lines or the dashboard; the caller closes them after Run returns.
	Exporters []Exporter
	// Log receives warnings and hook activity (nil: discarded).
	Log io.Writer
	// ProfilerMark is where the profiler leaves its hooks.Mark while it may
	// be running (a sweep child's trial dir); "" for none.
	ProfilerMark string
	// ResetMark is where the KV-cache reset leaves its mark from before it
	// is sent until it was answered or waited for (a sweep child's trial
	// dir), and where an earlier run's is waited for; "" for none.
	ResetMark string
	// InputsFile, when set, is where the payloads of the dataset are
	// written once the load sent anything (AIPerf's inputs.json).
	InputsFile string
	// JSONLFile, when set, is the profile_export.jsonl the run writes while
	// it goes, to JSONLFile + ".partial" (result.Run.StreamedJSONL), each
	// line's error message through Redact (nil: as is).
	JSONLFile string
	Redact    func(string) string
	// Records, when set, takes the finished records in batches while the
	// load goes (a store writing them early, so that little is left to do
	// when the load ends).
	Records RecordSink
	// Workers, when it has more than one, sends the load from that many
	// worker processes instead of this one (workers.go); WorkerDeadlines
	// bound the waits on them (zero values: shard's defaults; the drain's
	// rests on the profile's request timeout).
	Workers         Workers
	WorkerDeadlines shard.Deadlines
}

// RecordSink takes batches of finished records, in the order their
// requests ended, on the goroutine that finishes them. After its first
// error it is given nothing more; the run's result still has every record.
type RecordSink interface {
	Add(records []metrics.Record) error
}

// Watcher follows a run live. Watch is handed the engine's counters of the
// phase issuing now when the load starts, to read (never write) until the
// run returns; Record each finished record, on the goroutine that finishes
// them (off every request's path), in the order the requests ended: it
// must return at once.
type Watcher interface {
	Watch(progress func() *load.Progress, clock load.Clock)
	Record(r *metrics.Record)
}

// Exporter streams a run to a system outside this process as it goes. It
// is a Watcher: Watch is handed the counters of the phase issuing now,
// Record each finished record on the finisher's goroutine (never a
// request's), in the order the requests ended; Record must return at once,
// so an exporter queues what it sends and drops (and counts) what does not
// fit rather than slowing the finisher.
type Exporter interface {
	Watcher
}

// ErrAllFailed marks a run in which no profiling request succeeded: every
// one failed, or was cut at the end of the grace period.
var ErrAllFailed = errors.New("no profiling request succeeded")

// Run executes the cell. It returns the result together with an error when the
// run failed (reset or profiler-start failure, unreachable server, every
// request failed) or was interrupted (ctx cancelled: the error wraps
// context.Canceled); the result is non-nil whenever anything was attempted, so
// callers can record the failure.
func Run(ctx context.Context, o Options) (*result.Run, error) {
	c := newCell(o)
	defer c.discard()
	err := c.prepare(ctx)
	if err == nil { // open, even if an interrupt came meanwhile
		defer c.ds.Close()
		defer c.fin.close()
	}
	if err := interrupted(ctx, stagePrepare, err); err != nil {
		return c.fail(err)
	}
	if err := interrupted(ctx, stageShareOut, c.shareOut()); err != nil {
		return c.fail(err)
	}
	if err := interrupted(ctx, stageReady, c.ready(ctx)); err != nil {
		return c.fail(err)
	}
	col, err := c.collect(ctx)
	if err = interrupted(ctx, stageCollect, err); err != nil {
		c.collected(col)
		return c.fail(err)
	}
	if err := c.reset(ctx); err != nil {
		c.collected(col)
		return c.fail(err)
	}
	if col != nil && c.p.ResetHook().Enabled {
		col.Mark(servermetrics.PhaseReset, true)
	}
	rtt := c.probeNetwork(ctx)
	out := c.runPhases(ctx, col)
	c.probed(rtt)
	c.collected(col)
	c.reduce(ctx, out)
	return c.finish(ctx, out)
}

// cell is one run in progress: what the stages share.
type cell struct {
	o       Options
	p       plan.Profile
	log     io.Writer
	clock   load.Clock
	run     *result.Run
	control *hooks.Client
	guard   *failGuard // --failed-request-threshold's (nil: none), set before the phases send

	tok tokenizer.Tokenizer
	// counted names the tokenizer (and chat template) for the audit.
	counted string
	ds      dataset.Dataset
	// systemPrompt is --system-prompt, or --system-prompt-file's text.
	systemPrompt string
	// sign signs each request (--auth-type sigv4; nil for none; sign.go).
	sign func(*http.Request, []byte) error
	tmp  string // a directory of temporary files, removed when the cell ends
	// synthesized places a problem of the trace --synthesis-* rewrote at
	// the input file's lines (nil: not rewritten).
	synthesized func(error) error
	// warnings found before the load, for the audit.
	warnings []string
	phases   []plan.Phase // the profile's, with a trace promoted to its fixed schedule

	fin  *finisher
	sent sentSet // the conversations sent (with InputsFile)
	// worker is a worker process's channel to its coordinator (nil in the
	// coordinator and in a cell of one process): worker.go.
	worker *shard.Worker
	// shares are each worker's phases of a sharded cell (--workers).
	shares [][]plan.Phase
	halt   chan struct{} // a worker's: closed when the coordinator halts it
}

func newCell(o Options) *cell {
	log := o.Log
	if log == nil {
		log = io.Discard
	}
	if o.Profile.Streaming && !o.Profile.Streams() {
		// As AIPerf: --streaming is dropped for a type that cannot stream.
		fmt.Fprintf(log, "note: --endpoint-type %s does not stream: --streaming is ignored\n", o.Profile.EndpointType)
		o.Profile.Streaming = false
	}
	host, _ := os.Hostname()
	clock := load.NewClock()
	return &cell{
		o: o, p: o.Profile, log: log, clock: clock,
		control: hooks.New(controlHeaders(o.Profile)).WithURLCredentials(o.Profile.URL),
		run: &result.Run{
			BenchmarkID:  cmp.Or(o.BenchmarkID, NewID()),
			ToolVersion:  o.Version,
			Host:         host,
			Config:       o.Profile.Redacted(),
			CLICommand:   o.CLICommand,
			Name:         o.Name,
			Info:         o.Info,
			StartTime:    clock.Start(),
			Status:       result.StatusFailed,
			ControlHooks: []hooks.Call{},
			ErrorSummary: []metrics.ErrorCount{},
			Records:      []metrics.Record{},
		},
	}
}

// fail ends the run with err: failed, or interrupted when err wraps
// context.Canceled.
func (c *cell) fail(err error) (*result.Run, error) {
	c.run.EndTime = time.Now()
	c.run.Error = err.Error()
	if errors.Is(err, context.Canceled) {
		c.run.Status = result.StatusInterrupted
		c.run.WasCancelled = true
	}
	return c.run, err
}

// prepare loads the tokenizer and opens the dataset (an input file, checked
// whole, or synthetic conversations): the user's input, checked before any
// traffic. A trace whose records carry timestamps is replayed on its fixed
// schedule, as AIPerf does, unless --no-fixed-schedule or a request rate
// says otherwise.
func (c *cell) prepare(ctx context.Context) error {
	system, err := readSystemPrompt(c.p)
	if err != nil {
		return &InputError{fmt.Errorf("%w (nothing was sent)", err)}
	}
	c.systemPrompt = system
	if err := c.signing(ctx); err != nil {
		return err
	}
	tok, err := tokenizer.LoadRevision(c.p.Tokenizer, c.p.TokenizerRevision)
	if err != nil {
		return &InputError{fmt.Errorf("%w (nothing was sent)", err)}
	}
	chat, note, err := chatTemplate(ctx, c.p, tok, c.log)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		return &InputError{fmt.Errorf("%w (nothing was sent)", err)}
	}
	counted := tokenizer.Describe(tok)
	if chat != nil {
		counted += ", chat ISL through its chat template (" + chat.File() + ")"
	}
	c.counted = counted
	fmt.Fprintf(c.log, "tokens counted with %s\n", counted)
	for _, w := range []string{foreignTokenizer(c.p), note} {
		if w != "" {
			c.warn(w)
		}
	}
	c.tok = tok
	o := datasetOptions(c.p)
	if c.p.SequenceDistribution != "" {
		if o.SeqDist, err = seqdist.Parse(c.p.SequenceDistribution); err != nil {
			return &InputError{fmt.Errorf("--seq-dist: %w (nothing was sent)", err)}
		}
		fmt.Fprintf(c.log, "sequence distribution: %s\n", o.SeqDist)
	}
	c.sizeForTemplate(ctx, &o, chat)
	c.sizeForCacheBust(&o)
	detected, err := timestamped(ctx, c.p) // a huge first record is read under ctx: Ctrl-C ends it
	if err != nil {
		return &InputError{fmt.Errorf("%w (nothing was sent)", err)}
	}
	if synthesisParams(c.p).Active() { // as AIPerf, when a --synthesis-* flag differs from its default
		if err := c.synthesize(ctx, &o); err != nil {
			if ctx.Err() != nil {
				return err
			}
			return &InputError{fmt.Errorf("%w (nothing was sent)", err)}
		}
	}
	if detected {
		o.FixedSchedule = true
		c.run.Config.FixedSchedule = true // what ran, for the exports' input_config
		fmt.Fprintf(c.log, "%s: its records carry timestamps: replaying them on a fixed schedule (--no-fixed-schedule to use --concurrency instead)\n", c.p.InputFile)
	}
	if c.ds, err = dataset.Open(ctx, tok, o); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("open the dataset: %w", err)
		}
		if c.synthesized != nil {
			err = c.synthesized(err)
		}
		return &InputError{fmt.Errorf("%w (nothing was sent)", err)}
	}
	for _, n := range dataset.Notes(c.ds) {
		fmt.Fprintln(c.log, n)
	}
	if err := errors.Join(checkRaw(c.p, c.ds), checkMedia(c.p, c.ds), checkAudio(ctx, c.p, c.ds), checkHistory(ctx, c.p, c.ds), checkTurnExtras(c.p, c.ds),
		c.checkSystemPrompt(ctx)); err != nil {
		c.ds.Close()
		return &InputError{err}
	}
	c.phases = phasesOf(c.p, o.FixedSchedule)
	if err := c.checkPhases(o.FixedSchedule); err != nil {
		c.ds.Close()
		return &InputError{err}
	}
	if _, tree := c.ds.(dataset.Tree); tree || dataset.IsTrace(c.ds) { // a DAG file: each root once, as AIPerf
		onceThrough(c.p, c.phases, c.ds.Len())
	}
	if c.o.InputsFile != "" {
		c.sent = newSentSet(dataset.Nodes(c.ds))
	}
	var sink *jsonlSink
	if c.o.JSONLFile != "" {
		sink = newJSONLSink(c.o.JSONLFile, c.o.Redact)
	}
	// The last: its goroutine runs until Run closes it.
	c.fin = newFinisher(tok, c.clock, c.p.Streams(), c.p.UseServerTokenCount, sink, c.o.Records, expectedRequests(c.phases))
	c.fin.watch, c.fin.chat, c.fin.outputs = watchers(c.o.Watch, c.o.Exporters), chat, c.p.WritesOutputs()
	return nil
}

// warn logs w as a warning and keeps it with the run's (its console
// summary, exports and store row).
func (c *cell) warn(w string) {
	c.logWarning(w)
	c.warnings = append(c.warnings, w)
}

// logWarning logs w as a warning, broken at spaces to fit the console
// (report.Fit), as the console's own lines.
func (c *cell) logWarning(w string) {
	fmt.Fprintln(c.log, report.Fit(c.log, "warning: "+w))
}

// Timestamped reports whether p's input file is a trace whose records
// carry timestamps and nothing says otherwise: it is then replayed on its
// fixed schedule, as AIPerf does.
func Timestamped(p plan.Profile) (bool, error) { return timestamped(context.Background(), p) }

// timestamped is Timestamped that gives up with ctx's error once ctx is
// done (dataset.DetectContext).
func timestamped(ctx context.Context, p plan.Profile) (bool, error) {
	if p.InputFile == "" || p.PublicDataset != "" || p.FixedSchedule || p.NoFixedSchedule || p.RequestRate != nil ||
		p.UserCentricRate != nil {
		return false, nil
	}
	det, err := dataset.DetectContext(ctx, p.InputFile, p.CustomDatasetType)
	if err != nil {
		return false, err
	}
	return dataset.IsTraceType(det.Type) && det.Timestamped, nil
}

// phasesOf is the phases the cell runs: the profile's, its profiling
// phases promoted to the dataset's fixed schedule when fixed.
// PlannedPhases are the phases a trial of p runs: on a fixed schedule when
// p asks for one or its input is a timestamped trace (as Run decides).
func PlannedPhases(p plan.Profile) []plan.Phase {
	fixed, _ := Timestamped(p)
	return phasesOf(p, p.FixedSchedule || fixed)
}

func phasesOf(p plan.Profile, fixed bool) []plan.Phase {
	phases := p.PhaseList()
	if !fixed {
		return phases
	}
	phases = slices.Clone(phases)
	for i := range phases {
		if ph := &phases[i]; ph.Kind == plan.KindProfiling {
			p.FixSchedule(ph)
			if p.RequestCount == nil && p.BenchmarkDuration == nil {
				ph.Requests = 0 // every record of the schedule
			}
		}
	}
	return phases
}

// onceThrough makes a trace's profiling phase send every conversation of
// the trace once (each of its lines exactly once), as AIPerf replays a
// trace, when nothing bounds the phase: no request count, duration or
// conversation count, and no fixed schedule (which replays every record
// already). Without it the phase would send max(10, 2×concurrency)
// requests, a 5-line trace twice over.
func onceThrough(p plan.Profile, phases []plan.Phase, conversations int) {
	if p.RequestCount != nil || p.BenchmarkDuration != nil || len(p.Phases) > 0 {
		return
	}
	for i := range phases {
		if ph := &phases[i]; ph.Kind == plan.KindProfiling && !ph.Fixed && ph.Sessions == 0 {
			ph.Requests, ph.Sessions = 0, conversations
		}
	}
}

// CheckWorkers reports whether the cell's load can be shared out among n
// workers (shard.Split), before anything is sent; an input file it cannot
// read is left for the run to report.
func CheckWorkers(p plan.Profile, n int) error {
	if n == 1 {
		return nil
	}
	if err := shard.CheckCount(n); err != nil {
		return err
	}
	if p.ExportLevel == "raw" {
		return fmt.Errorf("--export-level raw is not available with --workers %d: the payloads stay in the workers; "+
			"use --export-level records, or one process", n)
	}
	if p.RequestRateSeries != "" {
		return fmt.Errorf("--request-rate-series is not available with --workers %d yet: use one process", n)
	}
	if p.WritesOutputs() {
		return fmt.Errorf("--export-outputs-json is not available with --workers %d: the responses' text stays in the workers; "+
			"leave it out, or use one process", n)
	}
	detected, err := Timestamped(p)
	if err != nil {
		return nil
	}
	_, err = shard.Split(phasesOf(p, p.FixedSchedule || detected), n)
	return err
}

// InputError is a failure of the user's input found before any traffic (a
// tokenizer that does not load): a usage error, not a runtime one.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *InputError) Unwrap() error { return e.Err }

func logCalls(w io.Writer, calls []hooks.Call) {
	for _, c := range calls {
		status := "ok"
		if !c.OK {
			status = "FAILED: " + c.Error
		} else if c.Warning != "" {
			status = "ok (warning: " + c.Warning + ")"
		}
		fmt.Fprintf(w, "control: %s POST %s%s -> %d after %d attempt(s), %.1f ms: %s\n",
			c.Hook, c.Origin, c.Path, c.Status, c.Attempts, c.DurationMs, status)
	}
}

// NewID returns a new benchmark id: 32 random hex digits.
func NewID() string {
	return fmt.Sprintf("%016x%016x", rand.Uint64(), rand.Uint64())
}
