package tokenizer

import (
	"strings"
	"sync"
	"unicode/utf8"
)

// engine is a tiktoken-style byte-pair encoder: a splitter cuts the text
// into pieces and each piece that is not itself a token is merged from its
// bytes. It gives the ids of tiktoken's CoreBPE.encode_ordinary, in time
// O(n log n) in the length of the text.
type engine struct {
	ranks    *vocab         // token bytes ↔ rank, which is also its id
	specials map[int]string // id → text of the special tokens not in ranks
	split    splitter
	maxLen   int // of a token, in bytes
	// byteIDs and pairRanks are the ranks of the tokens of one and two
	// bytes, by their bytes: merging starts with those, and a table beats
	// the map.
	byteIDs   [256]int32
	pairRanks []int32 // noRank if the two bytes are no token
	// quads is built on the first long piece, for mergeLong.
	quads func() quadSet
}

// newEngine builds an encoder from a vocabulary and the special tokens
// that Decode also knows.
func newEngine(ranks *vocab, specials map[string]int, split splitter) (*engine, error) {
	e := &engine{
		ranks:     ranks,
		specials:  map[int]string{},
		split:     split,
		pairRanks: make([]int32, 1<<16),
	}
	for i := range e.pairRanks {
		e.pairRanks[i] = noRank
	}
	for tok, id := range ranks.all() {
		e.maxLen = max(e.maxLen, len(tok))
		switch len(tok) {
		case 1:
			e.byteIDs[tok[0]] = id
		case 2:
			e.pairRanks[int(tok[0])<<8|int(tok[1])] = id
		}
	}
	e.quads = sync.OnceValue(func() quadSet { return newQuadSet(ranks) })
	for tok, id := range specials {
		if _, ok := ranks.token(id); !ok {
			e.specials[id] = tok
		}
	}
	return e, nil
}

// encode returns the ids of text. Invalid UTF-8 is first read as tiktoken-go
// reads it, each bad byte as U+FFFD.
func (e *engine) encode(text string) []int {
	if !utf8.ValidString(text) {
		text = string([]rune(text))
	}
	ids := make([]int, 0, len(text)/4+1)
	e.split.split(text, func(piece string) {
		if id, ok := e.ranks.lookup(piece); ok {
			ids = append(ids, int(id))
			return
		}
		ids = e.merge(piece, ids)
	})
	return ids
}

// count is len(encode(text)) without keeping the ids: a prompt of 100 MB
// would hold hundreds of MB of them only to be counted.
func (e *engine) count(text string) int {
	n, _ := e.countUntil(text, nil)
	return n
}

// checkBytes is how much text counting goes through between two calls of
// its stop function: some milliseconds of work.
const checkBytes = 64 << 10

// countUntil is count that gives up, with done false, as soon as stop (nil:
// never) returns true; stop is called every checkBytes of text or so,
// within a piece too, however long the piece.
func (e *engine) countUntil(text string, stop func() bool) (n int, done bool) {
	if !utf8.ValidString(text) {
		text = string([]rune(text))
	}
	var scratch []int
	since := 0
	done = true
	splitWhile(e.split, text, func(piece string) bool {
		if since += len(piece); stop != nil && since >= checkBytes {
			if since = 0; stop() {
				done = false
				return false
			}
		}
		if _, ok := e.ranks.lookup(piece); ok {
			n++
			return true
		}
		scratch, done = e.mergeUntil(piece, scratch[:0], stop)
		n += len(scratch)
		return done
	})
	return n, done
}

func (e *engine) decode(ids []int) string {
	var sb strings.Builder
	for _, id := range ids {
		if tok, ok := e.ranks.token(id); ok {
			sb.Write(tok)
		} else {
			sb.WriteString(e.specials[id])
		}
	}
	return sb.String()
}
