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
