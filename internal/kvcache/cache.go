package kvcache

import (
	"context"
	"sync"
)

// MaxBlocks bounds a cache: about 40 bytes a block, so some 80 MB when
// full. It is the capacity Blocks gives for 0 tokens.
const MaxBlocks = 1 << 21

// Blocks is the capacity in blocks of a cache of tokens tokens in blocks
// of blockSize tokens: whole blocks only, and MaxBlocks for 0 (the
// largest allowed).
func Blocks(tokens, blockSize int) int {
	if tokens == 0 {
		return MaxBlocks
	}
	return tokens / blockSize
}

// Cache is a prefix (KV) cache: a set of block names (see Sequence) with a
// capacity in blocks and least-recently-used eviction. It never holds
// token ids or text. It counts the requests it served with cached blocks
// since ClearHits, and the blocks it evicted since it was made. It is safe
// for concurrent use.
type Cache struct {
	capacity int

	mu        sync.Mutex
	index     map[uint64]int32 // block name → node
	nodes     []lruNode
	head      int32 // most recently used node, or -1
	tail      int32 // least recently used node, or -1
	free      int32 // first reusable node (linked by next), or -1
	hits      int
	evictions uint64
}

// lruNode is one cached block in the recency list.
type lruNode struct {
	hash       uint64
	prev, next int32
}

// New returns an empty cache of capacity blocks (at least 1).
func New(capacity int) *Cache {
	return &Cache{capacity: max(1, capacity), index: make(map[uint64]int32), head: -1, tail: -1, free: -1}
}

// checkEvery is how many blocks a touch handles between looks at its
// context: a prompt may be 2^24 blocks.
const checkEvery = 1 << 16

// Serve admits a request: it looks up its prompt's block names and returns
// how many leading blocks were already cached (vLLM's longest cached
// prefix), then caches them all.
func (c *Cache) Serve(hashes []uint64) (hitBlocks int) {
	hitBlocks, _ = c.ServeContext(context.Background(), hashes)
	return hitBlocks
}

// ServeContext is Serve, stopping with ctx's error when ctx ends (it looks
// every checkEvery blocks); the cache is then left part way.
func (c *Cache) ServeContext(ctx context.Context, hashes []uint64) (hitBlocks int, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for hitBlocks < len(hashes) {
		if hitBlocks%checkEvery == checkEvery-1 {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
		if _, ok := c.index[hashes[hitBlocks]]; !ok {
			break
		}
		hitBlocks++
	}
	if hitBlocks > 0 {
		c.hits++
	}
	return hitBlocks, c.touchLocked(ctx, hashes)
}

// Store caches the blocks of a completed request (its prompt's and its
// reply's).
func (c *Cache) Store(hashes []uint64) {
	_ = c.StoreContext(context.Background(), hashes)
}

// StoreContext is Store, stopping with ctx's error when ctx ends (it looks
// every checkEvery blocks); the cache is then left part way.
func (c *Cache) StoreContext(ctx context.Context, hashes []uint64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.touchLocked(ctx, hashes)
}

// touchLocked makes hashes the most recently used blocks, adding those
// missing, then evicts down to the capacity. They are touched last block
// first, as vLLM frees a request's blocks, so a prefix outlives its
// extensions and a prompt larger than the whole cache keeps its head.
func (c *Cache) touchLocked(ctx context.Context, hashes []uint64) error {
	if len(hashes) > c.capacity {
		return c.replaceLocked(ctx, hashes)
	}
	for i := len(hashes) - 1; i >= 0; i-- {
		if (len(hashes)-i)%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		h := hashes[i]
		n, ok := c.index[h]
		if ok {
			c.unlink(n)
		} else {
			n = c.alloc(h)
			c.index[h] = n
		}
		c.pushFront(n)
	}
	for len(c.index) > c.capacity {
		n := c.tail
		c.unlink(n)
		delete(c.index, c.nodes[n].hash)
		c.nodes[n].next = c.free
		c.free = n
		c.evictions++
	}
	return nil
}

// replaceLocked touches more blocks than the cache holds. Touching them
// one by one would leave their first capacity blocks, the first most
// recent, having evicted every other block, those cached before and the
// new ones past the capacity (names of one request are distinct: each is
// chained to the ones before it). So it counts the new blocks and caches
// the first capacity blocks alone, its memory the cache's whatever the
// request's length.
func (c *Cache) replaceLocked(ctx context.Context, hashes []uint64) error {
	added := 0
	for i, h := range hashes {
		if i%checkEvery == checkEvery-1 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if _, ok := c.index[h]; !ok {
			added++
		}
	}
	c.evictions += uint64(len(c.index) + added - c.capacity)
	clear(c.index)
	c.nodes = c.nodes[:0]
	c.head, c.tail, c.free = -1, -1, -1
	for i := c.capacity - 1; i >= 0; i-- {
		if (c.capacity-i)%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		n := c.alloc(hashes[i])
		c.index[hashes[i]] = n
		c.pushFront(n)
	}
	return nil
}

// alloc returns a node for h, reusing an evicted one when it can.
func (c *Cache) alloc(h uint64) int32 {
	if n := c.free; n >= 0 {
		c.free = c.nodes[n].next
		c.nodes[n] = lruNode{hash: h}
		return n
	}
	c.nodes = append(c.nodes, lruNode{hash: h})
	return int32(len(c.nodes) - 1)
}

func (c *Cache) unlink(n int32) {
	node := &c.nodes[n]
	if node.prev >= 0 {
		c.nodes[node.prev].next = node.next
	} else {
		c.head = node.next
	}
	if node.next >= 0 {
		c.nodes[node.next].prev = node.prev
	} else {
		c.tail = node.prev
	}
}

func (c *Cache) pushFront(n int32) {
	c.nodes[n].prev, c.nodes[n].next = -1, c.head
	if c.head >= 0 {
		c.nodes[c.head].prev = n
	}
	c.head = n
	if c.tail < 0 {
		c.tail = n
	}
}

// Reset forgets every block (the counters stay).
func (c *Cache) Reset() {
	c.mu.Lock()
	clear(c.index)
	c.nodes = c.nodes[:0]
	c.head, c.tail, c.free = -1, -1, -1
	c.mu.Unlock()
}

// Counters returns the requests served with cached blocks since the last
// ClearHits and the number of blocks cached now.
func (c *Cache) Counters() (hits, blocks int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, len(c.index)
}

// Evictions is the number of blocks evicted to stay within the capacity
// since the cache was made (a Reset is not an eviction).
func (c *Cache) Evictions() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.evictions
}

// ClearHits zeroes the hit counter (the blocks stay cached).
func (c *Cache) ClearHits() {
	c.mu.Lock()
	c.hits = 0
	c.mu.Unlock()
}
