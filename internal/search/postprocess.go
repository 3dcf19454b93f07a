package search

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// Post-process handlers (AIPerf's search_recipe_post_process names).
const (
	HandlerDegradationKnee = "degradation_knee_detect"
	HandlerTTFTCurve       = "ttft_curve_fit"
	HandlerITLSurface      = "itl_surface_fit"
	HandlerPareto          = "pareto_sweep_export"
	HandlerSLABreach       = "sla_breach_knee"
)

// PostProcess is a recipe's sweep_aggregate/ artifact: the handler, its
// file name, and its parameters.
type PostProcess struct {
	Handler        string
	File           string // e.g. prefill_curve.json
	Metric, Stat   string // the curve's metric (the x axis of pareto)
	YMetric, YStat string // pareto's y axis
	// Threshold is the degradation threshold (concurrency-ramp) or the r²
	// floor below which the TTFT curve falls back to a quadratic.
	Threshold float64
}

// Aggregate builds the recipe's post-process document from history h: the
// file name under sweep_aggregate/ and the JSON value. A recipe without one
// gives "", nil.
func (r *Recipe) Aggregate(h History) (string, any, error) {
	pp := r.PostProcess
	if pp == nil {
		return "", nil, nil
	}
	var (
		doc any
		err error
	)
	switch pp.Handler {
	case HandlerDegradationKnee:
		doc, err = r.degradationKnee(h)
	case HandlerTTFTCurve:
		doc, err = r.ttftCurve(h)
	case HandlerITLSurface:
		doc, err = r.itlSurface(h)
	case HandlerPareto:
		doc = r.pareto(h)
	case HandlerSLABreach:
		doc = r.slaBreach(h)
	default:
		err = fmt.Errorf("unknown post-process handler %q", pp.Handler)
	}
	if err != nil {
		return "", nil, fmt.Errorf("recipe %q post-process %s: %w", r.Name, pp.Handler, err)
	}
	return pp.File, doc, nil
}

// param is the recipe's parameter named name: searched (its index) or
// fixed (-1).
func (r *Recipe) param(name string) (Param, int) {
	for i, p := range r.Config.Space {
		if p.Name == name {
			return p, i
		}
	}
	for _, p := range []Param{paramConcurrency, paramISL, paramOSL} {
		if p.Name == name {
			return p, -1
		}
	}
	return Param{Name: name, Kind: KindReal}, -1
}

// valueOf is a probe's value of the named option: its point's, or the fixed one.
func (r *Recipe) valueOf(pt Point, name string) float64 {
	if _, i := r.param(name); i >= 0 {
		return pt[i]
	}
	switch v := r.Fixed[name].(type) {
	case int:
		return float64(v)
	case float64:
		return v
	}
	return math.NaN()
}

// xy is one measured point of a curve.
type xy struct{ x, y float64 }

// curve is the mean of key at each probe against the named parameter,
// ascending, skipping unmeasured probes.
func (r *Recipe) curve(h History, name, key string) []xy {
	var out []xy
	for _, p := range h.Probes {
		if y := p.mean(key); !math.IsNaN(y) {
			out = append(out, xy{r.valueOf(p.Point, name), y})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].x < out[j].x })
	return out
}

func leaf(path string) string { return path[strings.LastIndex(path, ".")+1:] }

// degradationKnee is degradation_knee.json: the baseline is the lowest
// concurrency's statistic; the knee the first concurrency above it whose
// statistic exceeds baseline × (1 + threshold) (null when none does).
func (r *Recipe) degradationKnee(h History) (map[string]any, error) {
	pp := r.PostProcess
	p, _ := r.param(paramConcurrency.Name)
	pts := r.curve(h, p.Name, pp.Metric+"."+pp.Stat)
	if len(pts) == 0 {
		return nil, fmt.Errorf("no probe measured %s.%s", pp.Metric, pp.Stat)
	}
	l := leaf(p.Key())
	doc := map[string]any{
		"baseline_" + l: p.value(pts[0].x), "baseline_" + pp.Stat: pts[0].y,
		"knee_" + l: nil, "knee_" + pp.Stat: nil,
		"threshold_pct": pp.Threshold, "swept_metric": pp.Metric, "stat": pp.Stat, "swept_param": p.Key(),
	}
	cutoff := pts[0].y * (1 + pp.Threshold)
	for _, pt := range pts[1:] {
		if pt.y > cutoff {
			doc["knee_"+l], doc["knee_"+pp.Stat] = p.value(pt.x), pt.y
			break
		}
	}
	all := make([]map[string]any, len(pts))
	for i, pt := range pts {
		all[i] = map[string]any{l: p.value(pt.x), pp.Stat: pt.y}
	}
	doc["all_points"] = all
	return doc, nil
}

// CurveFit is prefill_curve.json.
type CurveFit struct {
	FitForm       string       `json:"fit_form"`     // linear or quadratic
	Coefficients  []float64    `json:"coefficients"` // highest degree first: [slope, intercept] or [a, b, c]
	RSquared      float64      `json:"r_squared"`
	BelowFloor    bool         `json:"below_floor"`
	RSquaredFloor float64      `json:"r_squared_floor"`
	ErrorReason   string       `json:"error_reason,omitempty"`
	RawPoints     []CurvePoint `json:"raw_points"`
	SweptMetric   string       `json:"swept_metric"`
	Stat          string       `json:"stat"`
	SweptParam    string       `json:"swept_param"`
}

// CurvePoint is one measured (ISL, TTFT) point.
type CurvePoint struct {
	ISL    any     `json:"isl"`
	TTFTms float64 `json:"ttft_ms"`
}

// ttftCurve is prefill_curve.json: FitCurve over each probe's mean TTFT
// against its ISL.
func (r *Recipe) ttftCurve(h History) (*CurveFit, error) {
	pp := r.PostProcess
	p, _ := r.param(paramISL.Name)
	pts := r.curve(h, p.Name, pp.Metric+"."+pp.Stat)
	doc := &CurveFit{FitForm: "linear", RSquaredFloor: pp.Threshold, SweptMetric: pp.Metric, Stat: pp.Stat, SweptParam: p.Key(), Coefficients: []float64{}}
	xs, ys := make([]float64, len(pts)), make([]float64, len(pts))
	for i, pt := range pts {
		xs[i], ys[i] = pt.x, pt.y
		doc.RawPoints = append(doc.RawPoints, CurvePoint{ISL: p.value(pt.x), TTFTms: pt.y})
	}
	fit, ok := FitCurve(xs, ys, pp.Threshold)
	if !ok {
		doc.BelowFloor = true
		doc.ErrorReason = fmt.Sprintf("ttft_curve_fit: fewer than 2 measured points (got %d); check that the swept cells produced successful requests", len(pts))
		return doc, nil
	}
	doc.FitForm, doc.Coefficients, doc.RSquared, doc.BelowFloor = fit.Form, fit.Coefficients, fit.RSquared, fit.BelowFloor
	return doc, nil
}

// CurveR2Floor is prefill-ttft-curve's r² floor: a linear fit below it
// falls back to a quadratic (with three points or more).
const CurveR2Floor = 0.85

// Fit is a least-squares polynomial y(x), as prefill_curve.json holds it.
type Fit struct {
	Form         string    // linear or quadratic
	Coefficients []float64 // highest degree first: [slope, intercept] or [a, b, c]
	RSquared     float64
	BelowFloor   bool // r² under the floor, or a non-finite fit (then r² is 0)
}

// At is the fitted y at x.
func (f Fit) At(x float64) float64 {
	y := 0.0
	for _, c := range f.Coefficients {
		y = y*x + c
	}
	return y
}

// FitCurve fits y = a·x + b by least squares (gonum stat), and when r² is
// below floor with three points or more, y = a·x² + b·x + c (QR least
// squares, gonum mat), keeping the better fit. It needs two points (ok
// false with fewer).
func FitCurve(xs, ys []float64, floor float64) (fit Fit, ok bool) {
	if len(xs) < 2 || len(xs) != len(ys) {
		return Fit{}, false
	}
	intercept, slope := stat.LinearRegression(xs, ys, nil, false)
	fit = Fit{Form: "linear", Coefficients: []float64{slope, intercept}, RSquared: stat.RSquared(xs, ys, nil, intercept, slope)}
	if fit.RSquared < floor && len(xs) >= 3 {
		if c, r2, ok := quadraticFit(xs, ys); ok && r2 > fit.RSquared {
			fit.Form, fit.Coefficients, fit.RSquared = "quadratic", c, r2
		}
	}
	if math.IsNaN(fit.RSquared) || slices.ContainsFunc(fit.Coefficients, func(c float64) bool { return math.IsNaN(c) || math.IsInf(c, 0) }) {
		fit.RSquared, fit.BelowFloor = 0, true
	}
	fit.BelowFloor = fit.BelowFloor || fit.RSquared < floor
	return fit, true
}

// quadraticFit is the least-squares y = a·x² + b·x + c, solved on x scaled
// to [0, 1] for conditioning; coefficients highest degree first.
func quadraticFit(xs, ys []float64) ([]float64, float64, bool) {
	scale := math.Max(math.Abs(slices.Max(xs)), math.Abs(slices.Min(xs)))
	if scale == 0 {
		return nil, 0, false
	}
	a := mat.NewDense(len(xs), 3, nil)
	for i, x := range xs {
		u := x / scale
		a.SetRow(i, []float64{u * u, u, 1})
	}
	var c mat.VecDense
	if err := c.SolveVec(a, mat.NewVecDense(len(ys), append([]float64(nil), ys...))); err != nil {
		return nil, 0, false
	}
	coef := []float64{c.AtVec(0) / (scale * scale), c.AtVec(1) / scale, c.AtVec(2)}
	est := make([]float64, len(xs))
	for i, x := range xs {
		est[i] = coef[0]*x*x + coef[1]*x + coef[2]
	}
	return coef, stat.RSquaredFrom(est, ys, nil), true
}
