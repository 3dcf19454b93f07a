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

// merge appends the tokens of a piece that is not itself a token: tiktoken's
// byte-pair merge, which starts from single bytes and repeatedly merges the
// adjacent pair whose concatenation has the lowest rank, the leftmost of
// equal ones, until no pair is a token.
func (e *engine) merge(piece string, ids []int) []int {
	ids, _ = e.mergeUntil(piece, ids, nil)
	return ids
}

// mergeUntil is merge that gives up, with done false, as soon as stop (nil:
// never) returns true; stop is called every checkBytes of a long piece.
func (e *engine) mergeUntil(piece string, ids []int, stop func() bool) (_ []int, done bool) {
	if len(piece) >= 2*chunk+cutSearch {
		return e.mergeLong(piece, ids, stop)
	}
	return e.mergeWhole(piece, ids), true
}

// mergeWhole merges a piece in one go, by either algorithm.
func (e *engine) mergeWhole(piece string, ids []int) []int {
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
	switch {
	case len(s) == 2:
		return e.pairRanks[int(s[0])<<8|int(s[1])]
	case len(s) > e.maxLen:
		return noRank
	}
	if r, ok := e.ranks.lookup(s); ok {
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
		id    int32 // of this part
	}
	var buf [smallPiece + 1]part
	parts := buf[:len(piece)+1]
	for i := range len(piece) {
		parts[i] = part{i, noRank, e.byteIDs[piece[i]]}
	}
	parts[len(piece)] = part{len(piece), noRank, 0}
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
		parts[best].id = parts[best].rank
		parts[best].rank = pairRank(best, 1)
		if best > 0 {
			parts[best-1].rank = pairRank(best-1, 1)
		}
		parts = append(parts[:best+1], parts[best+2:]...)
	}
	for _, p := range parts[:len(parts)-1] {
		ids = append(ids, int(p.id))
	}
	return ids
}

// index is the type of byte offsets in mergeHeap: int32 halves its memory
// on any piece shorter than 2 GiB.
type index interface{ int32 | int }

// mergeHeap gives mergeSmall's result in O(n log n) through mergeParts:
// the parts start as the piece's bytes and a pair's merged token is its
// rank.
func mergeHeap[I index](e *engine, piece string, ids []int) []int {
	id := make([]int32, len(piece))
	for i := range len(piece) {
		id[i] = e.byteIDs[piece[i]]
	}
	return mergeParts(id, func(start, _, end I) (int32, int32) {
		r := e.rank(piece[start:end])
		return r, r
	}, ids)
}

// mergeParts merges parts in O(n log n) and appends their final ids: the
// parts form a linked list and a pairQueue yields their pairs in merge
// order (rank, then position). Parts are named by the index of their first
// unit; id holds the initial ids (and is overwritten). pair returns the rank
// of merging the part at start with the next one, at next, which ends at
// end, and the id of the merged part; noRank if they do not merge.
func mergeParts[I index](id []int32, pair func(start, next, end I) (rank, merged int32), ids []int) []int {
	n := I(len(id))
	// next[i] is where part i ends (n for the last part), prev[i] where the
	// part before it starts (-1 for the first).
	next := make([]I, n)
	prev := make([]I, n)
	pairRank := func(i I) int32 {
		j := next[i]
		if j == n {
			return noRank
		}
		r, _ := pair(i, j, next[j])
		return r
	}
	for i := I(0); i < n; i++ {
		next[i], prev[i] = i+1, i-1
	}
	q := newPairQueue(n, pairRank)
	for {
		p, ok := q.pop()
		if !ok {
			break
		}
		i := p.start
		j := next[i]
		_, id[i] = pair(i, j, next[j])
		next[i] = next[j]
		if next[j] != n {
			prev[next[j]] = i
		}
		q.set(j, noRank)
		q.set(i, pairRank(i))
		if l := prev[i]; l >= 0 {
			q.set(l, pairRank(l))
		}
	}
	for i := I(0); i < n; i = next[i] {
		ids = append(ids, int(id[i]))
	}
	return ids
}

// pair is a queue entry: the rank of merging the part at start with the
// next part.
type pair[I index] struct {
	rank  int32
	start I
}

func (p pair[I]) less(q pair[I]) bool {
	return p.rank < q.rank || p.rank == q.rank && p.start < q.start
}

// sortPairs sorts pairs by rank, then offset: as packed integers in keys (a
// scratch buffer, returned for reuse), which sort much faster than through a
// comparison function, unless offsets exceed 32 bits.
func sortPairs[I index](ps []pair[I], keys []uint64) []uint64 {
	keys = slices.Grow(keys[:0], len(ps))[:len(ps)]
	for k, p := range ps {
		if uint64(p.start) > math.MaxUint32 {
			slices.SortFunc(ps, func(a, b pair[I]) int {
				return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.start, b.start))
			})
			return keys
		}
		keys[k] = uint64(p.rank)<<32 | uint64(p.start)
	}
	slices.Sort(keys)
	for k, key := range keys {
		ps[k] = pair[I]{int32(key >> 32), I(uint32(key))}
	}
	return keys
}

// pairQueue holds the pair of every part that merges with the next one and
// pops them in merge order: by rank, then offset.
//
// A part whose pair changes is only marked dirty; dirty pairs are queued
// when one of them may be the least. Most are queued in bulk, sorted, which
// costs far less than a heap: a merge mostly forms pairs of higher rank, so
// in a long run of one byte a whole level of merges goes by first. Queued
// entries live in a sorted run and a heap; one whose rank is no longer its
// part's is stale and skipped. That test is exact because a part's pair
// only grows and ranks are distinct, so a part never gets an old rank back.
type pairQueue[I index] struct {
	rank    []int32 // of each part's pair: noRank if it does not merge or the part is gone
	run     []pair[I]
	heap    pairHeap[I]
	dirty   []I
	isDirty []bool
	low     pair[I] // at most the least dirty pair
	// Scratch buffers of flush, kept for reuse.
	batch, spare []pair[I]
	keys         []uint64
}

// newPairQueue queues the pairs of the n single bytes of a piece.
func newPairQueue[I index](n I, pairRank func(I) int32) *pairQueue[I] {
	q := &pairQueue[I]{
		rank:    make([]int32, n),
		isDirty: make([]bool, n),
		low:     pair[I]{rank: noRank},
		run:     make([]pair[I], 0, n),
		dirty:   make([]I, 0, n/2),
	}
	for i := I(0); i < n; i++ {
		if q.rank[i] = pairRank(i); q.rank[i] != noRank {
			q.run = append(q.run, pair[I]{q.rank[i], i})
		}
	}
	q.keys = sortPairs(q.run, nil)
	return q
}

// set gives part i's pair rank r.
func (q *pairQueue[I]) set(i I, r int32) {
	q.rank[i] = r
	if r == noRank {
		return
	}
	if !q.isDirty[i] {
		q.isDirty[i] = true
		q.dirty = append(q.dirty, i)
	}
	if p := (pair[I]{r, i}); p.less(q.low) {
		q.low = p
	}
}

// pop removes and returns the least pair, or returns false if none is left.
func (q *pairQueue[I]) pop() (pair[I], bool) {
	for {
		var p pair[I]
		fromRun := len(q.run) > 0 && (len(q.heap) == 0 || q.run[0].less(q.heap[0]))
		switch {
		case fromRun:
			p = q.run[0]
		case len(q.heap) > 0:
			p = q.heap[0]
		default:
			p = pair[I]{rank: noRank}
		}
		if len(q.dirty) > 0 && q.low.less(p) {
			q.flush()
			continue
		}
		switch {
		case p.rank == noRank:
			return p, false
		case fromRun:
			q.run = q.run[1:]
		default:
			q.heap.pop()
		}
		if q.rank[p.start] == p.rank {
			return p, true
		}
	}
}

// flush queues the dirty pairs: merged into the run if they are many, else
// pushed onto the heap. Merging costs the run's length, so it waits until
// the batch is at least half as long, which keeps the total O(n log n).
func (q *pairQueue[I]) flush() {
	batch := q.batch[:0]
	if cap(batch) < len(q.dirty) {
		batch = make([]pair[I], 0, len(q.dirty))
	}
	for _, i := range q.dirty {
		q.isDirty[i] = false
		if r := q.rank[i]; r != noRank {
			batch = append(batch, pair[I]{r, i})
		}
	}
	q.dirty, q.low, q.batch = q.dirty[:0], pair[I]{rank: noRank}, batch
	if len(batch) < 32 || len(batch) < len(q.run)/2 {
		for _, p := range batch {
			q.heap.push(p)
		}
		return
	}
	q.keys = sortPairs(batch, q.keys)
	// Merge run and batch into spare, which then swaps with the run.
	old, run := q.run, q.spare[:0]
	for len(old) > 0 && len(batch) > 0 {
		if batch[0].less(old[0]) {
			run, batch = append(run, batch[0]), batch[1:]
		} else {
			run, old = append(run, old[0]), old[1:]
		}
	}
	run = append(append(run, old...), batch...)
	q.spare, q.run = q.run[:0:cap(q.run)], run
}

// pairHeap is a 4-ary min-heap of pairs: half the depth of a binary heap,
// and a node's children share a cache line.
type pairHeap[I index] []pair[I]

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
