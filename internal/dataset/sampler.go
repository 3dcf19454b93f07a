package dataset

import (
	"math/rand/v2"
	"sync"
)

// Sampler hands out dataset entry indices in AIPerf's "shuffle" order: every
// pass over the n entries is a fresh seeded permutation, so each entry is
// used once per pass. It is safe for concurrent use; the sequence of indices
// depends only on n and the seed.
type Sampler struct {
	mu    sync.Mutex
	rng   *rand.Rand
	order []int
	next  int
}

// NewSampler returns a Sampler over n entries. It panics if n < 1.
func NewSampler(n int, seed int64) *Sampler {
	if n < 1 {
		panic("dataset: NewSampler needs at least one entry")
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	return &Sampler{rng: rand.New(rand.NewPCG(uint64(seed), streamSampler)), order: order, next: n}
}

// Next returns the index of the next entry to send.
func (s *Sampler) Next() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next == len(s.order) {
		s.rng.Shuffle(len(s.order), func(i, j int) { s.order[i], s.order[j] = s.order[j], s.order[i] })
		s.next = 0
	}
	i := s.order[s.next]
	s.next++
	return i
}
