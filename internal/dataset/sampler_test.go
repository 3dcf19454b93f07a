package dataset

import (
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func draw(s *Sampler, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = s.Next()
	}
	return out
}

func TestSamplerPasses(t *testing.T) {
	const n, passes = 17, 6
	seq := draw(NewSampler(n, 9), n*passes)
	identity := make([]int, n)
	for i := range identity {
		identity[i] = i
	}
	var orders [][]int
	for p := range passes {
		pass := slices.Clone(seq[p*n : (p+1)*n])
		orders = append(orders, slices.Clone(pass))
		slices.Sort(pass)
		assert.Equal(t, identity, pass, "pass %d uses every entry exactly once", p)
	}
	assert.NotEqual(t, identity, orders[0], "shuffled")
	assert.NotEqual(t, orders[0], orders[1], "reshuffled each pass")

	assert.Equal(t, seq, draw(NewSampler(n, 9), n*passes), "same seed, same order")
	assert.NotEqual(t, seq, draw(NewSampler(n, 10), n*passes), "another seed, another order")
}

func TestSamplerSingleEntry(t *testing.T) {
	assert.Equal(t, []int{0, 0, 0}, draw(NewSampler(1, 1), 3))
	assert.Panics(t, func() { NewSampler(0, 1) })
}

func TestSamplerConcurrent(t *testing.T) {
	const n, passes, workers = 10, 40, 8
	s := NewSampler(n, 5)
	counts := make([]int, n)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range n * passes / workers {
				i := s.Next()
				mu.Lock()
				counts[i]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for i, c := range counts {
		require.Equal(t, passes, c, "entry %d", i)
	}
}
