package metrics

import (
	"maps"
	"math"
	"slices"
)

// computeStream is Compute over values too many to hold at once (the
// inter-chunk latencies of a million streamed requests are 63 million),
// exactly: each(yield) must yield the same values every time it is called.
// It reads them twice. The first pass counts them into 2^20 buckets by
// the leading bits of their order-preserving bit pattern (256 per
// octave); the second keeps only the values of the buckets that hold the
// ranks the percentiles need (a bucket of more than sliceCap values keeps
// how often each distinct value occurs), and sorts them. Memory is the
// bucket counts plus those buckets' values, not all the values; the order
// statistics, and so the percentiles, are those of the sorted values.
func computeStream(each func(yield func(float64))) Stats {
	counts := make([]uint32, 1<<streamBits)
	var (
		n         int
		sum       float64
		low, high = math.Inf(1), math.Inf(-1)
	)
	each(func(v float64) {
		counts[streamBucket(v)]++
		n++
		sum += v
		low, high = math.Min(low, v), math.Max(high, v)
	})
	if n == 0 {
		return Stats{}
	}
	// The order statistics each percentile interpolates between.
	need := map[int]bool{0: true, n - 1: true}
	for _, p := range percentiles {
		lo := int(math.Floor(float64(n-1) * p / 100))
		need[min(lo, n-1)], need[min(lo+1, n-1)] = true, true
	}
	// The buckets that hold them: slot[b] is 1 + the index of bucket b in
	// kept, 0 for a bucket not kept; first[i] is the rank of the smallest
	// value of kept bucket i.
	slot := make([]int32, len(counts))
	var first []int
	ranks, seen := slices.Sorted(maps.Keys(need)), 0
	for b, c := range counts {
		for len(ranks) > 0 && ranks[0] < seen+int(c) {
			if slot[b] == 0 {
				first = append(first, seen)
				slot[b] = int32(len(first))
			}
			ranks = ranks[1:]
		}
		seen += int(c)
	}
	mean := sum / float64(n)
	var sq float64
	kept := make([]keptBucket, len(first))
	for b, i := range slot {
		if i > 0 {
			kept[i-1] = newKeptBucket(first[i-1], int(counts[b]))
		}
	}
	each(func(v float64) {
		d := v - mean
		sq += d * d
		if i := slot[streamBucket(v)]; i > 0 {
			kept[i-1].add(v)
		}
	})
	for i := range kept {
		kept[i].sort()
	}
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

// keptBucket holds the values of one bucket the percentiles need: all of
// them when they are few enough (sliceCap), else how often each distinct
// value occurs, so that values that pile up (a server that sends chunks in
// bursts, a coarse clock) cost one entry, not one per occurrence.
type keptBucket struct {
	first  int // rank of the bucket's smallest value
	vals   []float64
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

func newKeptBucket(first, count int) keptBucket {
	if count <= sliceCap {
		return keptBucket{first: first, vals: make([]float64, 0, count)}
	}
	return keptBucket{first: first, counts: map[float64]int{}}
}

func (k *keptBucket) add(v float64) {
	if k.counts != nil {
		k.counts[v]++
	} else {
		k.vals = append(k.vals, v)
	}
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
