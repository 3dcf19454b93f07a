package traceanalysis

import "math/bits"

// blocks is a trace's block structure, keyed by hash id: where each id was
// first seen (the hash of its prefix, and its position) and whether that
// prefix, and that (position, id) pair, occurred again. In a trace whose
// ids name their prefix (every id always after the same ids, as in the
// Mooncake traces), that is all there is, one slot of 16 bytes a distinct
// block; an id seen after other prefixes has those prefixes and positions
// counted in the extra sets. Open addressing with linear probing, grown by
// half when 4/5 full.
type blocks struct {
	slots          []blockSlot
	n              int // ids
	prefixRepeats  int // ids whose first prefix occurred again
	extraPrefixes  *counts
	extraPositions *counts
}

// blockSlot is one id. key is the id's hash with bit 2 set (0: an empty
// slot), bit 0 marking its first prefix seen again and bit 1 its first
// (position, id) pair seen again. at holds the first prefix's hash in its
// high 48 bits and the position in its low 16 (noPosition: the position is
// too large to hold, and every (position, id) pair of the id is in the
// extra positions).
type blockSlot struct{ key, at uint64 }

const (
	prefixAgain   = 1
	positionAgain = 2
	keyMask       = ^uint64(3)
	noPosition    = 0xffff
	prefixMask    = ^uint64(noPosition)
)

func newBlocks() *blocks {
	return &blocks{slots: make([]blockSlot, 1024), extraPrefixes: newCounts(), extraPositions: newCounts()}
}

// find returns the slot of id's key k (keyMask applied), empty if absent.
func (b *blocks) find(k uint64) *blockSlot {
	hi, _ := bits.Mul64(k, uint64(len(b.slots)))
	for i := int(hi); ; i++ {
		if i == len(b.slots) {
			i = 0
		}
		if s := &b.slots[i]; s.key == 0 || s.key&keyMask == k {
			return s
		}
	}
}

func blockKey(id int64) uint64 { return idKey(id)&keyMask | 4 }

// seen reports whether id occurred.
func (b *blocks) seen(id int64) bool { return b.find(blockKey(id)).key != 0 }

// observe records id at position pos after the prefix whose chained hash,
// id included, is chain.
func (b *blocks) observe(pos int, id int64, chain uint64) {
	if 5*(b.n+1) > 4*len(b.slots) {
		b.grow()
	}
	k := blockKey(id)
	s := b.find(k)
	if s.key == 0 {
		s.key, s.at = k, chain&prefixMask|uint64(min(pos, noPosition))
		b.n++
		if pos >= noPosition {
			b.extraPositions.add(positionKey(pos, id))
		}
		return
	}
	first := s.at & noPosition
	if s.at&prefixMask == chain&prefixMask { // the same prefix, so the same position
		if s.key&prefixAgain == 0 {
			b.prefixRepeats++
		}
		s.key |= prefixAgain | positionAgain
	} else {
		b.extraPrefixes.add(chain)
		if first != noPosition && uint64(pos) == first {
			s.key |= positionAgain
		}
	}
	if first == noPosition || uint64(pos) != first {
		b.extraPositions.add(positionKey(pos, id))
	}
}

// positionRepeated reports whether (pos, id) occurred more than once.
func (b *blocks) positionRepeated(pos int, id int64) bool {
	s := b.find(blockKey(id))
	if first := s.at & noPosition; first != noPosition && uint64(pos) == first {
		return s.key&positionAgain != 0
	}
	return b.extraPositions.repeated(positionKey(pos, id))
}

// prefixes are the distinct prefixes and those that occurred more than once.
func (b *blocks) prefixes() (distinct, repeated int) {
	return b.n + b.extraPrefixes.n, b.prefixRepeats + b.extraPrefixes.repeats
}

func (b *blocks) grow() {
	old := b.slots
	b.slots = make([]blockSlot, len(old)+len(old)/2)
	for _, s := range old {
		if s.key != 0 {
			*b.find(s.key & keyMask) = s
		}
	}
}
