package tokenizer

import (
	"fmt"
	"hash/maphash"
	"strings"
	"sync"
	"unicode/utf8"
)

// engine is a tiktoken-style byte-pair encoder: a splitter cuts the text
// into pieces and each piece that is not itself a token is merged from its
// bytes. It gives the ids of tiktoken's CoreBPE.encode_ordinary, in time
// O(n log n) in the length of the text.
type engine struct {
	ranks   map[string]int32 // token bytes → rank, which is also its id
	decoder map[int]string   // id → bytes, of tokens then of specials
	split   splitter
	maxLen  int // of a token, in bytes
	// byteIDs and pairRanks are the ranks of the tokens of one and two
	// bytes, by their bytes: merging starts with those, and a table beats
	// the map.
	byteIDs   [256]int32
	pairRanks []int32 // noRank if the two bytes are no token
	// known is a Bloom filter of the tokens of three bytes or more, with
	// one hash: most strings a merge looks up are no token, and the
	// filter, small enough for the cache, rules most of them out without
	// the map's cache misses.
	known     []uint64
	knownSeed maphash.Seed
	// quads is built on the first long piece, for mergeLong.
	quads func() quadSet
}

// newEngine builds an encoder from distinct ranks in [0, noRank) and the
// special tokens that Decode also knows.
func newEngine(ranks map[string]int32, specials map[string]int, split splitter) (*engine, error) {
	e := &engine{
		ranks:     ranks,
		decoder:   make(map[int]string, len(ranks)+len(specials)),
		split:     split,
		pairRanks: make([]int32, 1<<16),
		known:     make([]uint64, 1<<knownBits/64),
		knownSeed: maphash.MakeSeed(),
	}
	for i := range e.pairRanks {
		e.pairRanks[i] = noRank
	}
	for tok, id := range ranks {
		if id < 0 || id >= noRank {
			return nil, fmt.Errorf("token id %d out of range [0, %d)", id, noRank)
		}
		if _, dup := e.decoder[int(id)]; dup {
			return nil, fmt.Errorf("two vocabulary entries have id %d", id)
		}
		e.decoder[int(id)] = tok
		e.maxLen = max(e.maxLen, len(tok))
		switch len(tok) {
		case 1:
			e.byteIDs[tok[0]] = id
		case 2:
			e.pairRanks[int(tok[0])<<8|int(tok[1])] = id
		default:
			h := e.knownHash(tok)
			e.known[h/64] |= 1 << (h % 64)
		}
	}
	e.quads = sync.OnceValue(func() quadSet { return newQuadSet(ranks) })
	for tok, id := range specials {
		if _, ok := e.decoder[id]; !ok {
			e.decoder[id] = tok
		}
	}
	return e, nil
}

const knownBits = 21

func (e *engine) knownHash(s string) uint64 {
	return maphash.String(e.knownSeed, s) >> (64 - knownBits)
}

// encode returns the ids of text. Invalid UTF-8 is first read as tiktoken-go
// reads it, each bad byte as U+FFFD.
func (e *engine) encode(text string) []int {
	if !utf8.ValidString(text) {
		text = string([]rune(text))
	}
	ids := make([]int, 0, len(text)/4+1)
	e.split.split(text, func(piece string) {
		if id, ok := e.ranks[piece]; ok {
			ids = append(ids, int(id))
			return
		}
		ids = e.merge(piece, ids)
	})
	return ids
}

func (e *engine) decode(ids []int) string {
	var sb strings.Builder
	for _, id := range ids {
		sb.WriteString(e.decoder[id])
	}
	return sb.String()
}
