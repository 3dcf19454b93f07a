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

func TestSamplerStrategies(t *testing.T) {
	seq, err := NewStrategySampler(SamplingSequential, 4, 1)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1, 2, 3, 0, 1, 2, 3, 0}, draw(seq, 9), "in order, wrapping")

	r, err := NewStrategySampler(SamplingRandom, 5, 3)
	require.NoError(t, err)
	got := draw(r, 500)
	counts := make([]int, 5)
	repeats := 0
	for i, v := range got {
		counts[v]++
		if i > 0 && got[i-1] == v {
			repeats++
		}
	}
	for i, c := range counts {
		assert.InDelta(t, 100, c, 35, "entry %d is drawn uniformly", i)
	}
	assert.Positive(t, repeats, "with replacement")
	r2, _ := NewStrategySampler(SamplingRandom, 5, 3)
	assert.Equal(t, got, draw(r2, 500), "same seed, same draws")

	sh, err := NewStrategySampler(SamplingShuffle, 17, 9)
	require.NoError(t, err)
	assert.Equal(t, draw(NewSampler(17, 9), 50), draw(sh, 50), "NewSampler is the shuffle strategy")

	_, err = NewStrategySampler("weighted", 3, 1)
	assert.ErrorContains(t, err, `unknown dataset sampling strategy "weighted"`)
	_, err = NewStrategySampler(SamplingSequential, 0, 1)
	assert.ErrorContains(t, err, "at least one entry")
}

func TestSamplerSequentialConcurrent(t *testing.T) {
	s, err := NewStrategySampler(SamplingSequential, 7, 1)
	require.NoError(t, err)
	counts := make([]int, 7)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 7 {
		wg.Go(func() {
			for range 70 {
				i := s.Next()
				mu.Lock()
				counts[i]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	assert.Equal(t, []int{70, 70, 70, 70, 70, 70, 70}, counts)
}
