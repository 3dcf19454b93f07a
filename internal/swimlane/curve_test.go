package swimlane

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// valueAt is a step function's value at t.
func valueAt(steps []Step, t int64) int32 {
	v := int32(0)
	for _, s := range steps {
		if s.T > t {
			break
		}
		v = s.V
	}
	return v
}

// The concurrency of a few spans, step by step: a span counts from its
// start to its end, excluded; a span ending where another starts makes no
// spike (ends first, as AIPerf's sweep line); a zero-length span counts
// nowhere; a value holding over several events is one step.
func TestConcurrencyExact(t *testing.T) {
	starts := []int64{100, 150, 200, 200, 300, 300}
	ends := []int64{200, 250, 300, 400, 300, 350}
	assert.Equal(t, []Step{{100, 1}, {150, 2}, {200, 3}, {250, 2}, {350, 1}, {400, 0}}, Concurrency(starts, ends))
	assert.Equal(t, 3, Peak(Concurrency(starts, ends)))
	assert.Nil(t, Concurrency(nil, nil))
	// A chain of back-to-back requests is one step up and one down.
	assert.Equal(t, []Step{{0, 1}, {30, 0}}, Concurrency([]int64{0, 10, 20}, []int64{10, 20, 30}))
}

// On random spans at wall-clock scale the sweep equals counting the spans
// open at every event time and just before it.
func TestConcurrencyMatchesCounting(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const base = int64(1_796_357_517_641_598_296)
	for range 50 {
		n := 1 + rng.IntN(60)
		starts, ends := make([]int64, n), make([]int64, n)
		for i := range n {
			starts[i] = base + rng.Int64N(1000)
			ends[i] = starts[i] + rng.Int64N(300)
		}
		steps := Concurrency(starts, ends)
		require.True(t, slices.IsSortedFunc(steps, func(a, b Step) int { return cmpInt64(a.T, b.T) }))
		for i := 1; i < len(steps); i++ {
			require.NotEqual(t, steps[i-1].V, steps[i].V, "a step repeats its value")
		}
		for _, t0 := range append(slices.Clone(starts), ends...) {
			for _, at := range []int64{t0 - 1, t0} {
				want := int32(0)
				for i := range n {
					if starts[i] <= at && at < ends[i] {
						want++
					}
				}
				require.Equal(t, want, valueAt(steps, at), "at %d", at)
			}
		}
	}
}

// Idle sessions are those alive less those in flight, never below 0.
func TestSubtract(t *testing.T) {
	alive := []Step{{0, 2}, {100, 1}, {200, 0}}
	active := []Step{{0, 1}, {50, 2}, {60, 0}, {100, 1}, {150, 0}}
	assert.Equal(t, []Step{{0, 1}, {50, 0}, {60, 2}, {100, 0}, {150, 1}, {200, 0}}, Subtract(alive, active))
	assert.Equal(t, []Step{{0, 2}, {100, 1}, {200, 0}}, Subtract(alive, nil))
	assert.Empty(t, Subtract(active, alive[:1]), "never below 0")
}
