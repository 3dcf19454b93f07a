package search

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"gonum.org/v1/gonum/interp"
)

// 1D SLA-saturation reasons (AIPerf's convergence_reason values, prefixed
// monotonic_ or smooth_isotonic_).
const (
	reasonPrecision = "precision_reached"
	reasonNoFailure = "no_failure_in_range"
	reasonNoPass    = "no_pass_in_range"
)

// bisector is the 1D SLA-saturation planner: AIPerf's monotonic_sla
// (exponential probe from lo, doubling until a probe fails, then bisection
// of [highest pass, lowest fail]) and, with smooth, its smooth_isotonic
// (the same bracket, then the root of a monotone fit of the SLA margin
// instead of the midpoint).
//
// Verdicts are noise-aware: a probe that stays ambiguous after its
// replicates sits between the bracket's ends, in the band where the load
// cannot be told apart from the SLA; the planner then narrows the two outer
// gaps, [pass, lowest ambiguous] and [highest ambiguous, fail], the wider
// first, and leaves the band alone.
type bisector struct {
	cfg    Config
	smooth bool
}

func (b bisector) reason(r string) string {
	if b.smooth {
		return "smooth_isotonic_" + r
	}
	return "monotonic_" + r
}

// Next implements Planner.
func (b bisector) Next(obs []Observation) Decision {
	p := b.cfg.Space[0]
	if len(obs) == 0 {
		return Decision{Point: Point{p.Lo}, Why: "start at lo"}
	}
	br := latch(obs)
	if br.fail == nil {
		top := math.Inf(-1)
		for _, o := range obs {
			top = math.Max(top, o.Point[0])
		}
		if top >= p.Hi {
			return Decision{Stop: true, Reason: b.reason(reasonNoFailure), Why: fmt.Sprintf("%s = %g (hi) did not fail", p.Key(), p.Hi)}
		}
		next := b.cfg.Space.Snap(Point{top * 2})
		return Decision{Point: next, Why: fmt.Sprintf("probe up: nothing failed up to %g", top)}
	}
	gap, ok := b.widestGap(br)
	if !ok {
		if br.pass == nil {
			return Decision{Stop: true, Reason: b.reason(reasonNoPass), Why: fmt.Sprintf("no probe passed below %g", br.fail.Point[0])}
		}
		return Decision{Stop: true, Reason: b.reason(reasonPrecision), Why: fmt.Sprintf("bracket [%g, %g]", br.pass.Point[0], br.fail.Point[0])}
	}
	if b.smooth {
		if x, ok := b.root(obs, gap); ok {
			return Decision{Point: Point{x}, Why: fmt.Sprintf("root of the isotonic margin fit in [%g, %g]", gap[0], gap[1])}
		}
	}
	return Decision{Point: Point{b.midpoint(gap)}, Why: fmt.Sprintf("bisect [%g, %g]", gap[0], gap[1])}
}

// bracket is the latched state of a 1D planner: the highest passing and
// the lowest failing probe, and the ambiguous probes between them
// (ascending). It steers the planner; the answer (Search.bracket) reads the
// probes in any order.
type bracket struct {
	pass, fail *Observation
	amb        []Observation
}

// latch replays obs in order as AIPerf's monotonic planner latches
// verdicts: a pass raises the low end unless it is at or above the lowest
// failure, a fail lowers the high end unless it is at or below the highest
// pass; a verdict that contradicts the bracket leaves it alone.
func latch(obs []Observation) bracket {
	var br bracket
	for i := range obs {
		o := &obs[i]
		x := o.Point[0]
		switch {
		case o.Verdict.Outcome == Pass && (br.fail == nil || x < br.fail.Point[0]) && (br.pass == nil || x > br.pass.Point[0]):
			br.pass = o
		case o.Verdict.Outcome == Fail && (br.pass == nil || x > br.pass.Point[0]) && (br.fail == nil || x < br.fail.Point[0]):
			br.fail = o
		}
	}
	for _, o := range obs {
		x := o.Point[0]
		if o.Verdict.Outcome == Ambiguous && (br.pass == nil || x > br.pass.Point[0]) && (br.fail == nil || x < br.fail.Point[0]) {
			br.amb = append(br.amb, o)
		}
	}
	sort.SliceStable(br.amb, func(i, j int) bool { return br.amb[i].Point[0] < br.amb[j].Point[0] })
	return br
}

// widestGap is the outer gap of the bracket still wider than the precision
// (relative to its upper end; 1 for int), the wider when both are.
func (b bisector) widestGap(br bracket) ([2]float64, bool) {
	var gaps [][2]float64
	hi := br.fail.Point[0]
	if len(br.amb) > 0 {
		if br.pass != nil {
			gaps = append(gaps, [2]float64{br.pass.Point[0], br.amb[0].Point[0]})
		}
		gaps = append(gaps, [2]float64{br.amb[len(br.amb)-1].Point[0], hi})
	} else if br.pass != nil {
		gaps = append(gaps, [2]float64{br.pass.Point[0], hi})
	}
	best, found := [2]float64{}, false
	for _, g := range gaps {
		if b.narrow(g) {
			continue
		}
		if !found || rel(g) > rel(best) {
			best, found = g, true
		}
	}
	return best, found
}

func rel(g [2]float64) float64 { return (g[1] - g[0]) / math.Max(math.Abs(g[1]), 1e-300) }

// narrow tells whether a gap is within the precision: AIPerf stops when an
// int gap is 1 or the gap is below Precision of its upper end.
func (b bisector) narrow(g [2]float64) bool {
	if b.cfg.Space[0].Kind == KindInt && g[1]-g[0] <= 1 {
		return true
	}
	return rel(g) < b.cfg.Precision
}

// midpoint is the middle of the gap, rounded down for int (AIPerf), and
// strictly inside it.
func (b bisector) midpoint(g [2]float64) float64 {
	if b.cfg.Space[0].Kind == KindInt {
		return g[0] + math.Floor((g[1]-g[0])/2)
	}
	return (g[0] + g[1]) / 2
}

// root is where a monotone fit of the observed SLA margins crosses 0 inside
// the gap: the margins of each probed x (their trial-weighted mean) are
// denoised by pooled adjacent violators into a non-decreasing sequence,
// interpolated by a monotone cubic (Fritsch–Butland, gonum/interp), and the
// crossing is bisected. ok is false when there is no crossing strictly
// inside the gap (after rounding for int).
func (b bisector) root(obs []Observation, g [2]float64) (float64, bool) {
	xs, ys, ws := marginSeries(obs)
	if len(xs) < 2 {
		return 0, false
	}
	fit := &interp.FritschButland{}
	if err := fit.Fit(xs, pava(ys, ws)); err != nil {
		return 0, false
	}
	lo, hi := g[0], g[1]
	if !(fit.Predict(lo) <= 0 && fit.Predict(hi) > 0) {
		return 0, false
	}
	for range 100 {
		mid := (lo + hi) / 2
		if fit.Predict(mid) <= 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	x := b.cfg.Space.Snap(Point{lo})[0]
	if x <= g[0] || x >= g[1] {
		return 0, false
	}
	return x, true
}

// marginSeries is the measured margins by ascending x, the probes at one x
// merged into their trial-weighted mean.
func marginSeries(obs []Observation) (xs, ys, ws []float64) {
	for _, o := range obs {
		if math.IsNaN(o.Margin) || math.IsInf(o.Margin, 0) {
			continue
		}
		x, w := o.Point[0], float64(max(o.Trials, 1))
		i, found := slices.BinarySearch(xs, x)
		if found {
			ys[i] = (ys[i]*ws[i] + o.Margin*w) / (ws[i] + w)
			ws[i] += w
			continue
		}
		xs, ys, ws = slices.Insert(xs, i, x), slices.Insert(ys, i, o.Margin), slices.Insert(ws, i, w)
	}
	return xs, ys, ws
}

// pava is the weighted least-squares non-decreasing fit of ys (the pool
// adjacent violators algorithm).
func pava(ys, ws []float64) []float64 {
	type block struct {
		sum, w float64
		n      int
	}
	var blocks []block
	for i := range ys {
		blocks = append(blocks, block{ys[i] * ws[i], ws[i], 1})
		for len(blocks) > 1 {
			a, c := blocks[len(blocks)-2], blocks[len(blocks)-1]
			if a.sum/a.w <= c.sum/c.w {
				break
			}
			blocks = append(blocks[:len(blocks)-2], block{a.sum + c.sum, a.w + c.w, a.n + c.n})
		}
	}
	out := make([]float64, 0, len(ys))
	for _, bl := range blocks {
		for range bl.n {
			out = append(out, bl.sum/bl.w)
		}
	}
	return out
}
