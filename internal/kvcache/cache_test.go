package kvcache

import (
	"hash/maphash"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCache(t *testing.T) {
	c := New(3)
	assert.Zero(t, c.Serve([]uint64{1, 2}))
	assert.Equal(t, 2, c.Serve([]uint64{1, 2, 3}))
	assert.Equal(t, 1, c.Serve([]uint64{1, 9}), "longest cached prefix")
	hits, blocks := c.Counters()
	assert.Equal(t, 2, hits)
	assert.Equal(t, 3, blocks, "4 distinct blocks in a cache of 3")
	assert.Equal(t, uint64(1), c.Evictions())
	assert.Equal(t, 2, c.Serve([]uint64{1, 2, 3}), "3, the least recently used, was evicted")
	c.Reset()
	assert.Zero(t, c.Serve([]uint64{1}))
	hits, blocks = c.Counters()
	assert.Equal(t, 3, hits, "a reset keeps the hit counter")
	assert.Equal(t, 1, blocks)
	evicted := c.Evictions()
	for i := range uint64(100) { // evicted nodes are reused
		c.Serve([]uint64{i + 10, i + 20})
	}
	assert.LessOrEqual(t, len(c.nodes), 3+2)
	assert.Equal(t, evicted+198, c.Evictions(), "two new blocks a request, the cache full after the first")
	c.ClearHits()
	hits, _ = c.Counters()
	assert.Zero(t, hits)
}

// Store makes a completed request's blocks the most recent, last block
// first: its head outlives its tail.
func TestStoreKeepsTheHead(t *testing.T) {
	c := New(2)
	c.Serve([]uint64{1, 2, 3, 4})
	assert.Equal(t, 2, c.Serve([]uint64{1, 2}), "a prompt larger than the cache keeps its head")
	c.Serve([]uint64{7, 8})
	c.Store([]uint64{1, 2, 5})
	assert.Equal(t, 2, c.Serve([]uint64{1, 2}))
	assert.Zero(t, c.Serve([]uint64{7}))
}

func TestBlocks(t *testing.T) {
	assert.Equal(t, MaxBlocks, Blocks(0, 16))
	assert.Equal(t, 3, Blocks(50, 16), "whole blocks only")
}

// Names are chained: a block's name depends on every word before it, and
// only full blocks are named.
func TestSequence(t *testing.T) {
	seed := maphash.MakeSeed()
	names := func(words ...uint64) []uint64 {
		s := NewSequence(seed, 2, len(words))
		for _, w := range words {
			s.Add(w)
		}
		return s.Hashes()
	}
	a := names(1, 2, 3, 4, 5)
	assert.Len(t, a, 2, "a partial trailing block has no name")
	assert.Equal(t, a, names(1, 2, 3, 4))
	b := names(9, 2, 3, 4)
	assert.NotEqual(t, a[0], b[0])
	assert.NotEqual(t, a[1], b[1], "same words after a different prefix: another block")
	assert.Equal(t, a[:1], names(1, 2, 7, 8)[:1])
}

// lru is the touch rule spelt out, for checking the cache against: the
// blocks most recent first.
type lru struct {
	capacity  int
	order     []uint64
	evictions uint64
}

// touch makes hashes the most recent, the first most recent of all, then
// evicts down to the capacity.
func (l *lru) touch(hashes []uint64) {
	in := map[uint64]bool{}
	for _, h := range hashes {
		in[h] = true
	}
	next := append([]uint64(nil), hashes...)
	for _, h := range l.order {
		if !in[h] {
			next = append(next, h)
		}
	}
	if len(next) > l.capacity {
		l.evictions += uint64(len(next) - l.capacity)
		next = next[:l.capacity]
	}
	l.order = next
}

// A request of more blocks than the cache holds leaves what touching them
// one by one leaves, counting the same evictions, and the cache's memory
// stays within its capacity (it grew with the request: a 2^24-block prompt
// held 1.4 GB in a cache of 64 blocks).
func TestTouchBeyondCapacity(t *testing.T) {
	const capacity = 8
	c, ref := New(capacity), &lru{capacity: capacity}
	requests := [][]uint64{
		{1, 2, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {5, 6, 1, 2}, {20, 21, 1, 2, 3, 4, 22, 23, 24, 25, 26, 5, 6},
		{3, 4}, {30, 31, 32, 33, 34, 35, 36, 37, 38}, {30, 31, 32, 33, 34, 35, 36, 37},
	}
	for i, r := range requests {
		c.Store(r)
		ref.touch(r)
		var got []uint64
		for n := c.head; n >= 0; n = c.nodes[n].next {
			got = append(got, c.nodes[n].hash)
		}
		assert.Equal(t, ref.order, got, "after request %d", i)
		assert.Equal(t, ref.evictions, c.Evictions(), "after request %d", i)
	}
	big := make([]uint64, 1<<16)
	for i := range big {
		big[i] = uint64(1000 + i)
	}
	assert.Equal(t, 0, c.Serve(big))
	assert.LessOrEqual(t, len(c.nodes), 2*capacity)
	assert.LessOrEqual(t, len(c.index), capacity)
	assert.Equal(t, capacity, c.Serve(big[:capacity+1]), "the head of the request stayed")
}
