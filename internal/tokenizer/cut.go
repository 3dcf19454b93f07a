package tokenizer

import "unicode/utf8"

// A long piece is merged in chunks, cut where no merge can cross. The first
// merge across a boundary would join a part ending there with one starting
// there into a token, so a boundary that no token spans is never crossed,
// and merging the chunks on their own gives exactly the piece's result:
// pairs in one chunk never rank differently for what happens in another,
// and their order (rank, then offset) is the same within the chunk. Small
// chunks keep the merge's arrays in the cache; Chinese without spaces, one
// piece however long, has such boundaries between most characters.
//
// A run with no such boundary (one character repeated, as a hostile reply
// can be) is cut anyway every maxRun bytes, at a character boundary, so
// that merging stays linear in the text and its memory a small multiple
// of maxRun: the merge's arrays and queue take some 50 bytes a byte, 500
// MB for a 10 MB run merged whole. This is the only place where the count
// is not exactly tiktoken's: a forced cut can change the tokens next to
// it, by a token or two at most per maxRun bytes of uncuttable run (none
// for a run of one character whose token length divides maxRun). Text
// with a boundary at least every maxRun bytes, which is all ordinary
// text, is merged exactly.

// chunk is the length from which a piece is cut, and the length of the
// chunks sought.
const chunk = 256

// cutSearch is how many boundaries past each chunk length are tried before
// the chunk is allowed to grow by another chunk length.
const cutSearch = 32

// maxRun is the longest stretch of a piece merged in one go: past it a
// chunk is cut where no boundary was found (see above).
const maxRun = 16 << 10

// mergeLong merges a long piece chunk by chunk, at boundaries no token
// spans, or every maxRun bytes where there are none. It gives up, with
// done false, as soon as stop (nil: never) returns true, which it asks
// every checkBytes.
func (e *engine) mergeLong(piece string, ids []int, stop func() bool) (_ []int, done bool) {
	start, checked := 0, 0
	var last forced
	for c := chunk; c+chunk < len(piece); c += chunk {
		if stop != nil && c-checked >= checkBytes {
			if checked = c; stop() {
				return ids, false
			}
		}
		cut := false
		for end := min(c+cutSearch, len(piece)-1); c < end; c++ {
			if e.uncrossable(piece, c) {
				ids = e.mergeWhole(piece[start:c], ids)
				start, cut = c, true
				break
			}
		}
		if !cut && c-start >= maxRun {
			c = forcedCut(piece, start)
			ids = last.merge(e, piece[start:c], ids)
			start = c
		}
	}
	return e.mergeWhole(piece[start:], ids), true
}

// forced remembers the last stretch cut by force and its ids: a run of one
// character repeated is cut into equal stretches, which are merged once.
// Merging is a function of the stretch alone, so this is exact.
type forced struct {
	text string
	ids  []int
}

// merge appends the ids of stretch s.
func (f *forced) merge(e *engine, s string, ids []int) []int {
	if s != f.text || f.ids == nil {
		f.text, f.ids = s, e.mergeWhole(s, f.ids[:0])
	}
	return append(ids, f.ids...)
}

// forcedCut is where a stretch of p from start with no boundary that no
// token spans is cut: maxRun bytes on, moved back to the start of its
// character (a UTF-8 sequence is never split; text that is not UTF-8 is
// cut where it falls). p holds more than maxRun bytes from start.
func forcedCut(p string, start int) int {
	c := start + maxRun
	for k := 0; k < utf8.UTFMax-1 && !utf8.RuneStart(p[c]); k++ {
		c--
	}
	if !utf8.RuneStart(p[c]) {
		return start + maxRun
	}
	return c
}

// uncrossable reports whether no token spans the boundary at c, 0 < c <
// len(p). A token of two or three bytes would be one of the three looked
// up; a longer one would hold a 4-byte window across c, starting at c-3,
// c-2 or c-1.
func (e *engine) uncrossable(p string, c int) bool {
	if e.pairRanks[int(p[c-1])<<8|int(p[c])] != noRank ||
		c >= 2 && e.rank(p[c-2:c+1]) != noRank ||
		c+2 <= len(p) && e.rank(p[c-1:c+2]) != noRank {
		return false
	}
	quads := e.quads()
	for w := max(0, c-3); w < c && w+4 <= len(p); w++ {
		if quads.has(p[w : w+4]) {
			return false
		}
	}
	return true
}

// quadSet is a Bloom filter with one hash of the 4-byte substrings of
// tokens: it may say yes wrongly, which only costs a cut, never no.
type quadSet []uint64

const quadBits = 24

func quadHash(s string) uint32 {
	v := uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
	return (v * 0x9e3779b1) >> (32 - quadBits)
}

func newQuadSet(ranks *vocab) quadSet {
	q := make(quadSet, 1<<quadBits/64)
	for tok := range ranks.all() {
		for w := 0; w+4 <= len(tok); w++ {
			h := quadHash(string(tok[w : w+4]))
			q[h/64] |= 1 << (h % 64)
		}
	}
	return q
}

func (q quadSet) has(s string) bool {
	h := quadHash(s)
	return q[h/64]&(1<<(h%64)) != 0
}
