package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// mergesModel is Hugging Face's BPE model as its merges list defines it:
// a piece starts as its symbols (bytes for a byte-level vocabulary,
// characters otherwise, with byte_fallback's <0xXX> tokens or the unknown
// token for characters the vocabulary lacks) and the adjacent pair whose
// merge comes first in the list is merged, leftmost first, until no pair
// of the list is left. Unlike the engine's tiktoken merge, a pair merges
// only if the list has it, whatever the vocabulary holds. Long pieces are
// merged in O(n log n) through the engine's pairQueue.
type mergesModel struct {
	vocab     *vocab // token (bytes, for a byte-level vocabulary) → id
	byteLevel bool
	// symbols of single bytes: the byte's token (byte level) or its <0xXX>
	// token (byte_fallback); -1 for none.
	byteIDs [256]int32
	// asciiIDs caches the token of each ASCII character (not byte level);
	// -1 for none.
	asciiIDs     [128]int32
	pairs        map[uint64]uint64 // left<<32|right → rank<<32|merged
	unk          int32             // -1 for none
	fuseUnk      bool
	ignoreMerges bool
	// adjacent holds the pairs of characters (bytes, at byte level) that
	// stand next to each other in some token, for cutting long pieces.
	adjacent adjacency
}

// newMergesModel builds the model of a BPE tokenizer.json; byteLevel tells
// whether its pre-tokenizer is ByteLevel, added maps the text of its added
// tokens to their ids.
func newMergesModel(m *hfModel, byteLevel bool, added map[string]int) (*mergesModel, error) {
	var strs map[string]int
	if len(m.Vocab) == 0 {
		return nil, errors.New("model has no vocab")
	}
	if err := json.Unmarshal(m.Vocab, &strs); err != nil {
		return nil, fmt.Errorf("model vocab: %w", jsonError(err))
	}
	mm := &mergesModel{byteLevel: byteLevel, unk: -1, fuseUnk: m.FuseUnk, ignoreMerges: m.IgnoreMerges}
	var err error
	if byteLevel {
		mm.vocab, err = byteLevelRanks(strs, added)
	} else {
		ids := make(map[string]int32, len(strs))
		for tok, id := range strs {
			if id < 0 || id >= noRank {
				return nil, fmt.Errorf("vocabulary id %d out of range [0, %d)", id, noRank)
			}
			ids[tok] = int32(id)
		}
		mm.vocab, err = vocabOf(ids)
	}
	if err != nil {
		return nil, fmt.Errorf("model vocab: %w", err)
	}
	for b := range 256 {
		mm.byteIDs[b] = -1
		if byteLevel {
			mm.byteIDs[b], _ = mm.vocab.lookup(string([]byte{byte(b)}))
		} else if m.ByteFallback {
			if id, ok := mm.vocab.lookup(fmt.Sprintf("<0x%02X>", b)); ok {
				mm.byteIDs[b] = id
			}
		}
		if b < 128 {
			mm.asciiIDs[b] = -1
			if id, ok := mm.vocab.lookup(string(rune(b))); ok {
				mm.asciiIDs[b] = id
			}
		}
	}
	if m.UnkToken != nil && *m.UnkToken != "" {
		id, ok := strs[*m.UnkToken]
		if !ok {
			return nil, fmt.Errorf("model unk_token %s is not in the vocabulary", brief(*m.UnkToken))
		}
		mm.unk = int32(id)
	}
	if mm.pairs, err = parseMerges(m.Merges, strs); err != nil {
		return nil, err
	}
	mm.adjacent = make(adjacency, 1<<adjacencyBits/64)
	for tok := range mm.vocab.all() {
		if byteLevel {
			for i := 1; i < len(tok); i++ {
				mm.adjacent.add(rune(tok[i-1]), rune(tok[i]))
			}
			continue
		}
		prev := rune(-1)
		for _, r := range string(tok) {
			if prev >= 0 {
				mm.adjacent.add(prev, r)
			}
			prev = r
		}
	}
	return mm, nil
}

// adjacency is a Bloom filter with one hash of pairs of characters: it may
// say yes wrongly, which only costs a cut, never no.
type adjacency []uint64

const adjacencyBits = 22

func adjacencyHash(a, b rune) uint64 {
	return (uint64(uint32(a))<<32 | uint64(uint32(b))) * 0x9e3779b97f4a7c15 >> (64 - adjacencyBits)
}

func (f adjacency) add(a, b rune) {
	h := adjacencyHash(a, b)
	f[h/64] |= 1 << (h % 64)
}

func (f adjacency) has(a, b rune) bool {
	h := adjacencyHash(a, b)
	return f[h/64]&(1<<(h%64)) != 0
}

// parseMerges reads a merges list, ["a b", …] or [["a", "b"], …], into
// pairs of ids → rank<<32 | id of the merged token.
func parseMerges(raw json.RawMessage, vocab map[string]int) (map[uint64]uint64, error) {
	var pairs [][]string
	if len(raw) > 0 {
		var lines []string
		if err := json.Unmarshal(raw, &lines); err == nil {
			pairs = make([][]string, len(lines))
			for i, line := range lines {
				a, b, ok := strings.Cut(line, " ")
				if !ok || strings.Contains(b, " ") {
					return nil, fmt.Errorf("model merges: entry %d, %s, is not two tokens separated by a space", i, brief(line))
				}
				pairs[i] = []string{a, b}
			}
		} else if err := json.Unmarshal(raw, &pairs); err != nil {
			return nil, fmt.Errorf("model merges: not a list of \"a b\" strings or of [\"a\", \"b\"] pairs: %w", jsonError(err))
		}
	}
	merges := make(map[uint64]uint64, len(pairs))
	for rank, pair := range pairs {
		if len(pair) != 2 {
			return nil, fmt.Errorf("model merges: entry %d has %d tokens, want 2", rank, len(pair))
		}
		a, b := pair[0], pair[1]
		ida, oka := vocab[a]
		idb, okb := vocab[b]
		idab, okab := vocab[a+b]
		if !oka || !okb || !okab {
			return nil, fmt.Errorf("model merges: entry %d (%s %s) names a token that is not in the vocabulary", rank, brief(a), brief(b))
		}
		// A pair listed twice ranks by its last entry, as in Hugging Face's
		// map of merges.
		merges[uint64(ida)<<32|uint64(idb)] = uint64(rank)<<32 | uint64(idab)
	}
	return merges, nil
}

// pair returns the rank of merging tokens a and b and the merged token, or
// noRank.
func (m *mergesModel) pair(a, b int32) (rank, merged int32) {
	v, ok := m.pairs[uint64(a)<<32|uint64(b)]
	if !ok {
		return noRank, -1
	}
	return int32(v >> 32), int32(uint32(v))
}

// encode appends the ids of one pre-tokenized piece.
func (m *mergesModel) encode(piece string, ids []int) []int {
	if m.ignoreMerges {
		if id, ok := m.vocab.lookup(piece); ok {
			return append(ids, int(id))
		}
	}
	if len(piece) > smallPiece {
		ids, _ = m.encodeLong(piece, ids, nil)
		return ids
	}
	return m.encodeChunk(piece, ids)
}

// encodeUntil is encode that gives up, with done false, as soon as stop
// (nil: never) returns true; stop is called every checkBytes of the piece.
func (m *mergesModel) encodeUntil(piece string, ids []int, stop func() bool) (_ []int, done bool) {
	if len(piece) <= smallPiece || m.ignoreMerges {
		return m.encode(piece, ids), true
	}
	return m.encodeLong(piece, ids, stop)
}

// encodeChunk appends the ids of a piece, or of a chunk of one that no
// merge crosses.
func (m *mergesModel) encodeChunk(piece string, ids []int) []int {
	var buf [smallPiece]int32
	syms := m.symbols(piece, buf[:0])
	if len(syms) <= smallPiece {
		return m.mergeSmall(syms, ids)
	}
	return mergeSymbols(m, syms, ids)
}

// encodeLong encodes a long piece (a SentencePiece text is one piece
// between spaces and added tokens... or as a whole) chunk by chunk, cut
// where no merge can cross: a merge across a boundary would make a token in
// which the characters on either side stand next to each other, and if no
// token holds them so, the chunks merge on their own exactly as the piece
// does, in the same order within each. Most chunks are then short words.
// A stretch with no such boundary is cut every maxRun bytes anyway, at a
// character boundary, as the engine's mergeLong cuts one (cut.go): the
// count near such a cut is approximate, the cost linear.
func (m *mergesModel) encodeLong(piece string, ids []int, stop func() bool) (_ []int, done bool) {
	start, checked := 0, 0
	stopped := func(c int) bool {
		if stop == nil || c-checked < checkBytes {
			return false
		}
		checked = c
		return stop()
	}
	if m.byteLevel {
		for c := 1; c < len(piece); c++ {
			if stopped(c) {
				return ids, false
			}
			if !m.adjacent.has(rune(piece[c-1]), rune(piece[c])) ||
				c-start >= maxRun && (utf8.RuneStart(piece[c]) || c-start >= maxRun+utf8.UTFMax) {
				ids = m.encodeChunk(piece[start:c], ids)
				start = c
			}
		}
		return m.encodeChunk(piece[start:], ids), true
	}
	prev, prevKnown := rune(-1), false
	for c, r := range piece {
		if stopped(c) {
			return ids, false
		}
		// Both characters must be symbols of their own: an unknown one may
		// fuse with its neighbour.
		known := r < utf8.RuneSelf && m.asciiIDs[r] >= 0
		if !known && r >= utf8.RuneSelf {
			_, known = m.vocab.lookup(piece[c : c+utf8.RuneLen(r)])
		}
		if prevKnown && known && !m.adjacent.has(prev, r) || c-start >= maxRun {
			ids = m.encodeChunk(piece[start:c], ids)
			start = c
		}
		prev, prevKnown = r, known
	}
	return m.encodeChunk(piece[start:], ids), true
}

// symbols appends the initial symbols of a piece.
func (m *mergesModel) symbols(piece string, syms []int32) []int32 {
	if m.byteLevel {
		for i := 0; i < len(piece); i++ {
			syms = append(syms, m.byteIDs[piece[i]])
		}
		return syms
	}
	unkOpen := false // the last symbol is an unknown token that fuses
	for i := 0; i < len(piece); {
		c := piece[i]
		var id int32 = -1
		n := 1
		if c < utf8.RuneSelf {
			id = m.asciiIDs[c]
		} else {
			_, n = utf8.DecodeRuneInString(piece[i:])
			if v, ok := m.vocab.lookup(piece[i : i+n]); ok {
				id = v
			}
		}
		switch {
		case id >= 0:
			syms, unkOpen = append(syms, id), false
		case m.fallsBack(piece[i : i+n]):
			for j := i; j < i+n; j++ {
				syms = append(syms, m.byteIDs[piece[j]])
			}
			unkOpen = false
		case m.unk >= 0 && !(unkOpen && m.fuseUnk):
			syms, unkOpen = append(syms, m.unk), true
		}
		i += n
	}
	return syms
}

// fallsBack reports whether every byte of char has a byte_fallback token.
func (m *mergesModel) fallsBack(char string) bool {
	for i := 0; i < len(char); i++ {
		if m.byteIDs[char[i]] < 0 {
			return false
		}
	}
	return true
}

// mergeSmall merges a few symbols by scanning for the least pair, as the
// engine's mergeSmall does.
func (m *mergesModel) mergeSmall(syms []int32, ids []int) []int {
	type sym struct{ id, rank, merged int32 } // rank and merged: of the pair with the next symbol
	var buf [smallPiece]sym
	s := buf[:len(syms)]
	for i, id := range syms {
		s[i].id = id
	}
	rank := func(i int) {
		if i+1 < len(s) {
			s[i].rank, s[i].merged = m.pair(s[i].id, s[i+1].id)
		} else {
			s[i].rank = noRank
		}
	}
	for i := range s {
		rank(i)
	}
	for len(s) > 1 {
		best := 0
		for i := 1; i < len(s)-1; i++ {
			if s[i].rank < s[best].rank {
				best = i
			}
		}
		if s[best].rank == noRank {
			break
		}
		s[best].id = s[best].merged
		s = append(s[:best+1], s[best+2:]...)
		rank(best)
		if best > 0 {
			rank(best - 1)
		}
	}
	for _, x := range s {
		ids = append(ids, int(x.id))
	}
	return ids
}

// mergeSymbols merges many symbols in O(n log n) through mergeParts.
func mergeSymbols(m *mergesModel, id []int32, ids []int) []int {
	return mergeParts(id, func(start, next, _ int32) (int32, int32) { return m.pair(id[start], id[next]) }, ids)
}

// decode returns the text of ids: byte-level tokens are their bytes; the
// others have ▁ for a space and <0xXX> for a byte.
func (m *mergesModel) decode(ids []int, sb *strings.Builder) {
	for _, id := range ids {
		tok, ok := m.vocab.token(id)
		switch {
		case !ok:
		case m.byteLevel:
			sb.Write(tok)
		case len(tok) == 6 && tok[0] == '<' && tok[1] == '0' && tok[2] == 'x' && tok[5] == '>' && m.byteIDs[hexByte(tok[3:5])] == int32(id):
			sb.WriteByte(hexByte(tok[3:5]))
		default:
			sb.WriteString(strings.ReplaceAll(string(tok), "▁", " "))
		}
	}
}

func hexByte(h []byte) byte {
	v := func(c byte) byte {
		switch {
		case c >= 'a':
			return c - 'a' + 10
		case c >= 'A':
			return c - 'A' + 10
		}
		return c - '0'
	}
	return v(h[0])<<4 | v(h[1])
}
