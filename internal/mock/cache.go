package mock

import (
	"hash/maphash"
	"sync"
)

// maxPrefixEntries bounds the prefix cache; when full it is emptied, as a
// real cache evicts (about 40 MB at the bound).
const maxPrefixEntries = 1_000_000

// prefixCache models a server's prefix (KV) cache at whole-prompt grain: the
// set of prompts served since the last reset, keyed by a 64-bit hash of the
// prompt text so it never retains the text. It also counts the requests it
// served from cache since the control log was last cleared.
type prefixCache struct {
	seed       maphash.Seed
	maxEntries int

	mu   sync.Mutex
	seen map[uint64]struct{}
	hits int
}

func newPrefixCache() *prefixCache {
	return &prefixCache{seed: maphash.MakeSeed(), maxEntries: maxPrefixEntries, seen: make(map[uint64]struct{})}
}

// serve looks up a prompt of promptTokens tokens and returns its cached
// tokens: all of them if the prompt was served since the last reset, else 0
// (and the prompt is remembered).
func (c *prefixCache) serve(key uint64, promptTokens int) (cached int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.seen[key]; ok {
		if promptTokens > 0 {
			c.hits++
		}
		return promptTokens
	}
	if len(c.seen) >= c.maxEntries {
		clear(c.seen)
	}
	c.seen[key] = struct{}{}
	return 0
}

// reset forgets every prompt (the hit counter stays).
func (c *prefixCache) reset() {
	c.mu.Lock()
	clear(c.seen)
	c.mu.Unlock()
}

// counters returns the hits since the last clearHits and the current size.
func (c *prefixCache) counters() (hits, entries int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, len(c.seen)
}

// clearHits zeroes the hit counter (the prompts stay cached).
func (c *prefixCache) clearHits() {
	c.mu.Lock()
	c.hits = 0
	c.mu.Unlock()
}
