package servermetrics

import (
	"math"
	"sort"

	"github.com/aiperf-go/aiperf/internal/stats"
)

// cuts are the slices of [begin, end] of length size, the last one partial
// when the window is not a whole number of slices (AIPerf's timeslice
// boundaries).
func cuts(begin, end, size int64) []Timeslice {
	var out []Timeslice
	for s := begin; s < end && size > 0; s += size {
		out = append(out, Timeslice{StartNs: s, EndNs: min(s+size, end), Partial: s+size > end})
	}
	return out
}

// timeslices reduces s over each slice of sp: a gauge's avg, min and max
// over the samples taken in the slice; a counter's total and rate and a
// histogram's count, sum, avg and bucket deltas between the last scrapes
// at or before the slice's bounds.
func timeslices(s *seriesBuf, sp span, size int64) []Timeslice {
	cs := cuts(sp.begin, sp.end, size)
	out := cs[:0]
	for k, c := range cs {
		from, to := sp.from(s, c.StartNs), sp.atOrBefore(c.EndNs)
		switch s.typ {
		case TypeCounter:
			total, _ := increase(s.vals, from, to)
			c.Stats = map[string]float64{"total": total, "rate": total / (float64(c.EndNs-c.StartNs) / 1e9)}
		case TypeHistogram:
			count, sum, cells, _ := histDelta(s, from, to)
			c.Stats = map[string]float64{"count": count, "sum": sum, "avg": 0}
			if count > 0 {
				c.Stats["avg"] = sum / count
			}
			c.Buckets = make([]Bucket, len(cells))
			for j, v := range cells {
				c.Buckets[j] = Bucket{LE: formatLE(s.bounds[j]), Count: v}
			}
		default:
			lo := sort.Search(len(sp.times), func(i int) bool { return sp.times[i] >= c.StartNs })
			hi := sort.Search(len(sp.times), func(i int) bool { return sp.times[i] >= c.EndNs }) - 1
			if k == len(cs)-1 {
				hi = sort.Search(len(sp.times), func(i int) bool { return sp.times[i] > c.EndNs }) - 1
			}
			st, ok := gaugeStats(s.vals, max(lo, sp.lo), min(hi, sp.hi), false)
			if !ok {
				continue // no sample in the slice
			}
			c.Stats = st
		}
		out = append(out, c)
	}
	return out
}

// atOrBefore is the last scrape at or before t, within the span's counter
// range [ref, hi].
func (sp span) atOrBefore(t int64) int {
	i := sort.Search(len(sp.times), func(i int) bool { return sp.times[i] > t }) - 1
	return min(max(i, sp.ref), sp.hi)
}

// from is where a delta of s from t starts: its last sample at or before
// t within the span's counter range (atOrBefore), never a scrape that
// left it out, which would count its value since its server started.
func (sp span) from(s *seriesBuf, t int64) int {
	i := sp.atOrBefore(t)
	if j := s.lastSampled(i, sp.ref); j >= 0 {
		return j
	}
	return i
}

// rateStats adds a counter's rate_avg, rate_min, rate_max and rate_std
// (n−1) over its complete slices, as AIPerf does.
func rateStats(st map[string]float64, ts []Timeslice) {
	var rates []float64
	for _, t := range ts {
		if !t.Partial {
			rates = append(rates, t.Stats["rate"])
		}
	}
	if len(rates) == 0 {
		return
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range rates {
		lo, hi = min(lo, r), max(hi, r)
	}
	st["rate_avg"], st["rate_min"], st["rate_max"], st["rate_std"] = stats.Mean(rates), lo, hi, 0
	if len(rates) > 1 {
		st["rate_std"] = stats.StdDev(rates)
	}
}
