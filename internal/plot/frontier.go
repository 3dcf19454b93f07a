package plot

import (
	"cmp"
	"math"
	"slices"

	"github.com/aiperf-go/aiperf/internal/compare"
)

// Interval is a mean with the confidence interval of the mean over trials;
// Low and High are NaN when it is unknown (a single trial).
type Interval struct {
	Mean float64 `json:"mean"`
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// HasCI reports whether the interval is known.
func (iv Interval) HasCI() bool { return !math.IsNaN(iv.Low) && !math.IsNaN(iv.High) }

// below and above are the whisker lengths under and over the mean (0 when
// the interval is unknown).
func (iv Interval) below() float64 {
	if !iv.HasCI() {
		return 0
	}
	return iv.Mean - iv.Low
}

func (iv Interval) above() float64 {
	if !iv.HasCI() {
		return 0
	}
	return iv.High - iv.Mean
}

func intervalOf(e compare.Estimate) Interval {
	return Interval{Mean: float64(e.Mean), Low: float64(e.CILow), High: float64(e.CIHigh)}
}

// Point is one cell (or compared group) on a scatter view.
type Point struct {
	Label  string   `json:"label"`
	X      Interval `json:"x"`
	Y      Interval `json:"y"`
	Trials int      `json:"trials"` // complete trials behind the means
}

// Frontier returns the points no other point beats on both axes (at least
// as good on each, strictly better on one), in increasing X. Better is
// lower or higher per axis; a neutral axis counts as higher.
func Frontier(points []Point, xBetter, yBetter compare.Direction) []Point {
	sx, sy := sign(xBetter), sign(yBetter)
	// In (sx·x, sy·y) higher is better on both axes: sort by x falling
	// (ties: y falling) and keep each point whose y beats every point
	// before it.
	sorted := slices.Clone(points)
	slices.SortStableFunc(sorted, func(a, b Point) int {
		if c := cmp.Compare(sx*b.X.Mean, sx*a.X.Mean); c != 0 {
			return c
		}
		return cmp.Compare(sy*b.Y.Mean, sy*a.Y.Mean)
	})
	var out []Point
	best := math.Inf(-1)
	for _, p := range sorted {
		y := sy * p.Y.Mean
		last := len(out) - 1
		switch {
		case y > best:
			out, best = append(out, p), y
		case y == best && last >= 0 && out[last].X.Mean == p.X.Mean:
			out = append(out, p) // a duplicate of a frontier point
		}
	}
	slices.SortStableFunc(out, func(a, b Point) int { return cmp.Compare(a.X.Mean, b.X.Mean) })
	return out
}

func sign(d compare.Direction) float64 {
	if d == compare.LowerIsBetter {
		return -1
	}
	return 1
}
