package tokenizer

// A long piece is merged in chunks, cut where no merge can cross. The first
// merge across a boundary would join a part ending there with one starting
// there into a token, so a boundary that no token spans is never crossed,
// and merging the chunks on their own gives exactly the piece's result:
// pairs in one chunk never rank differently for what happens in another,
// and their order (rank, then offset) is the same within the chunk. Small
// chunks keep the merge's arrays in the cache; Chinese without spaces, one
// piece however long, has such boundaries between most characters. A run
// of one character has none and is merged whole.

// chunk is the length from which a piece is cut, and the length of the
// chunks sought.
const chunk = 256

// cutSearch is how many boundaries past each chunk length are tried before
// the chunk is allowed to grow by another chunk length.
const cutSearch = 32

// mergeLong merges a long piece chunk by chunk, at boundaries no token spans.
func (e *engine) mergeLong(piece string, ids []int) []int {
	start := 0
	for c := chunk; c+chunk < len(piece); c += chunk {
		for end := min(c+cutSearch, len(piece)-1); c < end; c++ {
			if e.uncrossable(piece, c) {
				ids = e.mergeWhole(piece[start:c], ids)
				start = c
				break
			}
		}
	}
	return e.mergeWhole(piece[start:], ids)
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
