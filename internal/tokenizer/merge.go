package tokenizer

import (
	"cmp"
	"math"
	"slices"
)

// noRank marks a pair of parts that does not merge.
const noRank = math.MaxInt32

// smallPiece is the longest piece merged by mergeSmall; longer ones go
// through mergeHeap.
const smallPiece = 64

// merge appends the tokens of a piece that is not itself a token. Both
// algorithms are tiktoken's byte-pair merge: start from single bytes and
// repeatedly merge the adjacent pair whose concatenation has the lowest
// rank, the leftmost of equal ones, until no pair is a token.
func (e *engine) merge(piece string, ids []int) []int {
	switch {
	case len(piece) <= smallPiece:
		return e.mergeSmall(piece, ids)
	case len(piece) <= math.MaxInt32:
		return mergeHeap[int32](e, piece, ids)
	default:
		return mergeHeap[int](e, piece, ids)
	}
}

// rank returns the rank of s, or noRank if s is not a token.
func (e *engine) rank(s string) int32 {
	if len(s) > e.maxLen {
		return noRank
	}
	if r, ok := e.ranks[s]; ok {
		return r
	}
	return noRank
}

// mergeSmall is tiktoken's own loop, quadratic in the length of the piece
// and the fastest on short ones.
func (e *engine) mergeSmall(piece string, ids []int) []int {
	type part struct {
		start int
		rank  int32 // of merging this part with the next one
	}
	var buf [smallPiece + 1]part
	parts := buf[:len(piece)+1]
	for i := range parts {
		parts[i] = part{i, noRank}
	}
	// pairRank ranks parts i and i+1+skip taken as one (tiktoken's get_rank).
	pairRank := func(i, skip int) int32 {
		if i+skip+2 >= len(parts) {
			return noRank
		}
		return e.rank(piece[parts[i].start:parts[i+skip+2].start])
	}
	for i := range len(parts) - 2 {
		parts[i].rank = pairRank(i, 0)
	}
	for {
		best := 0
		for i := 1; i < len(parts)-1; i++ {
			if parts[i].rank < parts[best].rank {
				best = i
			}
		}
		if parts[best].rank == noRank {
			break
		}
		// Rank the pairs the merged part will form, then drop the part it
		// absorbs.
		parts[best].rank = pairRank(best, 1)
		if best > 0 {
			parts[best-1].rank = pairRank(best-1, 1)
		}
		parts = append(parts[:best+1], parts[best+2:]...)
	}
	for i := range len(parts) - 1 {
		ids = append(ids, int(e.ranks[piece[parts[i].start:parts[i+1].start]]))
	}
	return ids
}

// index is the type of byte offsets in mergeHeap: int32 halves its memory
// on any piece shorter than 2 GiB.
type index interface{ int32 | int }

// mergeHeap gives mergeSmall's result in O(n log n). The parts form a linked
// list. Pairs are ordered by rank, then offset: those of single bytes are
// sorted once, those formed by merges go into a min-heap, and each step
// merges the least of the two heads. An entry whose rank is no longer its
// part's is stale and skipped: a part's pair only ever grows and ranks are
// distinct, so a part never gets an old rank back.
func mergeHeap[I index](e *engine, piece string, ids []int) []int {
	n := I(len(piece))
	// Parts are named by their start offset. next[i] is where part i ends
	// (n for the last part), prev[i] where the part before it starts (-1
	// for the first), rank[i] the rank of merging it with the next part
	// (noRank for dead parts too).
	next := make([]I, n)
	prev := make([]I, n)
	rank := make([]int32, n)
	var first []pair[I] // the pairs of single bytes, sorted
	var h pairHeap[I]   // the pairs formed later
	pairRank := func(i I) int32 {
		j := next[i]
		if j == n {
			return noRank
		}
		return e.rank(piece[i:next[j]])
	}
	for i := I(0); i < n; i++ {
		next[i], prev[i] = i+1, i-1
	}
	for i := I(0); i < n; i++ {
		if rank[i] = pairRank(i); rank[i] != noRank {
			first = append(first, pair[I]{rank[i], i})
		}
	}
	// Sorting is adaptive: a run of one byte is sorted already.
	slices.SortFunc(first, func(a, b pair[I]) int {
		return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.start, b.start))
	})
	for len(first) > 0 || len(h) > 0 {
		var p pair[I]
		if len(h) == 0 || len(first) > 0 && first[0].less(h[0]) {
			p, first = first[0], first[1:]
		} else {
			p = h.pop()
		}
		i := p.start
		if rank[i] != p.rank {
			continue
		}
		j := next[i]
		next[i] = next[j]
		if next[j] != n {
			prev[next[j]] = i
		}
		rank[j] = noRank
		if rank[i] = pairRank(i); rank[i] != noRank {
			h.push(pair[I]{rank[i], i})
		}
		if l := prev[i]; l >= 0 {
			if rank[l] = pairRank(l); rank[l] != noRank {
				h.push(pair[I]{rank[l], l})
			}
		}
	}
	for i := I(0); i < n; i = next[i] {
		ids = append(ids, int(e.ranks[piece[i:next[i]]]))
	}
	return ids
}

// pair is a heap entry: the rank of merging the part at start with the next.
type pair[I index] struct {
	rank  int32
	start I
}

func (p pair[I]) less(q pair[I]) bool {
	return p.rank < q.rank || p.rank == q.rank && p.start < q.start
}

// pairHeap is a 4-ary min-heap of pairs: half the depth of a binary heap,
// and a node's children share a cache line.
type pairHeap[I index] []pair[I]

func (h pairHeap[I]) init() {
	for i := (len(h) - 2) / 4; i >= 0; i-- {
		h.down(i)
	}
}

func (h *pairHeap[I]) push(p pair[I]) {
	*h = append(*h, p)
	s := *h
	i := len(s) - 1
	for i > 0 {
		parent := (i - 1) / 4
		if !p.less(s[parent]) {
			break
		}
		s[i] = s[parent]
		i = parent
	}
	s[i] = p
}

func (h *pairHeap[I]) pop() pair[I] {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	*h = s[:last]
	if last > 0 {
		h.down(0)
	}
	return top
}

func (h pairHeap[I]) down(i int) {
	p := h[i]
	for {
		first := 4*i + 1
		if first >= len(h) {
			break
		}
		m := first
		for c := first + 1; c < min(first+4, len(h)); c++ {
			if h[c].less(h[m]) {
				m = c
			}
		}
		if !h[m].less(p) {
			break
		}
		h[i] = h[m]
		i = m
	}
	h[i] = p
}
