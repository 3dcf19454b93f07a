package tokenizer

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"iter"
	"math/bits"
	"unsafe"
)

// vocab is a vocabulary in compact form: every token's bytes in one arena,
// and an open-addressing hash table of entry numbers. Built from a rank
// file it costs a few allocations instead of one string and one map entry
// per token, so a trial's tokenizer is ready in milliseconds, not the
// ~0.2 s a Go map of o200k_base's 200,000 strings takes.
type vocab struct {
	arena []byte
	offs  []uint32 // entry i's bytes are arena[offs[i]:offs[i+1]]
	ids   []int32  // entry i's id (its rank)
	slots []int32  // entry+1, 0 for empty; len is a power of two
	// byID is the entry of an id, -1 for none; nil when entry i has id i.
	byID []int32
	// known is a Bloom filter of the tokens with one hash (the table's):
	// most strings a merge looks up are no token, and the filter, small
	// enough for the cache, rules most of them out before the table's
	// cache misses.
	known []uint64
}

const knownBits = 21

// vocabBuilder accumulates entries; build makes the table.
type vocabBuilder struct{ v vocab }

func newVocabBuilder(n, arenaSize int) *vocabBuilder {
	b := &vocabBuilder{vocab{arena: make([]byte, 0, arenaSize), offs: make([]uint32, 1, n+1), ids: make([]int32, 0, n)}}
	return b
}

// add appends a token (its bytes) with an id.
func (b *vocabBuilder) add(tok []byte, id int32) {
	b.v.arena = append(b.v.arena, tok...)
	b.v.offs = append(b.v.offs, uint32(len(b.v.arena)))
	b.v.ids = append(b.v.ids, id)
}

// build indexes the entries, refusing ids outside [0, noRank), and two
// entries with the same bytes or the same id.
func (b *vocabBuilder) build() (*vocab, error) {
	v := &b.v
	n := len(v.ids)
	size := 1 << bits.Len(uint(2*n)) // load factor ≤ 1/2
	v.slots = make([]int32, size)
	v.known = make([]uint64, 1<<knownBits/64)
	mask := uint64(size - 1)
	maxID, sequential := int32(-1), true
	for i, id := range v.ids {
		if id < 0 || id >= noRank {
			return nil, fmt.Errorf("token id %d out of range [0, %d)", id, noRank)
		}
		maxID = max(maxID, id)
		sequential = sequential && id == int32(i)
		tok := v.entry(i)
		hash := strHash(tok)
		k := hash >> (64 - knownBits)
		v.known[k/64] |= 1 << (k % 64)
		for h := hash & mask; ; h = (h + 1) & mask {
			e := v.slots[h]
			if e == 0 {
				v.slots[h] = int32(i + 1)
				break
			}
			if v.entry(int(e-1)) == tok {
				return nil, fmt.Errorf("two vocabulary entries are the token %q", tok)
			}
		}
	}
	if !sequential {
		v.byID = make([]int32, maxID+1)
		for i := range v.byID {
			v.byID[i] = -1
		}
		for i, id := range v.ids {
			if v.byID[id] >= 0 {
				return nil, fmt.Errorf("two vocabulary entries have id %d", id)
			}
			v.byID[id] = int32(i)
		}
	}
	return v, nil
}

// entry is entry i's bytes, without a copy: the arena is never modified
// once built.
func (v *vocab) entry(i int) string {
	a, b := v.offs[i], v.offs[i+1]
	if a == b {
		return ""
	}
	return unsafe.String(&v.arena[a], int(b-a))
}

// len is the number of tokens.
func (v *vocab) len() int { return len(v.ids) }

// lookup is the id of the token s.
func (v *vocab) lookup(s string) (int32, bool) {
	hash := strHash(s)
	if k := hash >> (64 - knownBits); v.known[k/64]&(1<<(k%64)) == 0 {
		return 0, false
	}
	mask := uint64(len(v.slots) - 1)
	for h := hash & mask; ; h = (h + 1) & mask {
		e := v.slots[h]
		if e == 0 {
			return 0, false
		}
		i := int(e - 1)
		if int(v.offs[i+1]-v.offs[i]) == len(s) && string(v.arena[v.offs[i]:v.offs[i+1]]) == s {
			return v.ids[i], true
		}
	}
}

// token is the bytes of id, as a slice of the arena (not to be modified).
func (v *vocab) token(id int) ([]byte, bool) {
	i := id
	if v.byID != nil {
		if id < 0 || id >= len(v.byID) || v.byID[id] < 0 {
			return nil, false
		}
		i = int(v.byID[id])
	} else if id < 0 || id >= len(v.ids) {
		return nil, false
	}
	return v.arena[v.offs[i]:v.offs[i+1]], true
}

// all yields every token's bytes (a slice of the arena) and id.
func (v *vocab) all() iter.Seq2[[]byte, int32] {
	return func(yield func([]byte, int32) bool) {
		for i, id := range v.ids {
			if !yield(v.arena[v.offs[i]:v.offs[i+1]], id) {
				return
			}
		}
	}
}

// vocabOf builds a vocab from a map of token bytes to ids.
func vocabOf(ranks map[string]int32) (*vocab, error) {
	size := 0
	for tok := range ranks {
		size += len(tok)
	}
	b := newVocabBuilder(len(ranks), size)
	for tok, id := range ranks {
		b.add([]byte(tok), id)
	}
	return b.build()
}

// parseTiktoken reads a .tiktoken rank file: lines of base64 token bytes, a
// space and the rank.
func parseTiktoken(data []byte) (*vocab, error) {
	b := newVocabBuilder(bytes.Count(data, []byte{'\n'})+1, len(data)*3/4)
	var tok [256]byte
	for n := 0; len(data) > 0; n++ {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(line) == 0 {
			continue
		}
		sp := bytes.IndexByte(line, ' ')
		var id int64 = -1
		if sp > 0 && sp < len(line)-1 {
			id = 0
			for _, c := range line[sp+1:] {
				if c < '0' || c > '9' || id > noRank {
					id = -1
					break
				}
				id = id*10 + int64(c-'0')
			}
		}
		var k int
		var err error
		if id >= 0 && base64.StdEncoding.DecodedLen(sp) <= len(tok) {
			k, err = base64.StdEncoding.Decode(tok[:], line[:sp])
		}
		if id < 0 || err != nil || k == 0 {
			return nil, fmt.Errorf("rank file line %d is not \"<base64> <rank>\"", n+1)
		}
		b.add(tok[:k], int32(min(id, noRank)))
	}
	return b.build()
}

// strHash is a fast, fixed string hash (vocabulary lookups and the filter
// of known tokens): 8 bytes at a time, mixed by multiplication.
func strHash(s string) uint64 {
	const m1, m2 = 0x9e3779b97f4a7c15, 0xbf58476d1ce4e5b9
	h := uint64(len(s)) * m1
	for len(s) >= 8 {
		h = (h ^ le64(s)) * m2
		h ^= h >> 29
		s = s[8:]
	}
	if len(s) > 0 {
		var t uint64
		for i := len(s) - 1; i >= 0; i-- {
			t = t<<8 | uint64(s[i])
		}
		h = (h ^ t) * m2
	}
	h ^= h >> 32
	h *= m1
	return h ^ h>>29
}

func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}
