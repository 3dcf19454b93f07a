package bench

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// A wait returns once every session waited for has ended (finishing one
// twice is harmless), each phase apart, or once its context ends.
func TestJoins(t *testing.T) {
	j := newJoins()
	j.finish("profiling", 1)
	j.finish("profiling", 1)
	j.finish("warmup", 2)
	released := make(chan struct{})
	go func() {
		j.wait(context.Background(), "profiling", []int{1, 2})
		close(released)
	}()
	select {
	case <-released:
		t.Fatal("returned before conversation 2's profiling session ended (its warmup one did)")
	default:
	}
	j.finish("profiling", 2)
	<-released // a hang here is the failure

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	j.wait(ctx, "profiling", []int{3}) // returns: the phase ended

	var none *joins
	none.finish("profiling", 1) // across worker processes: nothing to do
	assert.True(t, joinable(&plan.Phase{Fixed: true}))
	assert.False(t, joinable(&plan.Phase{Fixed: true, Concurrency: 4}), "a cap's slot held by a waiting parent could starve its subagent")
	assert.False(t, joinable(&plan.Phase{}), "without a fixed schedule sessions are drawn in turn")
}
