package mock

import "sync"

// maxCacheBlocks bounds the prefix cache: about 40 bytes a block, so some
// 80 MB when full. It is the capacity when --kv-cache-tokens is 0.
const maxCacheBlocks = 1 << 21

// prefixCache models a server's prefix (KV) cache as a set of block hashes
// (see blocks.go) with a capacity in blocks and least-recently-used
// eviction. It never holds token ids or text. It also counts the requests
// it served with cached tokens since the control log was last cleared.
type prefixCache struct {
	capacity int

	mu    sync.Mutex
	index map[uint64]int32 // block hash → node
	nodes []lruNode
	head  int32 // most recently used node, or -1
	tail  int32 // least recently used node, or -1
	free  int32 // first reusable node (linked by next), or -1
	hits  int
}

// lruNode is one cached block in the recency list.
type lruNode struct {
	hash       uint64
	prev, next int32
}

func newPrefixCache(capacity int) *prefixCache {
	return &prefixCache{capacity: capacity, index: make(map[uint64]int32), head: -1, tail: -1, free: -1}
}

// serve looks up a prompt's block hashes and returns how many leading
// blocks were already cached (vLLM's longest cached prefix); then it caches
// them all.
func (c *prefixCache) serve(hashes []uint64) (hitBlocks int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for hitBlocks < len(hashes) {
		if _, ok := c.index[hashes[hitBlocks]]; !ok {
			break
		}
		hitBlocks++
	}
	if hitBlocks > 0 {
		c.hits++
	}
	c.touchLocked(hashes)
	return hitBlocks
}

// store caches the blocks of a finished request (its prompt and reply).
func (c *prefixCache) store(hashes []uint64) {
	c.mu.Lock()
	c.touchLocked(hashes)
	c.mu.Unlock()
}

// touchLocked makes hashes the most recently used blocks, adding those
// missing, then evicts down to the capacity. They are touched last block
// first, as vLLM frees a request's blocks, so a prefix outlives its
// extensions and a prompt larger than the whole cache keeps its head.
func (c *prefixCache) touchLocked(hashes []uint64) {
	for i := len(hashes) - 1; i >= 0; i-- {
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
	}
}

// alloc returns a node for h, reusing an evicted one when it can.
func (c *prefixCache) alloc(h uint64) int32 {
	if n := c.free; n >= 0 {
		c.free = c.nodes[n].next
		c.nodes[n] = lruNode{hash: h}
		return n
	}
	c.nodes = append(c.nodes, lruNode{hash: h})
	return int32(len(c.nodes) - 1)
}

func (c *prefixCache) unlink(n int32) {
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

func (c *prefixCache) pushFront(n int32) {
	c.nodes[n].prev, c.nodes[n].next = -1, c.head
	if c.head >= 0 {
		c.nodes[c.head].prev = n
	}
	c.head = n
	if c.tail < 0 {
		c.tail = n
	}
}

// reset forgets every block (the hit counter stays).
func (c *prefixCache) reset() {
	c.mu.Lock()
	clear(c.index)
	c.nodes = c.nodes[:0]
	c.head, c.tail, c.free = -1, -1, -1
	c.mu.Unlock()
}

// counters returns the hits since the last clearHits and the number of
// blocks cached now.
func (c *prefixCache) counters() (hits, blocks int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, len(c.index)
}

// clearHits zeroes the hit counter (the blocks stay cached).
func (c *prefixCache) clearHits() {
	c.mu.Lock()
	c.hits = 0
	c.mu.Unlock()
}
