package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aiperf-go/aiperf/hooks"
	"github.com/aiperf-go/aiperf/internal/dataset"
	"github.com/aiperf-go/aiperf/internal/endpoint"
	"github.com/aiperf-go/aiperf/internal/load"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/selfcheck"
	"github.com/aiperf-go/aiperf/internal/servermetrics"
	"github.com/aiperf-go/aiperf/internal/shard"
)

// phasesOutcome is what the run phases stage hands to reduce.
type phasesOutcome struct {
	reports            []load.PhaseReport
	err                error // the engine's: a profiler start failure or ctx's
	stallP99, stallMax time.Duration
	health             selfcheck.Report // over the profiling phases
	measured           bool             // health was measured
	warnings           []string         // profiler stop failures
	// workers are a sharded cell's worker processes (nil: in process);
	// a worker's uncounted responses are in its own audit's warnings.
	workers []shard.WorkerOutcome
	reached reached // how far the phases got, for an interrupted run's message
	// stoppedBy is why --failed-request-threshold stopped the sending
	// ("": it did not), kept when an interrupt ends the drain after it.
	stoppedBy string
}

// runPhases drives the phases: in this process (runEngine), or from the
// worker processes of --workers (runWorkers, workers.go).
func (c *cell) runPhases(ctx context.Context, col *servermetrics.Collector) phasesOutcome {
	if c.o.Workers != nil && c.o.Workers.N() > 1 {
		return c.runWorkers(ctx, col)
	}
	return c.runEngine(ctx, col)
}

// runEngine drives the phases with one client, bracketing each profiling
// phase with the server profiler (never warmup), and collects the records.
// A worker process (c.worker set) runs its share of them, each phase on the
// coordinator's start.
func (c *cell) runEngine(ctx context.Context, col *servermetrics.Collector) (out phasesOutcome) {
	phases := c.phases
	client := endpoint.New(endpoint.Options{
		MaxEventBytes:   c.p.EventLimit(),
		MaxConns:        maxInFlight(phases),
		Timeout:         time.Duration(c.p.RequestTimeoutSeconds * float64(time.Second)),
		Headers:         requestHeaders(c.p, c.o.Version),
		Now:             c.clock.Now,
		Trace:           c.p.ShowTraceTiming,
		TraceChunks:     c.p.ExportHTTPTrace,
		SessionHeader:   c.p.SessionHeader,
		ConnectionReuse: c.p.ConnectionReuseStrategy,
		Multipart:       c.p.RequestContentType == "multipart/form-data",
		RxCoalesce:      c.p.RxCoalesce(),
		Secrets:         c.p.Secrets(),
		Sign:            c.sign,
		SageMaker:       endpoint.SageMakerOf(&c.p),
		// AIPerf's --require-stream-completion: the readiness probe's
		// client (ready.go) does not check, as it is not measured.
		RequireStreamCompletion: c.p.RequireStreamCompletion,
	})
	defer client.Close()

	src, err := c.source(client)
	if err != nil {
		out.err = err
		return out
	}
	defer src.Stop()
	engine := &load.Engine{
		Clock:    c.clock,
		Source:   src,
		Fixed:    c.fixedStarts(),
		Precise:  c.p.PrecisePacing,
		Seed:     c.p.RandomSeed,
		OnRecord: c.fin.push,
	}
	var verdict func()
	engine.OnRecord, verdict = c.recordSink(engine.Stop, engine.Progress, &out)
	defer verdict()
	prof := c.bracket(ctx, col)
	engine.Hooks = prof.hooks()
	if c.worker != nil {
		engine.Seed, engine.Hooks = c.worker.Spec().Seed, c.worker.Hooks(engine.Hooks)
		defer c.follow(engine)()
	}

	stopProgress := c.showProgress(engine.Progress)
	stall := load.StartStallMonitor(10 * time.Millisecond)
	out.reports, out.err = engine.Run(ctx, phases)
	out.stallP99, out.stallMax = stall.Stop()
	stopProgress()
	out.health, out.measured = prof.health()
	client.Close() // its idle connections' descriptors, which writing inputs.json may need
	if n := client.HeldOpen(); n > 0 {
		out.warnings = append(out.warnings, heldOpenNote(n, maxInFlight(phases)))
	}
	c.endPhases(ctx, prof, src, &out)
	return out
}

// heldOpenNote words the replies whose connection the server held open
// after they had ended (endpoint.Client.HeldOpen), of a client that
// drained at most drains of them at once.
func heldOpenNote(n int64, drains int) string {
	return fmt.Sprintf("%d replies had ended (data: [DONE] or their whole body) while the server held their connection "+
		"open without ending the body: the client closed each after waiting for that end (up to %v, for at most %d "+
		"connections at once), so those connections were not reused; the server, not the client, kept them open",
		n, endpoint.DrainFor, drains)
}

// recordSink is where the phases' records go: the finisher (the record's
// conversation noted as sent, for inputs.json) and, with
// --failed-request-threshold, the guard that calls stop once it trips and
// says so at once, with how many requests in flight (progress) the run
// waits for. The deferred verdict notes why the sending stopped on out,
// and puts the guard's error in out.err when the phases ended without one
// of their own.
func (c *cell) recordSink(stop func(), progress func() *load.Progress, out *phasesOutcome) (push func(metrics.Record), verdict func()) {
	guard := newFailGuard(c.p, c.phases, func(verdict string) {
		stop()
		inFlight := int64(0)
		if pr := progress(); pr != nil {
			inFlight = pr.Sent.Load() - pr.Done.Load()
		}
		c.logWarning(fmt.Sprintf("%s: sending stopped; waiting for the requests in flight (%d now), each up to "+
			"--request-timeout-seconds (%gs) (Ctrl-C ends the run now, keeping this verdict)", verdict, inFlight,
			c.p.RequestTimeoutSeconds))
	})
	c.guard = guard
	sink := func(r metrics.Record) { c.sent.mark(r.Prompt); c.fin.push(r) }
	if guard == nil {
		return sink, func() {}
	}
	return func(r metrics.Record) { sink(r); guard.observe(r) }, func() {
		out.stoppedBy = guard.tripped()
		if out.err == nil {
			out.err = guard.err()
		}
	}
}

// showProgress follows the load's progress: the dashboard watches it, or
// progress lines are printed; the returned func stops them.
func (c *cell) showProgress(progress func() *load.Progress) (stop func()) {
	lines := c.o.Progress
	for _, e := range c.o.Exporters {
		e.Watch(progress, c.clock)
	}
	if c.o.Watch != nil {
		c.o.Watch.Watch(progress, c.clock)
		lines = nil
	}
	per := float64(dataset.Turns(c.ds)) / float64(max(1, c.ds.Len()))
	exact := c.p.InputFile == "" && c.p.ConversationTurnStddev == 0 // synthetic sessions of one length
	return startProgress(lines, progress, c.clock, per, exact, c.stopNote)
}

// stopNote is what the progress line adds while the sending is stopped
// and the requests in flight drain, "" otherwise.
func (c *cell) stopNote() string {
	if c.guard.tripped() == "" {
		return ""
	}
	return "--failed-request-threshold exceeded: sending stopped, draining"
}

// endPhases ends the stage: the profiler's last stop, inputs.json from src
// (nil: a source of its own) once anything was sent, as AIPerf the run
// going on without it (an interrupted run's: the conversations it sent,
// written whatever the interrupt), and the warnings logged (the phases'
// own, already on out, with the profiler's).
func (c *cell) endPhases(ctx context.Context, prof *bracketing, src *source, out *phasesOutcome) {
	out.warnings = append(out.warnings, prof.finish()...)
	prof.mu.Lock()
	out.reached = prof.reached
	prof.mu.Unlock()
	if c.o.InputsFile != "" && c.fin.pushed.Load() > 0 {
		var err error
		if src == nil {
			if src, err = c.source(nil); err == nil {
				defer src.Stop()
			}
		}
		wctx, only := ctx, (func(int) bool)(nil)
		switch {
		case ctx.Err() != nil:
			wctx, only = context.WithoutCancel(ctx), c.sent.has
		case dataset.IsTrace(c.ds):
			// A trace's prompts are made from its lengths: a small file can
			// ask for gigabytes, so only what was sent is written.
			only = c.sent.has
		}
		if err == nil {
			err = writeInputsSomewhere(wctx, c.o.InputsFile, src, only)
		}
		switch {
		case errors.Is(err, dataset.ErrInputChanged):
			out.warnings = append(out.warnings, fmt.Sprintf("%s not written: it would not show what was sent: %v", InputsFile, err))
		case err != nil:
			out.warnings = append(out.warnings, err.Error())
		}
	}
	for _, w := range out.warnings {
		c.logWarning(w)
	}
}

// bracketing is what surrounds each phase: the scrapes that mark its
// window (every phase) and the server profiler (profiling phases only).
type bracketing struct {
	c        *cell
	ctx      context.Context // the run's
	profiler *hooks.Profiler // nil when the hook is off
	col      *servermetrics.Collector

	live     *liveProfiler // what the profiler may be doing, for a hard exit (profiler.go)
	mu       sync.Mutex
	reached  reached
	logged   int // profiler calls already logged
	warnings []string
	// begun holds the self-check snapshot of each profiling phase under
	// way; window accumulates the finished ones.
	begun  map[string]selfcheck.Snapshot
	window selfcheck.Window
	phases int // profiling phases measured
}

// bracket makes the phases' hooks: right before a phase sends, the
// profiler starts (profiling phases) and then the collector marks the
// phase's begin; once it drained, the collector marks its end and then the
// profiler stops. The client's self-check spans every profiling phase.
func (c *cell) bracket(ctx context.Context, col *servermetrics.Collector) *bracketing {
	b := &bracketing{c: c, ctx: ctx, col: col, begun: map[string]selfcheck.Snapshot{}}
	if h := c.p.ProfilerHook(); h.Enabled {
		b.profiler = c.control.Profiler(c.p.Origins(), h).WithMark(c.o.ProfilerMark)
		b.live = newLiveProfiler(c, h)
	}
	return b
}

// hooks are the engine's (or the workers' coordinator's) phase hooks.
func (b *bracketing) hooks() load.Hooks {
	col := b.col
	var h load.Hooks
	h.BeforeSend = func(ctx context.Context, ph plan.Phase) error {
		if b.profiler != nil && ph.Kind == plan.KindProfiling {
			err := b.startProfiler(ctx, ph.Name)
			b.logNew()
			if err != nil {
				if ctx.Err() != nil {
					b.mu.Lock()
					b.reached.startCut = true
					b.mu.Unlock()
				}
				return err
			}
		}
		if col != nil {
			col.Mark(ph.Name, true)
			if ctx.Err() != nil { // the interrupt cut the scrape: the phase sends nothing
				b.mu.Lock()
				b.reached.scrapeCut = ph.Kind
				b.mu.Unlock()
				return nil
			}
		}
		b.mu.Lock()
		b.reached.sending = append(b.reached.sending, ph)
		if ph.Kind == plan.KindProfiling {
			b.begun[ph.Name] = selfcheck.Take()
		}
		b.mu.Unlock()
		return nil
	}
	h.Drained = func(ph plan.Phase) {
		b.mu.Lock()
		if b.ctx.Err() == nil { // every request of the phase returned before any interrupt
			b.reached.drained++
		}
		b.mu.Unlock()
		if ph.Kind == plan.KindProfiling {
			end := selfcheck.Take()
			b.mu.Lock()
			if begin, ok := b.begun[ph.Name]; ok {
				b.window.Add(begin, end)
				b.phases++
				delete(b.begun, ph.Name)
			}
			b.mu.Unlock()
		}
		if col != nil {
			col.Mark(ph.Name, false)
		}
		if b.profiler != nil && ph.Kind == plan.KindProfiling {
			// The engine runs a seamless successor's BeforeSend first, so
			// back-to-back profiling phases share one start/stop.
			b.stopProfiler(ph.Name)
			b.logNew()
		}
	}
	return h
}

// health is the self-check over the profiling phases that drained, and
// whether there was any.
func (b *bracketing) health() (selfcheck.Report, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.window.Report(), b.phases > 0
}

// finish stops a profiler still running (Ctrl-C, a failed phase), records
// every profiler call on the run and returns the stop failures.
func (b *bracketing) finish() []string {
	if b.profiler == nil {
		return nil
	}
	b.stopProfiler("")
	b.live.forget()
	b.c.run.ControlHooks = append(b.c.run.ControlHooks, b.profiler.Calls()...)
	b.logNew()
	return b.warnings
}

func (b *bracketing) warn(err error) {
	if err != nil {
		b.mu.Lock()
		b.warnings = append(b.warnings, err.Error())
		b.mu.Unlock()
	}
}

// logNew logs the profiler calls made since the last time.
func (b *bracketing) logNew() {
	b.mu.Lock()
	defer b.mu.Unlock()
	calls := b.profiler.Calls()
	logCalls(b.c.log, calls[b.logged:])
	b.logged = len(calls)
}

func maxInFlight(phases []plan.Phase) int {
	n := 1
	for _, ph := range phases {
		c := ph.Concurrency
		if c == 0 { // uncapped rate: size the idle pool for ~2 s of requests
			c = int(ph.Rate * 2)
		}
		n = max(n, c)
	}
	return min(n, 65536)
}

func expectedRequests(phases []plan.Phase) int {
	n := 0
	for _, ph := range phases {
		n += ph.Requests
	}
	return min(n, 1<<20)
}
