// Package bench runs one benchmark cell end to end: it prepares the
// tokenizer and prompts, resets the server's KV cache once, drives the phases
// (bracketing profiling phases with the server profiler), reduces the records
// and returns a result.Run. It writes nothing to disk; the caller exports and
// stores the result.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aiperf-go/aiperf/hooks"
	"github.com/aiperf-go/aiperf/internal/dataset"
	"github.com/aiperf-go/aiperf/internal/load"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/openai"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// Options configure one run.
type Options struct {
	Profile    plan.Profile // validated by the caller
	Info       result.TrialInfo
	Name       string
	CLICommand string // already redacted
	Version    string
	// Progress receives live progress lines (nil: none).
	Progress io.Writer
	// Log receives warnings and hook activity (nil: discarded).
	Log io.Writer
	// ProfilerMark is where the profiler leaves its hooks.Mark while it may
	// be running (a sweep child's trial dir); "" for none.
	ProfilerMark string
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
	p := o.Profile
	logw := o.Log
	if logw == nil {
		logw = io.Discard
	}
	host, _ := os.Hostname()
	clock := load.NewClock()
	run := &result.Run{
		BenchmarkID:  newID(),
		ToolVersion:  o.Version,
		Host:         host,
		Config:       p.Redacted(),
		CLICommand:   o.CLICommand,
		Name:         o.Name,
		Info:         o.Info,
		StartTime:    clock.Start(),
		Status:       result.StatusFailed,
		ControlHooks: []hooks.Call{},
		ErrorSummary: []metrics.ErrorCount{},
		Records:      []metrics.Record{},
	}
	fail := func(err error) (*result.Run, error) {
		run.EndTime = time.Now()
		run.Error = err.Error()
		if errors.Is(err, context.Canceled) {
			run.Status = result.StatusInterrupted
			run.WasCancelled = true
		}
		return run, err
	}

	tok, err := tokenizer.Load(p.Tokenizer)
	if err != nil {
		return fail(&InputError{fmt.Errorf("load tokenizer (nothing was sent): %w", err)})
	}
	entries, err := dataset.Synthetic(tok, datasetOptions(p))
	if err != nil {
		return fail(fmt.Errorf("generate synthetic prompts: %w", err))
	}
	if err := preflight(ctx, p.Origins()); err != nil {
		return fail(err)
	}

	control := hooks.New(controlHeaders(p))
	if h := p.ResetHook(); h.Enabled {
		calls, err := control.Reset(ctx, p.Origins(), h)
		run.ControlHooks = append(run.ControlHooks, calls...)
		logCalls(logw, calls)
		if err != nil {
			return fail(fmt.Errorf("reset kv cache (no load was sent): %w", err))
		}
	}

	phases := p.PhaseList()
	client := openai.New(openai.Options{
		MaxEventBytes: p.MaxEventBytes,
		MaxConns:      maxInFlight(phases),
		Timeout:       time.Duration(p.RequestTimeoutSeconds * float64(time.Second)),
		Headers:       requestHeaders(p, o.Version),
		Now:           clock.Now,
	})
	defer client.Close()

	var mu sync.Mutex
	records := make([]metrics.Record, 0, expectedRequests(phases))
	counts := newOutputCounts(tok)
	engine := &load.Engine{
		Clock:    clock,
		Send:     newSender(p, counts, client, entries),
		Precise:  p.PrecisePacing,
		Seed:     p.RandomSeed,
		OnRecord: func(r metrics.Record) { mu.Lock(); records = append(records, r); mu.Unlock() },
	}
	var profiler *hooks.Profiler
	var stopWarnings []string
	logged := 0 // profiler calls already logged
	logNewCalls := func() {
		calls := profiler.Calls()
		logCalls(logw, calls[logged:])
		logged = len(calls)
	}
	if h := p.ProfilerHook(); h.Enabled {
		profiler = control.Profiler(p.Origins(), h).WithMark(o.ProfilerMark)
		engine.Hooks.BeforeSend = func(ctx context.Context, ph plan.Phase) error {
			if ph.Kind != plan.KindProfiling {
				return nil
			}
			err := profiler.Start(ctx, ph.Name)
			mu.Lock()
			logNewCalls()
			mu.Unlock()
			return err
		}
		engine.Hooks.Drained = func(ph plan.Phase) {
			if ph.Kind != plan.KindProfiling {
				return
			}
			// The engine runs a seamless successor's BeforeSend first, so
			// back-to-back profiling phases share one start/stop.
			err := profiler.Stop(context.Background(), ph.Name)
			mu.Lock()
			defer mu.Unlock()
			logNewCalls()
			if err != nil {
				stopWarnings = append(stopWarnings, err.Error())
			}
		}
	}

	stopProgress := startProgress(o.Progress, engine, clock)
	stall := load.StartStallMonitor(10 * time.Millisecond)
	reports, runErr := engine.Run(ctx, phases)
	stallP99, stallMax := stall.Stop()
	stopProgress()
	if profiler != nil {
		if err := profiler.StopAll(context.Background()); err != nil {
			stopWarnings = append(stopWarnings, err.Error())
		}
		run.ControlHooks = append(run.ControlHooks, profiler.Calls()...)
		logNewCalls()
	}
	for _, w := range stopWarnings {
		fmt.Fprintf(logw, "warning: %s\n", w)
	}

	run.EndTime = time.Now()
	uncounted := counts.fill(ctx, records)
	for i := range records {
		records[i].WallStartNs = clock.Wall(records[i].SentNs)
		metrics.CheckUsage(&records[i])
	}
	run.Records = records
	var prof, warm []metrics.Record
	for _, r := range records {
		if r.PhaseKind == plan.KindProfiling {
			prof = append(prof, r)
		} else {
			warm = append(warm, r)
		}
	}
	run.Profiling = metrics.Summarize(prof, p.Streaming)
	if len(warm) > 0 {
		s := metrics.Summarize(warm, p.Streaming)
		run.Warmup = &s
	}
	run.ErrorSummary = metrics.Errors(prof)
	run.Audit = audit(p, reports, prof, stallP99, stallMax)
	if p.ResetHook().Enabled {
		run.Audit.KVReset, run.Audit.KVResetDetail = checkReset(records)
		if run.Audit.KVReset == result.ResetNotCleared {
			run.Audit.Warnings = append(run.Audit.Warnings, "kv cache reset: "+run.Audit.KVResetDetail)
		}
	}
	run.Audit.Warnings = append(run.Audit.Warnings, stopWarnings...)
	if uncounted > 0 {
		run.Audit.Warnings = append(run.Audit.Warnings, fmt.Sprintf(
			"interrupted while counting output tokens: %d responses were not counted by the client (their OSL is the server's usage where it reported one)", uncounted))
	}

	switch {
	case errors.Is(runErr, context.Canceled) || ctx.Err() != nil: // a Ctrl-C, during the load or after it
		return fail(fmt.Errorf("interrupted (%s): %w", interruptedWhen(prof), context.Cause(ctx)))
	case runErr != nil:
		return fail(runErr)
	}
	if err := allFailed(run, prof); err != nil {
		return fail(err)
	}
	run.Status = result.StatusComplete
	return run, nil
}

// interruptedWhen says how far the profiling load had got when the run was
// interrupted.
func interruptedWhen(prof []metrics.Record) string {
	cut := 0
	for i := range prof {
		if prof[i].Cancelled {
			cut++
		}
	}
	if cut == 0 {
		return fmt.Sprintf("after the load: all %d profiling requests had returned", len(prof))
	}
	return fmt.Sprintf("%d of %d profiling requests had returned, %d were cut", len(prof)-cut, len(prof), cut)
}

// allFailed returns an error that is ErrAllFailed, saying what happened to
// the requests, when no profiling request succeeded.
func allFailed(run *result.Run, prof []metrics.Record) error {
	succeeded, _ := run.Profiling.Get(metrics.TagRequestCount)
	if succeeded.Value > 0 || len(prof) == 0 {
		return nil
	}
	failed, _ := run.Profiling.Get(metrics.TagErrorRequestCount)
	nFailed, cut := int(failed.Value), len(prof)-int(failed.Value)
	var msg string
	switch {
	case cut == 0:
		msg = fmt.Sprintf("every profiling request failed: %d of %d", nFailed, len(prof))
	case nFailed == 0:
		msg = fmt.Sprintf("no profiling request completed: all %d were still in flight at the end of the grace period (cut, excluded)", cut)
	default:
		msg = fmt.Sprintf("no profiling request succeeded: %d of %d failed, %d were still in flight at the end of the grace period (cut, excluded)",
			nFailed, len(prof), cut)
	}
	if len(run.ErrorSummary) > 0 {
		e := run.ErrorSummary[0].Error
		msg += fmt.Sprintf(" (e.g. %s %d: %s)", e.Type, e.Code, e.Message)
	}
	return noSuccess(msg)
}

// noSuccess is the error of a run without a successful profiling request.
type noSuccess string

func (e noSuccess) Error() string { return string(e) }

// Is makes a noSuccess match ErrAllFailed.
func (e noSuccess) Is(target error) bool { return target == ErrAllFailed }

// InputError is a failure of the user's input found before any traffic (a
// tokenizer that does not load): a usage error, not a runtime one.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *InputError) Unwrap() error { return e.Err }

func datasetOptions(p plan.Profile) dataset.Options {
	o := dataset.Options{
		ISLMean:   p.SyntheticInputTokensMean,
		ISLStddev: p.SyntheticInputTokensStddev,
		OSLStddev: p.OutputTokensStddev,
		Entries:   p.NumDatasetEntries,
		Seed:      p.RandomSeed,
	}
	if p.OutputTokensMean != nil {
		o.OSLMean = *p.OutputTokensMean
	}
	return o
}

// newSender builds the per-request function: pick a prompt (shuffled,
// seeded), a URL and a model (round-robin), send, keep the output text for
// counting after the run.
func newSender(p plan.Profile, counts *outputCounts, client *openai.Client, entries []dataset.Entry) load.Sender {
	urls := p.RequestURLs()
	sampler := dataset.NewSampler(len(entries), p.RandomSeed)
	extra := map[string]any{}
	for _, e := range p.ExtraInputs {
		m, _ := plan.ParseExtraInput(e) // validated already
		for k, v := range m {
			extra[k] = v
		}
	}
	idPrefix := newID()[:8]
	// Bodies depend only on the prompt and the model: encode each once, off
	// the path between a request's scheduled time and its send on repeats.
	bodies := make([]atomic.Pointer[[]byte], len(entries)*len(p.Model))
	return func(ctx context.Context, c load.Credit) metrics.Record {
		prompt := sampler.Next()
		e := entries[prompt]
		u := c.Index % len(urls)
		model := c.Index % len(p.Model)
		req := openai.Request{
			URL:          urls[u],
			EndpointType: p.EndpointType,
			Model:        p.Model[model],
			Prompt:       e.Prompt,
			MaxTokens:    e.MaxTokens,
			Streaming:    p.Streaming,
			Extra:        extra,
			RequestID:    fmt.Sprintf("%s-%06d", idPrefix, c.Index),
		}
		slot := &bodies[prompt*len(p.Model)+model]
		if b := slot.Load(); b != nil {
			req.Body = *b
		} else if b, err := openai.Body(req); err == nil { // an error is reported by Do
			req.Body = b
			slot.Store(&b)
		}
		resp := client.Do(ctx, req)
		rec := metrics.Record{
			Index:                 c.Index,
			Phase:                 c.Phase.Name,
			PhaseKind:             c.Phase.Kind,
			Prompt:                prompt,
			RequestID:             req.RequestID,
			URL:                   u,
			Model:                 req.Model,
			Streaming:             p.Streaming,
			ScheduledNs:           c.ScheduledNs,
			SentNs:                resp.SentNs,
			EndNs:                 resp.EndNs,
			InputTokens:           e.InputTokens,
			RequestedOutputTokens: e.MaxTokens,
			Usage:                 resp.Usage,
			Status:                resp.Status,
			Error:                 resp.Err,
			Retried:               resp.Retried,
			MalformedChunks:       resp.MalformedChunks,
		}
		if len(resp.Chunks) > 0 {
			rec.ResponseNs = make([]int64, len(resp.Chunks))
			var text, reasoning strings.Builder
			for i, ch := range resp.Chunks {
				rec.ResponseNs[i] = ch.At
				if rec.FirstOutputNs == 0 && ch.Text != "" {
					rec.FirstOutputNs = ch.At
				}
				text.WriteString(ch.Text)
				reasoning.WriteString(ch.Reasoning)
			}
			counts.add(&rec, text.String(), reasoning.String())
		}
		return rec
	}
}

// preflight dials every origin once so an unreachable server is one clear
// line, not a stack of per-request timeouts.
func preflight(ctx context.Context, origins []string) error {
	d := net.Dialer{Timeout: 5 * time.Second}
	for _, o := range origins {
		u, err := url.Parse(o)
		if err != nil {
			return fmt.Errorf("parse server url %q: %w", o, err)
		}
		port := u.Port()
		if port == "" {
			port = "80"
			if u.Scheme == "https" {
				port = "443"
			}
		}
		conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(u.Hostname(), port))
		if err != nil {
			return fmt.Errorf("server %s is unreachable: %w", o, err)
		}
		conn.Close()
	}
	return nil
}

// requestHeaders are the inference headers: user headers, auth, user agent.
func requestHeaders(p plan.Profile, version string) http.Header {
	h := controlHeaders(p)
	h.Set("User-Agent", "aiperf/"+version)
	return h
}

// controlHeaders are the headers control hooks send.
func controlHeaders(p plan.Profile) http.Header { return hooks.Headers(p) }

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

func newID() string {
	return fmt.Sprintf("%016x%016x", rand.Uint64(), rand.Uint64())
}
