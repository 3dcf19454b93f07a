package bench

import (
	"fmt"
	"sync"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// failGuard is AIPerf's --failed-request-threshold: once at least arm
// profiling requests have finished and more than limit of them failed, it
// stops the engine's issuing (once); the requests in flight drain.
type failGuard struct {
	limit float64
	arm   int
	stop  func()

	mu               sync.Mutex
	finished, failed int
	tripped          error
}

// newFailGuard returns the guard of the profile, or nil when the threshold
// is unset. It is armed after max(concurrency, 10) finished requests.
func newFailGuard(p plan.Profile, phases []plan.Phase, stop func()) *failGuard {
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
	g.mu.Lock()
	defer g.mu.Unlock()
	g.finished++
	if r.Error != nil {
		g.failed++
	}
	if g.tripped != nil || g.finished < g.arm || float64(g.failed)/float64(g.finished) <= g.limit {
		return
	}
	g.tripped = fmt.Errorf("--failed-request-threshold %g exceeded: %d of %d finished profiling requests failed (%.1f%%); "+
		"the profiling was ended early, the requests in flight drained and the results cover what was sent",
		g.limit, g.failed, g.finished, 100*float64(g.failed)/float64(g.finished))
	g.stop()
}

// err is the guard's verdict: nil unless the threshold was exceeded.
func (g *failGuard) err() error {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.tripped
}
