package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aiperf-go/aiperf/internal/dataset"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/servermetrics"
	"github.com/aiperf-go/aiperf/internal/termsafe"
)

// reduce turns the finished records into the run's result: summaries per
// phase kind (the profiling one with the GPUs' power efficiency when their
// telemetry was scraped), the error summary, the client's audit and the
// reset check; a worker's, its audit of its share alone (judgeShare).
func (c *cell) reduce(ctx context.Context, out phasesOutcome) {
	run := c.run
	run.EndTime = time.Now()
	records, uncounted, jsonl, err := c.fin.wait(ctx)
	if err != nil { // the exports report the directory's trouble themselves
		c.logWarning(err.Error())
	}
	run.Records, run.StreamedJSONL = records, jsonl
	prof, warm := byKind(records)
	run.Profiling = metrics.Summarize(prof, c.p.Streaming, c.slos()...)
	if c.worker != nil {
		c.judgeShare(prof, out, uncounted)
		return
	}
	if c.p.PerChunkUsage {
		if w := metrics.ChunkUsageWarning(prof, c.p.Streaming); w != "" {
			c.warn(w)
		}
	}
	if run.Server != nil {
		for _, w := range metrics.AddEnergy(&run.Profiling, servermetrics.GPUEnergy(run.Server), c.profilingConcurrency()) {
			c.warn(w)
		}
	}
	c.adjustForNetwork()
	if d := c.p.SliceDuration; d != nil {
		run.Timeslices = metrics.Timeslices(prof, int64(*d*1e9), c.p.Streaming, c.slos()...)
	}
	if len(warm) > 0 {
		s := metrics.Summarize(warm, c.p.Streaming)
		run.Warmup = &s
	}
	run.ErrorSummary = metrics.Errors(prof)
	run.Phases = c.phaseResults(records, out.reached.sending)
	run.Audit = audit(c.p, out.reports, prof, out.stallP99, out.stallMax)
	run.Audit.TokensCountedWith = c.counted
	if out.measured {
		judgeHealth(&run.Audit, out.health, run.Profiling, c.p.Streaming)
	}
	if out.workers != nil {
		judgeWorkers(&run.Audit, out.workers)
	}
	if c.p.ResetHook().Enabled {
		c.verifyReset(records)
	} else if w := warmCache(records, c.independentPrompts()); w != "" {
		run.Audit.Warnings = append(run.Audit.Warnings, w)
	}
	if out.stoppedBy != "" {
		run.Audit.Warnings = append(run.Audit.Warnings, c.stoppedNote(out.stoppedBy, len(prof)))
	}
	run.Audit.Warnings = append(append(run.Audit.Warnings, c.warnings...), out.warnings...)
	for _, tag := range run.Profiling.Dropped {
		run.Audit.Warnings = append(run.Audit.Warnings, fmt.Sprintf(
			"%s is left out of the summary: its values are too large to sum in a float64 (check what the server reported)", tag))
	}
	if st := &c.fin.state; st.bare > 0 {
		run.Audit.Warnings = append(run.Audit.Warnings, fmt.Sprintf(
			"--apply-chat-template: the ISL of %d requests is their bare count: the chat template did not render their conversation (the first: %v)", st.bare, st.bareErr))
	}
	if uncounted > 0 {
		run.Audit.Warnings = append(run.Audit.Warnings, c.fin.uncountedWarning(uncounted))
	}
}

// stoppedNote words why the sending stopped early (stoppedBy, the
// --failed-request-threshold verdict) and what it left unsent of the sent
// profiling requests planned.
func (c *cell) stoppedNote(stoppedBy string, sent int) string {
	w := stoppedBy + ": the sending stopped there"
	if planned := c.plannedProfiling(); planned > sent {
		w += fmt.Sprintf(", so %d of %d profiling requests were never sent", planned-sent, planned)
	}
	return w
}

// judgeShare is a worker's audit of its share of a sharded cell (prof its
// profiling records): whether it kept up (workerAudit, its own health),
// nothing more. Every judgement of the cell (the prefix cache warm at the
// start, the KV reset's verification, the notes of the replies and of
// the cap, the tokens' and the chat template's warnings) is the
// coordinator's, over the merged records: made on one worker's part it can
// be false (another worker sent a prompt first, so its first request here
// hit the cache) and would be filed under the worker that could not keep
// up. What is the worker's own is said: the replies it left uncounted
// (counting interrupted), which the coordinator cannot see in the merged
// records.
func (c *cell) judgeShare(prof []metrics.Record, out phasesOutcome, uncounted int) {
	run := c.run
	run.Audit = workerAudit(c.p, out.reports, prof, out.stallP99, out.stallMax)
	if out.measured {
		judgeHealth(&run.Audit, out.health, run.Profiling, c.p.Streaming)
	}
	if uncounted > 0 {
		run.Audit.Warnings = append(run.Audit.Warnings, c.fin.uncountedWarning(uncounted))
	}
}

// profilingConcurrency is the first profiling phase's concurrency (its
// slots, or its in-flight cap with a rate), 0 when it has none: what
// AIPerf divides the GPU energy by for its energy per user.
func (c *cell) profilingConcurrency() int {
	for _, ph := range c.phases {
		if ph.Kind == plan.KindProfiling {
			return ph.Concurrency
		}
	}
	return 0
}

// slos are the run's --goodput objectives (checked with the profile).
func (c *cell) slos() []metrics.SLO {
	parsed, _ := plan.ParseGoodput(c.p.Goodput)
	out := make([]metrics.SLO, len(parsed))
	for i, o := range parsed {
		out[i] = metrics.SLO(o)
	}
	return out
}

// independentPrompts reports whether the run's prompts share no prefix by
// construction: synthetic single-turn prompts with no shared or verbatim system prompt,
// user context or prefix pool.
func (c *cell) independentPrompts() bool {
	p := &c.p
	return p.InputFile == "" && !p.Multi() && p.SharedSystemPromptLength == nil && !p.HasSystemPrompt() && p.UserContextPromptLength == nil &&
		p.PromptPrefixPoolSize == 0
}

// byKind orders records profiling first, then warmup, each kind in its
// own order, and returns the two parts. It works in place: only the warmup
// records are copied aside, so a million profiling records are not copied.
func byKind(records []metrics.Record) (prof, warm []metrics.Record) {
	var aside []metrics.Record
	j := 0
	for i := range records {
		if records[i].PhaseKind == plan.KindProfiling {
			records[j] = records[i]
			j++
		} else {
			aside = append(aside, records[i])
		}
	}
	copy(records[j:], aside)
	return records[:j], records[j:]
}

// finish sets the run's final status from how the phases ended.
func (c *cell) finish(ctx context.Context, out phasesOutcome) (*result.Run, error) {
	prof, warm := byKind(c.run.Records)
	switch {
	case errors.Is(out.err, context.Canceled) || ctx.Err() != nil: // a Ctrl-C, during the load or after it
		cause := context.Cause(ctx)
		if cause == nil {
			cause = out.err
		}
		r := out.reached
		r.planned = c.plannedProfiling()
		draining := ""
		if out.stoppedBy != "" {
			draining = " while the requests in flight drained after " + out.stoppedBy + ", which stopped the sending"
		}
		return c.fail(fmt.Errorf("interrupted %s%s: %w", r.where(len(c.phases), prof, warm), draining, cause))
	case out.err != nil:
		return c.fail(out.err)
	}
	if err := nothingSent(c.phases, out.reports, prof); err != nil {
		return c.fail(err)
	}
	if err := allFailed(c.run, prof); err != nil {
		if hint := tlsHint(ctx, c.run.ErrorSummary, c.p.Origins()); hint != "" {
			err = noSuccess(err.Error() + "; " + hint)
		}
		return c.fail(err)
	}
	c.run.Status = result.StatusComplete
	return c.run, nil
}

// reached is how far a run's phases got: it places an interrupt by what
// the phases had done, not by when the signal came.
type reached struct {
	sending  []plan.Phase // the phases that began sending, in order
	drained  int          // of them, those whose every request returned before the interrupt
	startCut bool         // the interrupt cut a profiler start call: its phase sent nothing
	// scrapeCut is the kind of the phase whose opening server-metrics
	// scrape the interrupt cut ("": none): that phase sent nothing.
	scrapeCut string
	stopCut   bool // the interrupt came while a profiler stop call went
	// planned is how many profiling requests the phases would send (0:
	// not known, a phase of a duration).
	planned int
}

// plannedProfiling is how many requests the cell's profiling phases would
// send: each phase's count, a fixed schedule's whole trace without one;
// 0 when a phase ends by its duration alone.
func (c *cell) plannedProfiling() int {
	n := 0
	for _, ph := range c.phases {
		switch {
		case ph.Kind != plan.KindProfiling:
		case ph.Duration > 0:
			return 0
		case ph.Fixed && ph.Requests == 0:
			n += dataset.Turns(c.ds)
		case ph.Fixed:
			n += min(ph.Requests, dataset.Turns(c.ds))
		case ph.Requests > 0:
			n += ph.Requests
		default:
			return 0
		}
	}
	return n
}

// where says where the interrupted run had got to, of phases in all, with
// its profiling and warmup records: what follows "interrupted" in its
// error.
func (r reached) where(phases int, prof, warm []metrics.Record) string {
	if r.scrapeCut != "" && len(r.sending) == 0 {
		return "while " + string(stageCollect)
	}
	w := "(" + r.when(phases, prof, warm) + ")"
	if r.stopCut {
		w += " while stopping the server profiler"
	}
	return w
}

// when says where the interrupted run had got to, of phases in all, with
// its profiling and warmup records.
func (r reached) when(phases int, prof, warm []metrics.Record) string {
	last := plan.Phase{}
	if len(r.sending) > 0 {
		last = r.sending[len(r.sending)-1]
	}
	switch {
	case len(r.sending) == phases && r.drained == phases:
		return "after the load: " + returned(prof, plan.KindProfiling)
	case r.startCut && len(warm) > 0:
		return "during the server profiler start call, after warmup (" + returned(warm, plan.KindWarmup) + "): no profiling request was sent"
	case r.startCut:
		return "during the server profiler start call: no request was sent"
	case r.scrapeCut == plan.KindProfiling && len(prof) == 0 && len(warm) > 0:
		return "during the server-metrics scrape that begins profiling, after warmup (" + returned(warm, plan.KindWarmup) +
			"): no profiling request was sent"
	case len(r.sending) == 0:
		return "before any request was sent"
	case last.Kind == plan.KindWarmup && r.drained == len(r.sending):
		return "after warmup (" + returned(warm, plan.KindWarmup) + "), before any profiling request was sent"
	case last.Kind == plan.KindWarmup:
		return "during warmup: " + returned(warm, plan.KindWarmup) + "; no profiling request was sent"
	}
	w := "during profiling: " + returned(prof, plan.KindProfiling)
	if unsent := r.planned - len(prof); unsent > 0 {
		were := "were"
		if unsent == 1 {
			were = "was"
		}
		w += fmt.Sprintf("; %d of %d %s never sent", unsent, r.planned, were)
	}
	return w
}

// returned says how many of records (requests of kind) had returned and
// how many were cut.
func returned(records []metrics.Record, kind string) string {
	cut := 0
	for i := range records {
		if records[i].Cancelled {
			cut++
		}
	}
	if cut == 0 {
		return fmt.Sprintf("all %d %s requests had returned", len(records), kind)
	}
	were := "were"
	if cut == 1 {
		were = "was"
	}
	return fmt.Sprintf("%d of %d %s requests had returned, %d %s cut", len(records)-cut, len(records), kind, cut, were)
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
		msg = fmt.Sprintf("no profiling request completed: all %d were cut (%s), excluded", cut, run.Audit.CutWhy())
	default:
		msg = fmt.Sprintf("no profiling request succeeded: %d of %d failed, %d were cut (%s), excluded",
			nFailed, len(prof), cut, run.Audit.CutWhy())
	}
	if len(run.ErrorSummary) > 0 {
		e := run.ErrorSummary[0].Error
		msg += fmt.Sprintf(" (e.g. %s %d: %s)", e.Type, e.Code, termsafe.Text(e.Message))
	}
	return noSuccess(msg)
}

// noSuccess is the error of a run without a successful profiling request.
type noSuccess string

func (e noSuccess) Error() string { return string(e) }

// Is makes a noSuccess match ErrAllFailed.
func (e noSuccess) Is(target error) bool { return target == ErrAllFailed }
