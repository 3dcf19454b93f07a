package dashboard

import "math"

// Histogram geometry: buckets 1% wide on a log scale from histMin up to
// histMin·1.01^histBuckets (about 10⁷, milliseconds: 3 hours); values
// below histMin count in the first bucket, above the range in the last.
const (
	histMin     = 1e-6
	histBuckets = 3010
)

var histStep = math.Log(1.01)

// hist is a streaming percentile estimate: constant memory, O(1) per
// value, relative error under 0.5% inside its range.
type hist struct {
	counts   [histBuckets]int64
	n        int64
	min, max float64 // the smallest and largest value seen
}

func (h *hist) add(v float64) {
	if h.n == 0 || v < h.min {
		h.min = v
	}
	if h.n == 0 || v > h.max {
		h.max = v
	}
	b := 0
	if v > histMin {
		b = min(int(math.Log(v/histMin)/histStep), histBuckets-1)
	}
	h.counts[b]++
	h.n++
}

// quantile returns the estimate of the p-th percentile (0 < p ≤ 100), the
// geometric middle of the bucket holding its nearest rank, kept within the
// smallest and largest value seen; ok is false with no value.
func (h *hist) quantile(p float64) (v float64, ok bool) {
	if h.n == 0 {
		return 0, false
	}
	rank := max(int64(math.Ceil(p/100*float64(h.n))), 1)
	var seen int64
	b := 0
	for ; b < histBuckets-1; b++ {
		if seen += h.counts[b]; seen >= rank {
			break
		}
	}
	return min(max(histMin*math.Exp((float64(b)+0.5)*histStep), h.min), h.max), true
}
