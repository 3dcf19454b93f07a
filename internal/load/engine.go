package load

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// spinWindow is how long before a send precise pacing stops sleeping and
// spins: Go's timers on these VMs fire up to ~1.3 ms late (p99), so 2 ms.
const spinWindow = 2 * time.Millisecond

// Credit is the permission to send one request.
type Credit struct {
	Index       int         // issue order within the run, from 0
	Phase       *plan.Phase // the phase that issued it
	ScheduledNs int64       // when the schedule wanted it sent (clock ns)
	Session     int         // the session's number within the run, from 0
	Turn        int         // the turn within its session, from 0
	// PhaseNum is the issue order within the phase, from 0 (AIPerf's
	// request_num); IssuedNs is when the engine issued the credit, once
	// its time came, and ReceivedNs when the sender took it up (clock ns).
	PhaseNum             int
	IssuedNs, ReceivedNs int64
	// SendBy is the end of the phase's duration (clock ns; 0: none): a
	// request that would go out at or after it is not sent
	// (metrics.Record.NotSent).
	SendBy int64
	// FirstToken, set under a prefill cap, releases the request's prefill
	// slot: the session calls it when the first token arrives (the engine
	// does when the request ends, if it was not called).
	FirstToken func()
}

// Hooks are the phase callbacks: the place where profiler control lives.
type Hooks struct {
	// BeforeSend runs right before a phase sends its first request. An error
	// aborts the run before that phase sends anything.
	BeforeSend func(ctx context.Context, ph plan.Phase) error
	// Drained runs once every request of a phase has returned (or was
	// cancelled at the end of its grace period).
	Drained func(ph plan.Phase)
	// Start, when set, is the phase's start instant (clock ns), the origin
	// of its schedule and duration, in place of the moment BeforeSend
	// returned: a sharded cell's common start, which a worker's timer may
	// have woken late for.
	Start func(ph plan.Phase) int64
}

// Engine runs phases. Its fields are set before Run and not changed after.
type Engine struct {
	Clock  Clock
	Source Source // the sessions to replay (SingleTurn for independent requests)
	// Fixed is the schedule of phases with Fixed set (nil: none).
	Fixed    FixedStarts
	Hooks    Hooks
	Precise  bool  // spin the last stretch before each scheduled send
	Seed     int64 // seeds Poisson arrivals (phase i uses Seed+i)
	OnRecord func(metrics.Record)

	index    atomic.Int64
	sessions atomic.Int64
	current  atomic.Pointer[Progress]

	stopMu      sync.Mutex
	stopped     bool
	stopIssuing context.CancelFunc // Run's, while it runs
}

// Stop ends the run's issuing for good, as a user's cancel would but
// without cutting anything: the current phase sends nothing more from the
// moment Stop returns, no later phase starts, and the requests in flight
// finish (within their phase's grace period). Safe to call from OnRecord,
// before Run and more than once.
func (e *Engine) Stop() {
	e.stopMu.Lock()
	defer e.stopMu.Unlock()
	e.stopped = true
	if e.stopIssuing != nil {
		e.stopIssuing()
	}
}

// PhaseReport is what the engine knows about a phase once it drained.
type PhaseReport struct {
	Phase                     plan.Phase
	Sent                      int                  // credits issued
	Sessions                  int                  // sessions started
	Cancelled                 int                  // requests cut at the end of the grace period (or by Ctrl-C)
	CapDelayed                int                  // rate and fixed modes: sends that waited for a free in-flight slot
	CapSkipped                int                  // rate mode: sends dropped because the in-flight cap was full (CapSkip)
	ReplyGated                int                  // later turns whose absolute time passed while they waited for the previous reply
	NotSent                   int                  // credits claimed in time whose send came at or after the duration's end: not sent, not in Sent
	Branches                  *metrics.BranchStats // the branches of a Brancher's sessions (nil: none started)
	StartNs                   int64                // when the phase began sending
	FirstSchedNs, LastSchedNs int64                // the earliest and the latest scheduled send, a CapSkipped one included
}

// Progress counts the requests of one phase, for the progress display.
type Progress struct {
	Phase   *plan.Phase
	StartNs int64 // clock stamp when the phase started
	Sent    atomic.Int64
	Done    atomic.Int64
	Errors  atomic.Int64
}

// Progress returns the live counters of the phase issuing most recently (nil
// before the first one starts); safe to call while Run is going. A seamless
// predecessor's late completions count toward its own phase, not this one.
func (e *Engine) Progress() *Progress { return e.current.Load() }

// Run executes the phases in order. A seamless phase starts as soon as the
// previous one stops issuing; otherwise the previous phase drains first. The
// hooks are ordered so that reference counting works: a seamless phase's
// BeforeSend returns before its predecessor's Drained runs. On ctx
// cancellation it stops issuing, cancels in-flight requests, waits for every
// phase to drain (so Drained hooks run) and returns ctx.Err(); after Stop it
// stops issuing and lets the phase drain as usual.
func (e *Engine) Run(ctx context.Context, phases []plan.Phase) ([]PhaseReport, error) {
	reports := make([]PhaseReport, len(phases))
	// issuing ends with ctx or at Stop; in-flight requests only with ctx.
	issuing, stopIssuing := context.WithCancel(ctx)
	defer stopIssuing()
	e.stopMu.Lock()
	e.stopIssuing = stopIssuing
	if e.stopped {
		stopIssuing()
	}
	e.stopMu.Unlock()
	var prevDrained <-chan struct{}
	var all []<-chan struct{}
	// handoff is open while a seamless successor has yet to start; the
	// current phase's Drained hook waits for it to close.
	var handoff chan struct{}
	finish := func() {
		if handoff != nil {
			close(handoff)
			handoff = nil
		}
		for _, d := range all {
			<-d
		}
	}
	for i := range phases {
		ph := &phases[i]
		if prevDrained != nil && !ph.Seamless {
			select {
			case <-prevDrained:
			case <-ctx.Done():
			}
		}
		if issuing.Err() != nil {
			break
		}
		if e.Hooks.BeforeSend != nil {
			if err := e.Hooks.BeforeSend(ctx, *ph); err != nil {
				finish()
				return reports, err
			}
		}
		if handoff != nil { // the seamless successor has started
			close(handoff)
			handoff = nil
		}
		h := make(chan struct{})
		if i+1 < len(phases) && phases[i+1].Seamless {
			handoff = h
		} else {
			close(h)
		}
		drained := e.runPhase(ctx, issuing, ph, &reports[i], int64(i), h)
		all = append(all, drained)
		prevDrained = drained
	}
	finish()
	return reports, ctx.Err()
}

// runPhase issues the phase's requests and returns once it stops issuing: its
// count is sent, its sessions are done, its duration is over or ctx ended.
// The returned channel closes when the phase has drained and its Drained
// hook, which first waits for handoff, has run. A phase with a duration and
// a grace period cancels the requests still in flight at start + duration +
// grace.
func (e *Engine) runPhase(ctx, issuing context.Context, ph *plan.Phase, r *PhaseReport, n int64, handoff <-chan struct{}) <-chan struct{} {
	phaseCtx, cancel := context.WithCancelCause(ctx)
	r.Phase = *ph
	r.StartNs = e.Clock.Now()
	if e.Hooks.Start != nil {
		r.StartNs = e.Hooks.Start(*ph)
	}
	// issueCtx ends when the phase must stop issuing: at the end of its
	// duration, measured on the phase's clock, or when issuing ends.
	issueCtx, stopIssuing := issuing, context.CancelFunc(func() {})
	if ph.Duration > 0 {
		issueCtx, stopIssuing = context.WithDeadline(issuing, e.Clock.Start().Add(time.Duration(r.StartNs)+seconds(ph.Duration)))
	}
	defer stopIssuing()
	progress := &Progress{Phase: ph, StartNs: r.StartNs}
	e.current.Store(progress)

	p := &phaseRun{e: e, ph: ph, r: r, n: n, issueCtx: issueCtx, phaseCtx: phaseCtx, progress: progress, full: make(chan struct{})}
	if ph.Duration > 0 {
		p.durationEnd = r.StartNs + int64(seconds(ph.Duration))
	}
	p.branchCtx, p.stopBranches = context.WithCancel(issueCtx)
	if ph.PrefillConcurrency > 0 {
		p.prefill = make(chan struct{}, ph.PrefillConcurrency)
		if ph.PrefillRamp > 0 && ph.PrefillConcurrency > 1 {
			p.rampPrefill()
		}
	}
	switch {
	case ph.Fixed:
		p.issueFixed()
	case ph.Users > 0:
		p.issueUsers()
	case ph.Rate > 0:
		p.issueRate()
	default:
		p.issueConcurrency()
	}
	p.close()

	drained := make(chan struct{})
	go func() {
		defer close(drained)
		defer cancel(nil)
		done := make(chan struct{})
		go func() { p.inflight.Wait(); close(done) }()
		if ph.Duration > 0 && ph.GracePeriod >= 0 {
			cutoff := r.StartNs + int64(seconds(ph.Duration)+seconds(ph.GracePeriod))
			grace := time.NewTimer(time.Duration(cutoff - e.Clock.Now()))
			select {
			case <-done:
			case <-grace.C:
				cancel(errGraceEnded)
				<-done
			}
			grace.Stop()
		} else {
			<-done
		}
		r.Cancelled = int(p.cancelled.Load())
		r.Branches = p.endBranches()
		<-handoff
		if e.Hooks.Drained != nil {
			e.Hooks.Drained(*ph)
		}
	}()
	return drained
}

// errGraceEnded is the cause of a phase's in-flight requests cut at the
// end of its grace period.
var errGraceEnded = errors.New("still in flight at the end of the grace period")

// waitUntil blocks until the clock reaches target (returns at once when it
// already has). Precise pacing sleeps until spinWindow before target, then
// spins. It returns false if ctx ended first.
func (e *Engine) waitUntil(ctx context.Context, timer *time.Timer, target int64) bool {
	d := time.Duration(target - e.Clock.Now())
	if e.Precise {
		d -= spinWindow
	}
	if d > 0 {
		timer.Reset(d)
		select {
		case <-timer.C:
		case <-ctx.Done():
			return false
		}
	}
	if e.Precise {
		for e.Clock.Now() < target {
			if ctx.Err() != nil {
				return false
			}
			runtime.Gosched() // let this process's other goroutines use the P while we wait
		}
	}
	return ctx.Err() == nil
}

// seconds converts a phase's seconds to a duration.
func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
