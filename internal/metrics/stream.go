package metrics

import (
	"maps"
	"math"
	"slices"
	"sync"
)

// computeStream is Compute over values too many to hold at once (the
// inter-chunk latencies of a million streamed requests are 63 million),
// exactly: each part must yield the same values every time it is called.
// The values are the parts' together; each pass reads every part on its own
// goroutine. The first pass counts them into 2^20 buckets by the leading
// bits of their order-preserving bit pattern (256 per octave); the second
// keeps only the values of the buckets that hold the ranks the percentiles
// need (a bucket of more than sliceCap values keeps how often each distinct
// value occurs), and sorts them. Memory is the bucket counts (one array per
// part) plus those buckets' values, not all the values; the order
// statistics, and so the percentiles, are those of the sorted values. Sums
// are added part by part in order, so a given split gives the same result
// on any number of CPUs.
func computeStream(parts ...func(yield func(float64))) Stats {
	counted := make([]partCount, len(parts))
	inParallel(len(parts), func(p int) { counted[p] = countPart(parts[p]) })
	counts, n, sum := make([]uint32, 1<<streamBits), 0, 0.0
	low, high := math.Inf(1), math.Inf(-1)
	for _, c := range counted {
		for b, k := range c.counts {
			counts[b] += k
		}
		n, sum = n+c.n, sum+c.sum
		low, high = math.Min(low, c.low), math.Max(high, c.high)
	}
	if n == 0 {
		return Stats{}
	}
	kept, slot := keepBuckets(counts, n)
	// Pass 2: each part writes its values of a kept bucket at its own offset
	// (the earlier parts' counts of that bucket), or counts them in its own map.
	mean := sum / float64(n)
	fills := make([]partFill, len(parts))
	for p := range fills {
		fills[p].next = make([]int, len(kept))
		for i := range kept {
			if p > 0 {
				fills[p].next[i] = fills[p-1].next[i] + int(counted[p-1].counts[kept[i].bucket])
			}
		}
	}
	inParallel(len(parts), func(p int) { fills[p].fill(parts[p], kept, slot, mean) })
	var sq float64
	for p := range fills {
		sq += fills[p].sq
		for i, m := range fills[p].counts {
			for v, k := range m {
				kept[i].counts[v] += k
			}
		}
	}
	inParallel(len(kept), func(i int) { kept[i].sort() })
	order := func(rank int) float64 {
		for i := range kept {
			if v, ok := kept[i].at(rank); ok {
				return v
			}
		}
		return math.NaN() // cannot happen: every needed rank's bucket was kept
	}
	at := func(p float64) float64 { return percentileOf(n, p, order) }
	return Stats{
		Avg: mean, Min: low, Max: high,
		P1: at(1), P5: at(5), P10: at(10), P25: at(25), P50: at(50), P75: at(75), P90: at(90), P95: at(95), P99: at(99),
		Std: math.Sqrt(sq / float64(n)), Count: n, Sum: sum,
	}
}

// partCount is the first pass over one part.
type partCount struct {
	counts         []uint32 // by bucket
	n              int
	sum, low, high float64
}

func countPart(each func(yield func(float64))) partCount {
	c := partCount{counts: make([]uint32, 1<<streamBits), low: math.Inf(1), high: math.Inf(-1)}
	each(func(v float64) {
		c.counts[streamBucket(v)]++
		c.n++
		c.sum += v
		c.low, c.high = math.Min(c.low, v), math.Max(c.high, v)
	})
	return c
}

// keepBuckets returns the buckets that hold the order statistics the
// percentiles interpolate between, sized for their values, and slot: for
// each bucket, 1 + its index in kept, or 0 when it is not kept.
func keepBuckets(counts []uint32, n int) (kept []keptBucket, slot []int32) {
	need := map[int]bool{0: true, n - 1: true}
	for _, p := range percentiles {
		lo := int(math.Floor(float64(n-1) * p / 100))
		need[min(lo, n-1)], need[min(lo+1, n-1)] = true, true
	}
	slot = make([]int32, len(counts))
	ranks, seen := slices.Sorted(maps.Keys(need)), 0
	for b, c := range counts {
		for len(ranks) > 0 && ranks[0] < seen+int(c) {
			if slot[b] == 0 {
				kept = append(kept, newKeptBucket(b, seen, int(c)))
				slot[b] = int32(len(kept))
			}
			ranks = ranks[1:]
		}
		seen += int(c)
	}
	return kept, slot
}

// partFill is the second pass over one part.
type partFill struct {
	next   []int             // by kept bucket: where the part's next value goes
	counts []map[float64]int // by kept bucket, for those that count distinct values
	sq     float64           // sum of squared deviations from the mean
}

func (f *partFill) fill(each func(yield func(float64)), kept []keptBucket, slot []int32, mean float64) {
	f.counts = make([]map[float64]int, len(kept))
	for i := range kept {
		if kept[i].counts != nil {
			f.counts[i] = map[float64]int{}
		}
	}
	each(func(v float64) {
		d := v - mean
		f.sq += d * d
		i := slot[streamBucket(v)] - 1
		if i < 0 {
			return
		}
		if m := f.counts[i]; m != nil {
			m[v]++
			return
		}
		kept[i].vals[f.next[i]] = v
		f.next[i]++
	})
}

// inParallel calls fn(0) … fn(n-1), each on its own goroutine, and waits.
func inParallel(n int, fn func(i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { fn(i) })
	}
	wg.Wait()
}

// keptBucket holds the values of one bucket the percentiles need: all of
// them when they are few enough (sliceCap), else how often each distinct
// value occurs, so that values that pile up (a server that sends chunks in
// bursts, a coarse clock) cost one entry, not one per occurrence.
type keptBucket struct {
	bucket int
	first  int       // rank of the bucket's smallest value
	vals   []float64 // all its values, when kept one by one
	counts map[float64]int
	runs   []valueRun // counts, sorted
}

type valueRun struct {
	v     float64
	until int // rank past the last occurrence of v
}

// sliceCap is the most values a bucket keeps one by one (16 MiB); a
// variable for the tests.
var sliceCap = 1 << 21

func newKeptBucket(bucket, first, count int) keptBucket {
	if count <= sliceCap {
		return keptBucket{bucket: bucket, first: first, vals: make([]float64, count)}
	}
	return keptBucket{bucket: bucket, first: first, counts: map[float64]int{}}
}
func (k *keptBucket) sort() {
	if k.counts == nil {
		slices.Sort(k.vals)
		return
	}
	seen := k.first
	for _, v := range slices.Sorted(maps.Keys(k.counts)) {
		seen += k.counts[v]
		k.runs = append(k.runs, valueRun{v, seen})
	}
}

// at is the value of rank, when it is in this bucket.
func (k *keptBucket) at(rank int) (float64, bool) {
	if k.counts == nil {
		if i := rank - k.first; i >= 0 && i < len(k.vals) {
			return k.vals[i], true
		}
		return 0, false
	}
	if rank < k.first || len(k.runs) == 0 || rank >= k.runs[len(k.runs)-1].until {
		return 0, false
	}
	j, _ := slices.BinarySearchFunc(k.runs, rank, func(r valueRun, rank int) int {
		if r.until <= rank {
			return -1
		}
		return 1
	})
	return k.runs[j].v, true
}

// percentiles are the ones Stats holds.
var percentiles = []float64{1, 5, 10, 25, 50, 75, 90, 95, 99}

const streamBits = 20

// streamBucket maps v to one of 2^streamBits buckets, in the order of the
// values: the leading bits of its bit pattern with the sign folded so that
// the patterns of all floats sort as the floats do.
func streamBucket(v float64) int {
	b := math.Float64bits(v)
	if b>>63 == 1 {
		b = ^b
	} else {
		b |= 1 << 63
	}
	return int(b >> (64 - streamBits))
}
