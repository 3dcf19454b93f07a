package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// liveProfiler is what a run's server profiler may be doing, as its
// bracketing's calls say: its start on its way, started (its owners, the
// profiling phases under way) or its stop on its way. A process that exits
// at once reads it (ProfilersLeftRunning) to say what it may leave running.
// Its own lock is never held across a call, so the reader never waits for
// a server.
type liveProfiler struct {
	stopURLs []string      // the stop route at each origin, redacted
	window   time.Duration // how long a stop may take: a timeout per origin
	marked   bool          // a sweep trial's: its mark lets the next run stop it

	mu       sync.Mutex
	starting bool
	owners   []string
	stopping bool
}

// liveProfilers are the profilers of this process's runs in progress.
var liveProfilers = struct {
	sync.Mutex
	set map[*liveProfiler]struct{}
}{set: map[*liveProfiler]struct{}{}}

// newLiveProfiler registers the profiler of c's run, hooked by h, until
// forget.
func newLiveProfiler(c *cell, h plan.ProfilerHook) *liveProfiler {
	origins := c.p.Origins()
	l := &liveProfiler{window: h.Timeout * time.Duration(max(1, len(origins))), marked: c.o.ProfilerMark != ""}
	redact := c.p.Redactor()
	for _, o := range origins {
		l.stopURLs = append(l.stopURLs, redact.Redact(plan.RedactURL(strings.TrimRight(o, "/")+h.StopPath)))
	}
	liveProfilers.Lock()
	liveProfilers.set[l] = struct{}{}
	liveProfilers.Unlock()
	return l
}

// forget ends the registration: the run is done with its profiler.
func (l *liveProfiler) forget() {
	liveProfilers.Lock()
	delete(liveProfilers.set, l)
	liveProfilers.Unlock()
}

// ProfilersLeftRunning says, for a process about to exit at once (a second
// Ctrl-C), each server profiler its runs started, or were starting, and
// had not stopped yet, and how to stop it: nil when there is none.
func ProfilersLeftRunning() []string {
	liveProfilers.Lock()
	defer liveProfilers.Unlock()
	var notes []string
	for l := range liveProfilers.set {
		if n := l.leftRunning(); n != "" {
			notes = append(notes, n)
		}
	}
	return notes
}

// leftRunning is l's note for a hard exit ("": its profiler is not
// running).
func (l *liveProfiler) leftRunning() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	how := "stop it with a POST to " + strings.Join(l.stopURLs, " and to ")
	var state string
	switch {
	case l.stopping:
		state = "was started and may still be running (its stop call had not returned)"
	case len(l.owners) > 0:
		state = "was started and may still be running"
	case l.starting:
		state = "was being started and may be running"
		if l.window > 0 {
			how += fmt.Sprintf(" once its start can no longer reach the server (%s after it was sent)", l.window)
		}
	default:
		return ""
	}
	if l.marked {
		how += " (or let the next run of this trial stop it)"
	}
	return "the server profiler " + state + ": " + how
}

// startProfiler starts the profiler for owner (a profiling phase).
func (b *bracketing) startProfiler(ctx context.Context, owner string) error {
	l := b.live
	l.mu.Lock()
	l.starting = true
	sent := len(l.owners) == 0 // else it joins the profiler running
	l.mu.Unlock()
	noted := func() bool { return false }
	if sent && ctx.Err() == nil { // a Ctrl-C waits for the start's answer
		noted = context.AfterFunc(ctx, b.noteStarting)
	}
	err := b.profiler.Start(ctx, owner)
	noted()
	l.mu.Lock()
	l.starting = false
	if err == nil && !slices.Contains(l.owners, owner) {
		l.owners = append(l.owners, owner)
	}
	l.mu.Unlock()
	return err
}

// stopProfiler stops the profiler for owner ("": every owner, the shutdown
// path); its failure is a warning. A stop sent after an interrupt, or
// under way when one comes, is said at once: it may take the hook's
// timeout at each origin, and a second Ctrl-C would leave the profiler
// running. An interrupt that comes while it is under way is noted for the
// run's error.
func (b *bracketing) stopProfiler(owner string) {
	l := b.live
	l.mu.Lock()
	was := len(l.owners)
	if owner == "" {
		l.owners = nil
	} else {
		l.owners = slices.DeleteFunc(l.owners, func(o string) bool { return o == owner })
	}
	posts := was > 0 && len(l.owners) == 0 // the last owner's stop is sent
	l.stopping = posts
	l.mu.Unlock()
	stop := func() error { return b.profiler.Stop(context.Background(), owner) }
	if owner == "" {
		stop = func() error { return b.profiler.StopAll(context.Background()) }
	}
	if !posts {
		b.warn(stop())
		return
	}
	before := b.ctx.Err() == nil
	noted := context.AfterFunc(b.ctx, b.noteStopping)
	err := stop()
	noted()
	l.mu.Lock()
	l.stopping = false
	l.mu.Unlock()
	if before && b.ctx.Err() != nil {
		b.mu.Lock()
		b.reached.stopCut = true
		b.mu.Unlock()
	}
	b.warn(err)
}

// noteStarting says, at an interrupt, that the profiler start call on its
// way gets its answer before the profiler is stopped.
func (b *bracketing) noteStarting() {
	fmt.Fprintf(b.c.log, "note: waiting for the server profiler's start call to answer (%s), then stopping it (%s)\n",
		b.upTo(), b.secondCtrlC())
}

// noteStopping says that the profiler stop is being sent after an
// interrupt, and what a second one would do.
func (b *bracketing) noteStopping() {
	fmt.Fprintf(b.c.log, "note: stopping the server profiler (%s; %s)\n", b.upTo(), b.secondCtrlC())
}

// upTo is how long a profiler call may take, at every origin.
func (b *bracketing) upTo() string {
	if b.live.window <= 0 {
		return "within the hook's timeout"
	}
	return "up to " + b.live.window.String()
}

// secondCtrlC says what a second Ctrl-C does to the profiler.
func (b *bracketing) secondCtrlC() string {
	if b.live.marked {
		return "a second Ctrl-C exits at once and leaves it running for the next run of this trial to stop"
	}
	return "a second Ctrl-C exits at once and leaves it running"
}
