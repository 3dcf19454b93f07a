package search

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// Surface is decode_itl_surface.json: the as-measured ITL grid, null where
// no probe measured a cell (nothing is interpolated).
type Surface struct {
	SweptMetric string         `json:"swept_metric"`
	Stat        string         `json:"stat"`
	SweptParams []string       `json:"swept_params"`
	RawPoints   []SurfacePoint `json:"raw_points"`
	Surface     SurfaceGrid    `json:"surface"`
}

// SurfacePoint is one measured (concurrency, OSL, ITL) triple.
type SurfacePoint struct {
	Concurrency any     `json:"concurrency"`
	OSL         any     `json:"osl"`
	ITLms       float64 `json:"itl_ms"`
}

// SurfaceGrid is the surface: ITLGrid[i][j] is at ConcurrencyAxis[i], OSLAxis[j].
type SurfaceGrid struct {
	ConcurrencyAxis []any        `json:"concurrency_axis"`
	OSLAxis         []any        `json:"osl_axis"`
	ITLGrid         [][]*float64 `json:"itl_grid"`
}

func (r *Recipe) itlSurface(h History) (*Surface, error) {
	pp := r.PostProcess
	pc, _ := r.param(paramConcurrency.Name)
	po, _ := r.param(paramOSL.Name)
	doc := &Surface{SweptMetric: pp.Metric, Stat: pp.Stat, SweptParams: []string{pc.Key(), po.Key()}, RawPoints: []SurfacePoint{}}
	type triple struct{ c, o, y float64 }
	var raw []triple
	cells := map[[2]float64]float64{}
	var cs, os []float64
	for _, p := range h.Probes {
		y := p.mean(pp.Metric + "." + pp.Stat)
		if math.IsNaN(y) {
			continue
		}
		c, o := r.valueOf(p.Point, pc.Name), r.valueOf(p.Point, po.Name)
		cells[[2]float64{c, o}] = y
		cs, os, raw = append(cs, c), append(os, o), append(raw, triple{c, o, y})
	}
	if len(raw) == 0 {
		return nil, fmt.Errorf("no probe measured %s.%s", pp.Metric, pp.Stat)
	}
	sort.SliceStable(raw, func(i, j int) bool { return raw[i].c < raw[j].c || raw[i].c == raw[j].c && raw[i].o < raw[j].o })
	for _, t := range raw {
		doc.RawPoints = append(doc.RawPoints, SurfacePoint{Concurrency: pc.value(t.c), OSL: po.value(t.o), ITLms: t.y})
	}
	slices.Sort(cs)
	slices.Sort(os)
	cs, os = slices.Compact(cs), slices.Compact(os)
	for _, c := range cs {
		doc.Surface.ConcurrencyAxis = append(doc.Surface.ConcurrencyAxis, pc.value(c))
		row := make([]*float64, len(os))
		for j, o := range os {
			if y, ok := cells[[2]float64{c, o}]; ok {
				row[j] = num(y)
			}
		}
		doc.Surface.ITLGrid = append(doc.Surface.ITLGrid, row)
	}
	for _, o := range os {
		doc.Surface.OSLAxis = append(doc.Surface.OSLAxis, po.value(o))
	}
	return doc, nil
}

// ParetoDoc is pareto_sweep.json.
type ParetoDoc struct {
	XMetric string       `json:"x_metric"`
	XStat   string       `json:"x_stat"`
	YMetric string       `json:"y_metric"`
	YStat   string       `json:"y_stat"`
	Cells   []ParetoCell `json:"cells"`
}

// ParetoCell is one (ISL, OSL, concurrency) cell: x lower is better, y
// higher is better.
type ParetoCell struct {
	ISL           int     `json:"isl"`
	OSL           int     `json:"osl"`
	Concurrency   int     `json:"concurrency"`
	X             float64 `json:"x"`
	Y             float64 `json:"y"`
	ParetoOptimal bool    `json:"pareto_optimal"`
}

// pareto marks a cell Pareto-optimal when no other cell weakly dominates
// it (x ≤ and y ≥, one strictly), over every cell together.
func (r *Recipe) pareto(h History) *ParetoDoc {
	pp := r.PostProcess
	doc := &ParetoDoc{XMetric: pp.Metric, XStat: pp.Stat, YMetric: pp.YMetric, YStat: pp.YStat, Cells: []ParetoCell{}}
	for _, p := range h.Probes {
		x, y := p.mean(pp.Metric+"."+pp.Stat), p.mean(pp.YMetric+"."+pp.YStat)
		if math.IsNaN(x) || math.IsNaN(y) {
			continue
		}
		doc.Cells = append(doc.Cells, ParetoCell{ISL: int(r.valueOf(p.Point, paramISL.Name)), OSL: int(r.valueOf(p.Point, paramOSL.Name)),
			Concurrency: int(r.valueOf(p.Point, paramConcurrency.Name)), X: x, Y: y})
	}
	for i := range doc.Cells {
		c := doc.Cells[i]
		doc.Cells[i].ParetoOptimal = !slices.ContainsFunc(doc.Cells, func(o ParetoCell) bool {
			return o.X <= c.X && o.Y >= c.Y && (o.X < c.X || o.Y > c.Y)
		})
	}
	return doc
}

// slaBreach is sla_breach.json, the grid style of max-concurrency-under-sla:
// the highest passing and the lowest failing concurrency with its breach,
// every point's verdict, and whether feasibility is monotonic along the axis.
func (r *Recipe) slaBreach(h History) map[string]any {
	cfg := r.Config.withDefaults()
	p := cfg.Space[0]
	l := leaf(p.Key())
	type point struct {
		x float64
		v Verdict
	}
	var pts []point
	for _, pr := range h.Probes {
		pts = append(pts, point{pr.Point[0], Judge(pr, cfg.Filters, cfg.Trials)})
	}
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].x < pts[j].x })
	doc := map[string]any{"swept_param": p.Key(), "max_passing_" + l: nil, "first_failing_" + l: nil,
		"first_failing_breach": nil, "filters": cfg.Filters}
	all := []map[string]any{}
	monotonic, seenInfeasible := true, false
	for _, pt := range pts {
		feasible := pt.v.Outcome == Pass
		breaches := []FilterDoc{}
		for _, f := range pt.v.Filters {
			if f.Outcome == Fail {
				breaches = append(breaches, filterDoc(f))
			}
		}
		all = append(all, map[string]any{l: p.value(pt.x), "feasible": feasible, "breaches": breaches, "verdict": pt.v.Outcome})
		if feasible {
			doc["max_passing_"+l] = p.value(pt.x)
			monotonic = monotonic && !seenInfeasible
		} else {
			seenInfeasible = true
		}
		if pt.v.Outcome == Fail && doc["first_failing_"+l] == nil {
			doc["first_failing_"+l] = p.value(pt.x)
			doc["first_failing_breach"] = filterDoc(*pt.v.Breach)
		}
	}
	doc["all_points"], doc["monotonicity_check"] = all, monotonic
	return doc
}
