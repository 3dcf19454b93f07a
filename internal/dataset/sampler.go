package dataset

import (
	"fmt"
	"math/rand/v2"
	"sync"
)

// Sampler hands out dataset entry indices in one of AIPerf's sampling
// orders: "shuffle" (every pass over the n entries is a fresh seeded
// permutation, so each entry is used once per pass), "sequential" (0, 1,
// …, n-1, then again) or "random" (uniform, with replacement). It is safe
// for concurrent use; the sequence of indices depends only on the
// strategy, n and the seed.
type Sampler struct {
	mu       sync.Mutex
	strategy string
	n        int
	rng      *rand.Rand
	order    []int // shuffle: the current pass
	next     int
}

// NewSampler returns a shuffle Sampler over n entries. It panics if n < 1.
func NewSampler(n int, seed int64) *Sampler {
	s, err := NewStrategySampler(SamplingShuffle, n, seed)
	if err != nil {
		panic("dataset: " + err.Error())
	}
	return s
}

// NewStrategySampler returns a Sampler over n entries in the order of
// strategy (SamplingShuffle, SamplingSequential or SamplingRandom; a
// Dataset's Sampling() gives the default for its data).
func NewStrategySampler(strategy string, n int, seed int64) (*Sampler, error) {
	if n < 1 {
		return nil, fmt.Errorf("a sampler needs at least one entry, got %d", n)
	}
	s := &Sampler{strategy: strategy, n: n, rng: rand.New(rand.NewPCG(uint64(seed), streamSampler))}
	switch strategy {
	case SamplingShuffle:
		s.order = make([]int, n)
		for i := range s.order {
			s.order[i] = i
		}
		s.next = n
	case SamplingSequential, SamplingRandom:
	default:
		return nil, fmt.Errorf("unknown dataset sampling strategy %q: expected sequential, random or shuffle", strategy)
	}
	return s, nil
}

// Next returns the index of the next entry to send.
func (s *Sampler) Next() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.n
	switch s.strategy {
	case SamplingSequential:
		i := s.next
		s.next = (s.next + 1) % n
		return i
	case SamplingRandom:
		return s.rng.IntN(n)
	}
	if s.next == n {
		s.rng.Shuffle(n, func(i, j int) { s.order[i], s.order[j] = s.order[j], s.order[i] })
		s.next = 0
	}
	i := s.order[s.next]
	s.next++
	return i
}
