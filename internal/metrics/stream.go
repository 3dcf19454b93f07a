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
// octave); the second counts, in only the buckets that hold the ranks the
// percentiles need, how often each distinct value occurs. Memory is the
// bucket counts plus those buckets' distinct values, not the values; the
// order statistics, and so the percentiles, are those of the sorted
// values.
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
	// Each kept bucket's distinct values and how often each occurs: values
	// that pile up (a server that sends chunks in bursts, a coarse clock)
	// cost one entry, not one per occurrence.
	kept := make([]map[float64]int, len(first))
	for i := range kept {
		kept[i] = map[float64]int{}
	}
	each(func(v float64) {
		d := v - mean
		sq += d * d
		if i := slot[streamBucket(v)]; i > 0 {
			kept[i-1][v]++
		}
	})
	type run struct {
		v     float64
		until int // rank past the last occurrence of v
	}
	runs := make([][]run, len(kept))
	for i, m := range kept {
		seen := first[i]
		for _, v := range slices.Sorted(maps.Keys(m)) {
			seen += m[v]
			runs[i] = append(runs[i], run{v, seen})
		}
	}
	order := func(rank int) float64 {
		for i, f := range first {
			if rs := runs[i]; rank >= f && len(rs) > 0 && rank < rs[len(rs)-1].until {
				j, _ := slices.BinarySearchFunc(rs, rank, func(r run, rank int) int {
					if r.until <= rank {
						return -1
					}
					return 1
				})
				return rs[j].v
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
