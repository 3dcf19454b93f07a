package mock

import (
	"hash/maphash"
	"sync"

	"github.com/aiperf-go/aiperf/internal/kvcache"
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

// Bounds of the per-text token cache; when either is reached it is emptied.
const (
	maxCachedPrompts = 1 << 16
	maxCachedIDs     = 1 << 23 // 32 MB of uint32 ids
)

// tokenSource turns prompt text into token ids: the EncodeTokens ids, or
// synthetic ones without it (see ids). Tokenizers are costly and
// benchmark prompts repeat, so results are cached per text, keyed by a
// 64-bit hash so the cache never retains text; the ids it returns are
// shared and must not be modified.
type tokenSource struct {
	encode func(string) []int
	count  func(string) int
	seed   maphash.Seed

	mu         sync.Mutex
	encodedIDs map[uint64][]uint32 // under encode
	counts     map[uint64]int      // under count alone
	held       int                 // ids held in encodedIDs
}

func newTokenSource(encode func(string) []int, count func(string) int) *tokenSource {
	return &tokenSource{encode: encode, count: count, seed: maphash.MakeSeed(),
		encodedIDs: make(map[uint64][]uint32), counts: make(map[uint64]int)}
}

// real reports whether ids are a real tokenizer's (EncodeTokens).
func (c *tokenSource) real() bool { return c.encode != nil }

// Count returns the token count of s.
func (c *tokenSource) Count(s string) int {
	switch {
	case c.encode != nil:
		return len(c.ids(s))
	case c.count != nil:
		return c.countOnly(s)
	}
	return approxTokens(s)
}

// ids returns the token ids of s. Under EncodeTokens they are the
// tokenizer's. Under CountTokens alone they are Count(s) ids derived
// from a hash of the whole text, so texts share blocks only when equal.
// Without either there is one id per 4-byte chunk of s (the
// approximation's count), so texts with a common byte prefix share ids.
func (c *tokenSource) ids(s string) []uint32 {
	switch {
	case c.encode != nil:
		return c.encoded(s)
	case c.count != nil:
		n := c.countOnly(s)
		base := maphash.String(c.seed, s)
		out := make([]uint32, n)
		for i := range out {
			out[i] = uint32(kvcache.Mix(base + uint64(i)))
		}
		return out
	}
	out := make([]uint32, approxTokens(s))
	for i := range out {
		out[i] = uint32(maphash.String(c.seed, s[4*i:min(len(s), 4*i+4)]))
	}
	return out
}

func (c *tokenSource) encoded(s string) []uint32 {
	key := maphash.String(c.seed, s)
	c.mu.Lock()
	ids, ok := c.encodedIDs[key]
	c.mu.Unlock()
	if ok {
		return ids
	}
	raw := c.encode(s)
	ids = make([]uint32, len(raw))
	for i, id := range raw {
		ids[i] = uint32(id)
	}
	c.mu.Lock()
	if len(c.encodedIDs) >= maxCachedPrompts || c.held+len(ids) > maxCachedIDs {
		clear(c.encodedIDs)
		c.held = 0
	}
	if len(ids) <= maxCachedIDs {
		c.encodedIDs[key] = ids
		c.held += len(ids)
	}
	c.mu.Unlock()
	return ids
}

func (c *tokenSource) countOnly(s string) int {
	key := maphash.String(c.seed, s)
	c.mu.Lock()
	n, ok := c.counts[key]
	c.mu.Unlock()
	if ok {
		return n
	}
	n = c.count(s)
	c.mu.Lock()
	if len(c.counts) >= maxCachedPrompts {
		clear(c.counts)
	}
	c.counts[key] = n
	c.mu.Unlock()
	return n
}

// approxTokens is the no-tokenizer estimate: about four bytes per token.
func approxTokens(s string) int { return (len(s) + 3) / 4 }
