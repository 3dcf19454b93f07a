package bench

import (
	"errors"
	"fmt"
	"sync"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// failGuard is AIPerf's --failed-request-threshold: once at least arm
// profiling requests have finished and more than limit of them failed, it
// stops the engine's issuing (once, calling stop with its verdict); the
// requests in flight drain.
type failGuard struct {
	limit float64
	arm   int
	stop  func(verdict string)

	mu               sync.Mutex
	finished, failed int
	verdict          string // why it tripped; "" until it did
}

// newFailGuard returns the guard of the profile, or nil when the threshold
// is unset. It is armed after max(concurrency, 10) finished requests.
func newFailGuard(p plan.Profile, phases []plan.Phase, stop func(verdict string)) *failGuard {
	if p.FailedRequestThreshold == nil {
		return nil
	}
	g := &failGuard{limit: *p.FailedRequestThreshold, arm: 10, stop: stop}
	for _, ph := range phases {
		if ph.Kind == plan.KindProfiling {
			g.arm = max(g.arm, ph.Concurrency)
		}
	}
	return g
}

// observe counts a finished record: profiling ones only, and not those cut
// or aborted on purpose (they are neither successes nor failures).
func (g *failGuard) observe(r metrics.Record) {
	if r.PhaseKind != plan.KindProfiling || r.Cancelled {
		return
	}
	if verdict := g.count(r.Error != nil); verdict != "" {
		g.stop(verdict)
	}
}

// count counts a finished profiling request and returns the verdict when
// it is the one that trips the guard, "" otherwise.
func (g *failGuard) count(failed bool) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.finished++
	if failed {
		g.failed++
	}
	if g.verdict != "" || g.finished < g.arm || float64(g.failed)/float64(g.finished) <= g.limit {
		return ""
	}
	g.verdict = fmt.Sprintf("--failed-request-threshold %g exceeded: %d of %d finished profiling requests failed (%.1f%%)",
		g.limit, g.failed, g.finished, 100*float64(g.failed)/float64(g.finished))
	return g.verdict
}

// tripped is why the guard stopped the sending, "" while it has not (or
// for a nil guard).
func (g *failGuard) tripped() string {
	if g == nil {
		return ""
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.verdict
}

// err is the guard's verdict as the run's error: nil unless the threshold
// was exceeded.
func (g *failGuard) err() error {
	if v := g.tripped(); v != "" {
		return errors.New(v + "; the profiling was ended early, the requests in flight drained and the results cover what was sent")
	}
	return nil
}
