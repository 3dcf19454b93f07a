package kvcache

import (
	"encoding/binary"
	"hash/maphash"
)

// Sequence cuts a sequence of 64-bit words (a request's token ids, or
// whatever stands for them) into blocks of a fixed number of words and
// names each full block by a hash of its words chained to the previous
// block's name, as vLLM names KV blocks: equal names mean equal prefixes.
// A partial trailing block has no name. It keeps only the partial block,
// so work is linear in the sequence's length and memory in its number of
// blocks.
type Sequence struct {
	seed   maphash.Seed
	size   int
	buf    []byte // the previous block's name, then the partial block's words, 8 bytes each
	fill   int    // words in the partial block
	hashes []uint64
}

// NewSequence returns an empty sequence of blocks of size words, names
// drawn with seed; words is a hint of the sequence's length.
func NewSequence(seed maphash.Seed, size, words int) *Sequence {
	return &Sequence{seed: seed, size: size, buf: make([]byte, 8, 8+8*size), hashes: make([]uint64, 0, words/size)}
}

// Add appends a word to the sequence.
func (s *Sequence) Add(w uint64) {
	s.buf = binary.LittleEndian.AppendUint64(s.buf, w)
	if s.fill++; s.fill == s.size {
		s.close()
	}
}

// close names the full partial block and starts the next.
func (s *Sequence) close() {
	h := maphash.Bytes(s.seed, s.buf)
	s.hashes = append(s.hashes, h)
	s.buf = binary.LittleEndian.AppendUint64(s.buf[:0], h)
	s.fill = 0
}

// Hashes are the names of the full blocks so far, in order. The slice is
// the sequence's own: it grows as words are added.
func (s *Sequence) Hashes() []uint64 { return s.hashes }

// Mix is splitmix64's finaliser: a cheap bijective scramble, for making
// the words that stand for a block's content.
func Mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
