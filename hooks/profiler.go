package hooks

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// Profiler starts and stops the server profilers of one run. Owners are
// profiling phases: the first owner to start POSTs the start route to every
// origin, later owners only join, and the last owner to stop POSTs the stop
// route, so seamless back-to-back profiling phases share one trace. It is
// safe for concurrent use; calls are serialised, POSTs included.
type Profiler struct {
	c       *Client
	origins []string
	hook    plan.ProfilerHook

	mark string // evidence file while a start may be in effect ("": none)

	mu     sync.Mutex
	owners []string // active owners, in the order they started
	calls  []Call
}

// Profiler returns the profiler owner set for origins. With a disabled hook
// every method does nothing.
func (c *Client) Profiler(origins []string, h plan.ProfilerHook) *Profiler {
	return &Profiler{c: c, origins: slices.Clone(origins), hook: h}
}

// WithMark makes p leave evidence in the file at path (see Mark) from just
// before its first start POST until its stop was sent, so that a process
// outliving this one can stop the profiler should this one die in between
// (Client.StopMarked). Call it before any Start; "" means no file.
func (p *Profiler) WithMark(path string) *Profiler {
	p.mark = path
	return p
}

// Start registers owner. When no other owner is active it POSTs the start
// route to every origin in order; if one fails, every origin that may have
// received the start is stopped in reverse order (best effort, their errors
// only recorded) and the first error is returned. An origin that answered
// with an error did not start; one whose call got no answer (a timeout, a
// dropped connection) may have, and is stopped too. A start POST in flight when ctx is cancelled is not cut short: it gets
// its answer (within the hook timeout), so the stop sent next cannot reach
// the server before it; then no further origin is started, every origin
// started is stopped, and the error wraps ctx's. A stop path that cannot be
// sent (plan.CheckHookPath) refuses the start: nothing is sent. Starting an
// owner that is already active does nothing.
func (p *Profiler) Start(ctx context.Context, owner string) error {
	if !p.hook.Enabled {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if slices.Contains(p.owners, owner) {
		return nil
	}
	if len(p.owners) == 0 {
		// A stop that cannot be sent would leave the profiler running.
		if err := plan.CheckHookPath(p.hook.StopPath); err != nil {
			return fmt.Errorf("server profiler start: %w: the stop path %w, so the profiler could never be stopped",
				errNotSent, err)
		}
		if err := p.writeMark(owner); err != nil {
			return fmt.Errorf("server profiler start: %w", err)
		}
		var started []string // origins that may have received the start
		for _, origin := range p.origins {
			var err error
			if ctx.Err() == nil {
				var call Call
				call, err = p.post(context.WithoutCancel(ctx), HookProfilerStart, owner, origin)
				if mayHaveStarted(call, err) {
					started = append(started, origin)
				}
			}
			if ctx.Err() != nil {
				interrupted := fmt.Errorf("interrupted: %w", context.Cause(ctx))
				if err != nil {
					interrupted = fmt.Errorf("%w; %w", interrupted, err)
				}
				err = interrupted
			}
			if err != nil {
				slices.Reverse(started)
				_ = p.stop(ctx, owner, started)
				return fmt.Errorf("server profiler start: %w", err)
			}
		}
	}
	p.owners = append(p.owners, owner)
	return nil
}

// mayHaveStarted reports whether a start call may have started the
// profiler: it succeeded, or it was sent and got no answer (a timeout, a
// dropped connection). An answer, even an error, is the server's word that
// it did not start; a connection that was never opened, or a request never
// built, carried nothing.
func mayHaveStarted(call Call, err error) bool {
	if err == nil {
		return true
	}
	if call.Status != 0 || errors.Is(err, errNotSent) {
		return false
	}
	var op *net.OpError
	return !errors.As(err, &op) || op.Op != "dial"
}

// Stop unregisters owner; when it was the last active owner it POSTs the stop
// route to every origin. Every origin is tried even if some fail, and even
// when ctx is already cancelled (each POST still gets the hook timeout). The
// failures come back as one error, meant to be reported as a warning. Stopping
// an owner that is not active does nothing.
func (p *Profiler) Stop(ctx context.Context, owner string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := slices.Index(p.owners, owner)
	if i < 0 {
		return nil
	}
	p.owners = slices.Delete(p.owners, i, i+1)
	if len(p.owners) > 0 {
		return nil
	}
	return p.stop(ctx, owner, p.origins)
}

// StopAll is the shutdown path (after Ctrl-C or a failed phase): if any owner
// is active, all are dropped and the profilers are stopped as in Stop.
func (p *Profiler) StopAll(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.owners) == 0 {
		return nil
	}
	phase := strings.Join(p.owners, ",")
	p.owners = nil
	return p.stop(ctx, phase, p.origins)
}

// stop POSTs the stop route to each origin, ignoring ctx cancellation,
// removes the mark, and aggregates the failures.
func (p *Profiler) stop(ctx context.Context, phase string, origins []string) error {
	ctx = context.WithoutCancel(ctx)
	var errs []error
	for _, origin := range origins {
		if _, err := p.post(ctx, HookProfilerStop, phase, origin); err != nil {
			errs = append(errs, err)
		}
	}
	if p.mark != "" {
		if err := os.Remove(p.mark); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove profiler mark: %w", err))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return &StopError{Errs: errs}
}

// writeMark writes the mark file, if any, before a start; p.mu is held.
func (p *Profiler) writeMark(phase string) error {
	if p.mark == "" {
		return nil
	}
	m := Mark{PID: os.Getpid(), Phase: phase, Origins: p.origins, StopPath: p.hook.StopPath,
		TimeoutSeconds: p.hook.Timeout.Seconds(), StartedAt: time.Now().UnixNano()}
	if err := m.write(p.mark); err != nil {
		return fmt.Errorf("write profiler mark: %w", err)
	}
	return nil
}

// post makes one profiler call and records it; p.mu is held.
func (p *Profiler) post(ctx context.Context, hook, phase, origin string) (Call, error) {
	path := p.hook.StartPath
	if hook == HookProfilerStop {
		path = p.hook.StopPath
	}
	call, err := p.c.post(ctx, target{hook: hook, phase: phase, origin: origin, path: path, timeout: p.hook.Timeout})
	p.calls = append(p.calls, call)
	return call, err
}

// Calls returns every profiler call made so far (starts, stops and
// rollbacks), in order, for the exports.
func (p *Profiler) Calls() []Call {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.calls)
}

// StopError is the aggregated failure of a profiler stop: one error per
// origin that failed.
type StopError struct {
	Errs []error
}

func (e *StopError) Error() string {
	msgs := make([]string, len(e.Errs))
	for i, err := range e.Errs {
		msgs[i] = err.Error()
	}
	return fmt.Sprintf("server profiler stop failed for %d origin(s): %s", len(e.Errs), strings.Join(msgs, "; "))
}

// Unwrap returns the per-origin errors.
func (e *StopError) Unwrap() []error { return e.Errs }
