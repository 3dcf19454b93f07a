package bench

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/aiperf-go/aiperf/internal/load"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// TestProgressTotalOfSessions: a phase that counts sessions shows its total
// as sessions × turns (512/? was shown before), an estimate when the
// conversations differ in length.
func TestProgressTotalOfSessions(t *testing.T) {
	clock := load.NewClock()
	pr := &load.Progress{Phase: &plan.Phase{Name: "profiling", Sessions: 128}, StartNs: clock.Now()}
	pr.Done.Store(7)
	get := func() *load.Progress { return pr }
	assert.True(t, strings.HasPrefix(line(get, clock, 4, true, noNote), "[profiling] 7/512 done"), line(get, clock, 4, true, noNote))
	assert.True(t, strings.HasPrefix(line(get, clock, 3.5, false, noNote), "[profiling] 7/~448 done"), line(get, clock, 3.5, false, noNote))
	pr.Phase = &plan.Phase{Name: "profiling", Requests: 40}
	assert.True(t, strings.HasPrefix(line(get, clock, 4, true, noNote), "[profiling] 7/40 done"), "a request count wins")
}

// noNote is a progress line's note when the sending was not stopped.
func noNote() string { return "" }
