package search

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distmv"
	"gonum.org/v1/gonum/stat/distuv"
	"gonum.org/v1/gonum/stat/samplemv"
)

// BO convergence reasons besides max_iterations (AIPerf's), and ours for an
// int space with every point probed.
const (
	ReasonImprovementPatience = "improvement_patience"
	ReasonPlateauCV           = "plateau_cv"
	ReasonSpaceExhausted      = "space_exhausted"
)

// xi is expected improvement's exploration margin, in standardised units.
const xi = 0.01

// bo is the Bayesian-optimisation planner (AIPerf's bayesian): a Latin
// hypercube of InitialPoints points, then each next point maximises
// constrained expected improvement under Gaussian processes (Matérn 5/2,
// hyperparameters by maximum marginal likelihood) of the objective and of
// each SLA filter's margin, in the unit cube of the space (log-scaled
// where a parameter is Log). Everything random comes from Seed and the
// probe count, so a replayed history proposes the same points.
type bo struct{ cfg Config }

// Next implements Planner.
func (b bo) Next(obs []Observation) Decision {
	if reason, why := b.converged(obs); reason != "" {
		return Decision{Stop: true, Reason: reason, Why: why}
	}
	if len(obs) < b.cfg.InitialPoints {
		for i, u := range b.design() {
			if pt := b.fromUnit(u); !observed(obs, pt) {
				return Decision{Point: pt, Why: fmt.Sprintf("space-filling point %d of %d", i+1, b.cfg.InitialPoints)}
			}
		}
	}
	rng := rand.New(rand.NewPCG(uint64(b.cfg.Seed), uint64(len(obs))+1))
	acq := b.acquisition(obs)
	cands := b.candidates(rng, obs)
	scores := make([]float64, len(cands))
	for i, u := range cands {
		scores[i] = acq(u)
	}
	order := make([]int, len(cands))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return scores[order[i]] > scores[order[j]] })
	if len(order) > 0 {
		if u, f := refine(acq, cands[order[0]]); f > scores[order[0]] {
			cands = append(cands, u)
			order = append([]int{len(cands) - 1}, order...)
		}
	}
	for _, i := range order {
		if pt := b.fromUnit(cands[i]); !observed(obs, pt) {
			return Decision{Point: pt, Why: fmt.Sprintf("expected improvement %.3g", acq(cands[i]))}
		}
	}
	return Decision{Stop: true, Reason: ReasonSpaceExhausted, Why: "every candidate point was already probed"}
}

// design is the seeded Latin hypercube of the initial points in the unit
// cube (gonum's samplemv: each dimension cut into n strata, one point in
// each).
func (b bo) design() [][]float64 {
	dim := len(b.cfg.Space)
	src := rand.NewPCG(uint64(b.cfg.Seed), 0)
	batch := mat.NewDense(b.cfg.InitialPoints, dim, nil)
	samplemv.LatinHypercube{Q: distmv.NewUnitUniform(dim, src), Src: src}.Sample(batch)
	out := make([][]float64, b.cfg.InitialPoints)
	for i := range out {
		out[i] = mat.Row(nil, i, batch)
	}
	return out
}

func (b bo) fromUnit(u []float64) Point {
	pt := make(Point, len(u))
	for i, p := range b.cfg.Space {
		pt[i] = p.fromUnit(u[i])
	}
	return b.cfg.Space.Snap(pt)
}

func (b bo) toUnit(pt Point) []float64 {
	u := make([]float64, len(pt))
	for i, p := range b.cfg.Space {
		u[i] = p.toUnit(pt[i])
	}
	return u
}

func observed(obs []Observation, pt Point) bool {
	return slices.ContainsFunc(obs, func(o Observation) bool { return o.Point.Equal(pt) })
}

// model is a GP on standardised outputs, predicting in the original units.
type model struct {
	g           *gp
	mean, scale float64
}

// fitModel fits a GP to the finite (u, y) pairs; nil with fewer than two.
func fitModel(us [][]float64, ys []float64) *model {
	var x [][]float64
	var y []float64
	for i, v := range ys {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			x, y = append(x, us[i]), append(y, v)
		}
	}
	if len(y) < 2 {
		return nil
	}
	m := &model{mean: stat.Mean(y, nil), scale: stat.StdDev(y, nil)}
	if !(m.scale > 0) {
		m.scale = 1
	}
	z := make([]float64, len(y))
	for i, v := range y {
		z[i] = (v - m.mean) / m.scale
	}
	g, err := fitGP(matern52, x, z)
	if err != nil {
		return nil
	}
	m.g = g
	return m
}

func (m *model) predict(u []float64) (float64, float64) {
	mu, sd := m.g.predict(u)
	return m.mean + m.scale*mu, m.scale * sd
}

// acquisition is constrained expected improvement: EI of the objective
// (sign-flipped to maximise) over the best feasible observation, times the
// probability that every SLA filter's margin is ≤ 0; before any probe is
// feasible, the probability of feasibility alone.
func (b bo) acquisition(obs []Observation) func([]float64) float64 {
	us := make([][]float64, len(obs))
	ys := make([]float64, len(obs))
	best, feasible := math.Inf(-1), false
	sign := 1.0
	if b.cfg.Objective.Direction == Minimize {
		sign = -1
	}
	for i, o := range obs {
		us[i], ys[i] = b.toUnit(o.Point), sign*o.Objective
		if o.Verdict.Outcome == Pass && !math.IsNaN(ys[i]) {
			best, feasible = math.Max(best, ys[i]), true
		}
	}
	obj := fitModel(us, ys)
	var cons []*model
	for j := range b.cfg.Filters {
		ms := make([]float64, len(obs))
		for i, o := range obs {
			ms[i] = o.Margins[j]
		}
		cons = append(cons, fitModel(us, ms))
	}
	return func(u []float64) float64 {
		pf := 1.0
		for _, c := range cons {
			if c != nil {
				mu, sd := c.predict(u)
				pf *= probBelowZero(mu, sd)
			}
		}
		if obj == nil || !feasible {
			return pf
		}
		mu, sd := obj.predict(u)
		return expectedImprovement(mu, sd, best+xi*obj.scale) * pf
	}
}

// expectedImprovement is E[max(f − best, 0)] for f ~ N(mu, sd²).
func expectedImprovement(mu, sd, best float64) float64 {
	if sd < 1e-12 {
		return math.Max(mu-best, 0)
	}
	z := (mu - best) / sd
	return (mu-best)*distuv.UnitNormal.CDF(z) + sd*distuv.UnitNormal.Prob(z)
}

// probBelowZero is P(c ≤ 0) for c ~ N(mu, sd²).
func probBelowZero(mu, sd float64) float64 {
	if sd < 1e-12 {
		if mu <= 0 {
			return 1
		}
		return 0
	}
	return distuv.UnitNormal.CDF(-mu / sd)
}

// candidates are points of the unit cube to score: uniform ones, and
// jittered copies of the three best observations.
func (b bo) candidates(rng *rand.Rand, obs []Observation) [][]float64 {
	dim := len(b.cfg.Space)
	var out [][]float64
	for range max(512, 256*dim) {
		u := make([]float64, dim)
		for i := range u {
			u[i] = rng.Float64()
		}
		out = append(out, u)
	}
	ranked := slices.Clone(obs)
	sort.SliceStable(ranked, func(i, j int) bool { return b.rank(ranked[i], ranked[j]) })
	for _, o := range ranked[:min(3, len(ranked))] {
		base := b.toUnit(o.Point)
		for range 16 {
			u := make([]float64, dim)
			for i := range u {
				u[i] = min(max(base[i]+0.05*rng.NormFloat64(), 0), 1)
			}
			out = append(out, u)
		}
	}
	return out
}

// rank orders observations feasible first, then by objective.
func (b bo) rank(x, y Observation) bool {
	fx, fy := x.Verdict.Outcome == Pass, y.Verdict.Outcome == Pass
	if fx != fy {
		return fx
	}
	if math.IsNaN(y.Objective) {
		return !math.IsNaN(x.Objective)
	}
	return b.cfg.Objective.better(x.Objective, y.Objective)
}

// refine polishes a candidate with Nelder–Mead on the acquisition (clamped
// to the unit cube).
func refine(acq func([]float64) float64, u0 []float64) ([]float64, float64) {
	clamp := func(z []float64) []float64 {
		u := make([]float64, len(z))
		for i, v := range z {
			u[i] = min(max(v, 0), 1)
		}
		return u
	}
	res, err := optimize.Minimize(optimize.Problem{Func: func(z []float64) float64 { return -acq(clamp(z)) }},
		u0, &optimize.Settings{FuncEvaluations: 200}, &optimize.NelderMead{})
	if err != nil && res == nil {
		return u0, math.Inf(-1)
	}
	return clamp(res.X), -res.F
}

// converged applies AIPerf's stopping signals after the initial points:
// no better feasible probe for ImprovementPatience probes, or the last
// PlateauWindow objectives' coefficient of variation below PlateauThreshold.
func (b bo) converged(obs []Observation) (string, string) {
	if len(obs) < b.cfg.InitialPoints {
		return "", ""
	}
	last, best := -1, math.NaN()
	for i, o := range obs {
		if o.Verdict.Outcome != Pass || math.IsNaN(o.Objective) {
			continue
		}
		if math.IsNaN(best) || b.cfg.Objective.better(o.Objective, best) {
			last, best = i, o.Objective
		}
	}
	if since := len(obs) - 1 - last; since >= b.cfg.ImprovementPatience {
		return ReasonImprovementPatience, fmt.Sprintf("no better feasible probe in the last %d", since)
	}
	w := b.cfg.PlateauWindow
	if len(obs) < w {
		return "", ""
	}
	var ys []float64
	for _, o := range obs[len(obs)-w:] {
		if math.IsNaN(o.Objective) {
			return "", ""
		}
		ys = append(ys, o.Objective)
	}
	mean, sd := stat.MeanStdDev(ys, nil)
	if math.Abs(mean) > 1e-9 && sd/math.Abs(mean) < b.cfg.PlateauThreshold {
		return ReasonPlateauCV, fmt.Sprintf("the last %d objectives vary by %.3g%%", w, 100*sd/math.Abs(mean))
	}
	return "", ""
}
