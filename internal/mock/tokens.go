package mock

import (
	"hash/maphash"
	"sync"
)

// words are the output pieces: common words with a leading space, each
// exactly one token under o200k_base, so N pieces concatenated are N tokens
// (tokens_test.go checks both). Output token k is words[k%len(words)].
var words = [...]string{
	" the", " of", " and", " to", " in", " is", " that", " for",
	" it", " as", " was", " with", " be", " by", " on", " not",
	" he", " this", " are", " or", " his", " from", " at", " which",
	" but", " have", " an", " they", " you", " were", " her", " she",
	" there", " one", " all", " we", " their", " been", " has", " more",
	" its", " who", " would", " will", " when", " can", " if", " said",
	" out", " what", " about", " into", " than", " them", " only", " other",
	" new", " some", " could", " time", " these", " two", " may", " first",
}

// word returns output token k.
func word(k int) string { return words[k%len(words)] }

// maxCachedPrompts bounds the prompt-count cache; when full it is emptied.
const maxCachedPrompts = 1 << 16

// tokenCounter counts prompt tokens, caching results per prompt because
// benchmark prompts repeat and real tokenizers are costly. Keys are 64-bit
// hashes so the cache never retains prompt text.
type tokenCounter struct {
	count func(string) int
	seed  maphash.Seed
	mu    sync.Mutex
	cache map[uint64]int
}

func newTokenCounter(count func(string) int) *tokenCounter {
	return &tokenCounter{count: count, seed: maphash.MakeSeed(), cache: make(map[uint64]int)}
}

// Count returns the token count of s.
func (c *tokenCounter) Count(s string) int {
	if c.count == nil {
		return approxTokens(s)
	}
	key := maphash.String(c.seed, s)
	c.mu.Lock()
	n, ok := c.cache[key]
	c.mu.Unlock()
	if ok {
		return n
	}
	n = c.count(s)
	c.mu.Lock()
	if len(c.cache) >= maxCachedPrompts {
		clear(c.cache)
	}
	c.cache[key] = n
	c.mu.Unlock()
	return n
}

// approxTokens is the no-tokenizer estimate: about four bytes per token.
func approxTokens(s string) int { return (len(s) + 3) / 4 }
