package metrics

import (
	"cmp"
	"math"
	"slices"
	"sort"
)

// step is a right-continuous step function: vals[i] holds from ts[i] to
// ts[i+1] (the last to the window's end), 0 before ts[0]. Times are ns.
type step struct{ ts, vals []float64 }

// event is one change of a step function: delta added at ts.
type event struct{ ts, delta float64 }

// sweep builds the step function of events, AIPerf's sweep line: events
// in time order, a decrease before an increase at the same time, summed
// as they come; a value within 1e-9 of the largest magnitude is rounding
// left over from cancelling pairs and reads 0.
func sweep(events []event) step {
	slices.SortStableFunc(events, func(a, b event) int {
		if c := cmp.Compare(a.ts, b.ts); c != 0 {
			return c
		}
		return cmp.Compare(boolInt(a.delta > 0), boolInt(b.delta > 0))
	})
	s := step{ts: make([]float64, len(events)), vals: make([]float64, len(events))}
	var sum, top float64
	for i, e := range events {
		sum += e.delta
		s.ts[i], s.vals[i] = e.ts, sum
		top = max(top, math.Abs(sum))
	}
	for i, v := range s.vals {
		if math.Abs(v) < 1e-9*top {
			s.vals[i] = 0
		}
	}
	return s
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// at is the step function's value at t: that of its last change at or
// before t, 0 before the first.
func (s step) at(t float64) float64 {
	i := sort.Search(len(s.ts), func(i int) bool { return s.ts[i] > t }) - 1
	if i < 0 {
		return 0
	}
	return s.vals[i]
}

// divide is num / den point by point on their merged change times, 0
// where den is not positive; empty when either is.
func divide(num, den step) step {
	if len(num.ts) == 0 || len(den.ts) == 0 {
		return step{}
	}
	ts := slices.Concat(num.ts, den.ts)
	slices.Sort(ts)
	ts = slices.Compact(ts)
	out := step{ts: ts, vals: make([]float64, len(ts))}
	for i, t := range ts {
		if d := den.at(t); d > 0 {
			out.vals[i] = num.at(t) / d
		}
	}
	return out
}

// segment is a value held for a duration.
type segment struct{ v, dur float64 }

// timeWeighted is AIPerf's time-weighted statistics of s over the window
// [from, to]: the average and standard deviation weigh each value by how
// long it held, divided by the window's length; min and max are over the
// values held for some time; p50…p99 are the values below which that
// share of the time was spent. Zero when the window is empty or s has no
// change.
func timeWeighted(s step, from, to float64) Stats {
	total := to - from
	if len(s.ts) == 0 || total <= 0 {
		return Stats{}
	}
	lo := max(0, sort.Search(len(s.ts), func(i int) bool { return s.ts[i] > from })-1)
	hi := min(len(s.ts), sort.Search(len(s.ts), func(i int) bool { return s.ts[i] >= to })+1)
	first := 0.0
	if lo > 0 {
		first = s.vals[lo-1]
	}
	starts := append([]float64{from}, s.ts[lo:hi]...)
	vals := append([]float64{first}, s.vals[lo:hi]...)
	var segs []segment
	for i := range starts {
		end := to
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		if d := min(end, to) - max(starts[i], from); d > 0 {
			segs = append(segs, segment{vals[i], d})
		}
	}
	return weighted(segs, total)
}

// activeWeighted is timeWeighted of rate restricted to the times in
// [from, to] where mask is positive (AIPerf's active variants): the
// weights are divided by that time, not the window's.
func activeWeighted(rate, mask step, from, to float64) Stats {
	if to-from <= 0 || len(rate.ts) == 0 {
		return Stats{}
	}
	grid := slices.Concat([]float64{from, to}, within(rate.ts, from, to), within(mask.ts, from, to))
	slices.Sort(grid)
	grid = slices.Compact(grid)
	var (
		segs   []segment
		active float64
	)
	for i := 0; i+1 < len(grid); i++ {
		if d := grid[i+1] - grid[i]; d > 0 && mask.at(grid[i]) > 0 {
			segs = append(segs, segment{rate.at(grid[i]), d})
			active += d
		}
	}
	if active <= 0 {
		return Stats{}
	}
	return weighted(segs, active)
}

// within is the part of ts (sorted) in [from, to], found by binary
// search: a time slice reads the run's curves in time of its own length,
// not of the run's.
func within(ts []float64, from, to float64) []float64 {
	lo := sort.SearchFloat64s(ts, from)
	hi := sort.Search(len(ts), func(i int) bool { return ts[i] > to })
	return ts[lo:max(lo, hi)]
}

// weighted is the statistics of segs, each value weighing its duration,
// over a time of total; the time-weighted stats carry no p1…p25, p75,
// count nor sum.
func weighted(segs []segment, total float64) Stats {
	if len(segs) == 0 {
		return Stats{}
	}
	st := Stats{Min: math.Inf(1), Max: math.Inf(-1)}
	for _, g := range segs {
		st.Avg += g.v * g.dur
		st.Min, st.Max = min(st.Min, g.v), max(st.Max, g.v)
	}
	st.Avg /= total
	for _, g := range segs {
		st.Std += g.dur * (g.v - st.Avg) * (g.v - st.Avg)
	}
	st.Std = math.Sqrt(st.Std / total)
	slices.SortStableFunc(segs, func(a, b segment) int { return cmp.Compare(a.v, b.v) })
	cum := make([]float64, len(segs))
	var run float64
	for i, g := range segs {
		run += g.dur
		cum[i] = run
	}
	quantile := func(q float64) float64 {
		i := sort.Search(len(cum), func(i int) bool { return cum[i]/run >= q })
		return segs[min(i, len(segs)-1)].v
	}
	st.P50, st.P90, st.P95, st.P99 = quantile(0.50), quantile(0.90), quantile(0.95), quantile(0.99)
	return st
}
