package search

import "fmt"

// grid proposes a fixed list of points in order, one probe each: the
// recipes that characterise a curve (concurrency-ramp, prefill-ttft-curve,
// decode-itl-curve, pareto-sweep) and max-concurrency-under-sla's grid
// style. Probe i is point i.
type grid struct{ points []Point }

// Next implements Planner.
func (g grid) Next(obs []Observation) Decision {
	if len(obs) >= len(g.points) {
		return Decision{Stop: true, Reason: ReasonGridComplete, Why: fmt.Sprintf("all %d grid points run", len(g.points))}
	}
	return Decision{Point: g.points[len(obs)], Why: fmt.Sprintf("grid point %d of %d", len(obs)+1, len(g.points))}
}

// product is the Cartesian product of per-parameter value lists, the first
// parameter varying slowest.
func product(axes ...[]float64) []Point {
	out := []Point{{}}
	for _, axis := range axes {
		var next []Point
		for _, p := range out {
			for _, v := range axis {
				next = append(next, append(append(Point{}, p...), v))
			}
		}
		out = next
	}
	return out
}
