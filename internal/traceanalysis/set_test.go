package traceanalysis

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/aiperf-go/aiperf/internal/kvcache"
)

// The set agrees with a map through its growth.
func TestCounts(t *testing.T) {
	c := newCounts()
	want := map[uint64]int{}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		k := kvcache.Mix(uint64(r.IntN(8000)))
		assert.Equal(t, want[k] > 0, c.add(k))
		want[k]++
	}
	repeats := 0
	for k, n := range want {
		assert.True(t, c.has(k))
		assert.Equal(t, n > 1, c.repeated(k))
		if n > 1 {
			repeats++
		}
	}
	assert.Equal(t, len(want), c.n)
	assert.Equal(t, repeats, c.repeats)
	assert.False(t, c.has(kvcache.Mix(9001)))
	assert.GreaterOrEqual(t, 3*len(c.slots), 4*c.n, "at most 3/4 full")
}
