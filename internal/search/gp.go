package search

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"
)

// kernel is a stationary covariance function of the scaled distance r.
type kernel int

const (
	rbf      kernel = iota // exp(−r²/2)
	matern52               // (1 + √5 r + 5r²/3) exp(−√5 r)
)

// gpParams are a GP's hyperparameters: a length scale per input dimension,
// the signal variance and the observation-noise variance.
type gpParams struct {
	lengths []float64
	signal  float64
	noise   float64
}

// cov is the kernel's covariance between a and b.
func (k kernel) cov(a, b []float64, p gpParams) float64 {
	var r2 float64
	for i := range a {
		d := (a[i] - b[i]) / p.lengths[i]
		r2 += d * d
	}
	if k == rbf {
		return p.signal * math.Exp(-r2/2)
	}
	r := math.Sqrt(5 * r2)
	return p.signal * (1 + r + r*r/3) * math.Exp(-r)
}

// gp is a Gaussian-process regression with a zero prior mean, conditioned
// on observations y at inputs x: the Cholesky factor of K + noise·I (gonum
// mat) and α = (K + noise·I)⁻¹ y.
type gp struct {
	k     kernel
	par   gpParams
	x     [][]float64
	y     *mat.VecDense
	chol  mat.Cholesky
	alpha mat.VecDense
}

var errNotPD = errors.New("the GP covariance is not positive definite")

// newGP conditions a GP with fixed hyperparameters. A covariance that is not
// numerically positive definite gets a growing diagonal jitter first.
func newGP(k kernel, x [][]float64, y []float64, par gpParams) (*gp, error) {
	n := len(x)
	g := &gp{k: k, par: par, x: x, y: mat.NewVecDense(n, append([]float64(nil), y...))}
	K := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			K.SetSym(i, j, k.cov(x[i], x[j], par))
		}
	}
	jitter := 0.0
	for try := range 6 {
		for i := range n {
			K.SetSym(i, i, k.cov(x[i], x[i], par)+par.noise+jitter)
		}
		if g.chol.Factorize(K) {
			if err := g.chol.SolveVecTo(&g.alpha, g.y); err == nil {
				return g, nil
			}
		}
		jitter = par.signal * 1e-10 * math.Pow(100, float64(try))
	}
	return nil, errNotPD
}

// predict is the posterior mean and standard deviation of the latent
// function at x.
func (g *gp) predict(x []float64) (mean, sd float64) {
	n := len(g.x)
	ks := mat.NewVecDense(n, nil)
	for i := range n {
		ks.SetVec(i, g.k.cov(x, g.x[i], g.par))
	}
	mean = mat.Dot(ks, &g.alpha)
	var v mat.VecDense
	if err := g.chol.SolveVecTo(&v, ks); err != nil {
		return mean, 0
	}
	variance := g.k.cov(x, x, g.par) - mat.Dot(ks, &v)
	return mean, math.Sqrt(math.Max(variance, 0))
}

// logLikelihood is the log marginal likelihood of the observations:
// −½ yᵀα − ½ log|K + noise·I| − n/2 log 2π.
func (g *gp) logLikelihood() float64 {
	n := float64(len(g.x))
	return -0.5*mat.Dot(g.y, &g.alpha) - 0.5*g.chol.LogDet() - n/2*math.Log(2*math.Pi)
}

// Hyperparameter ranges for inputs in [0, 1] and standardised outputs.
var (
	lengthRange = [2]float64{0.02, 5}
	signalRange = [2]float64{0.05, 20}
	noiseRange  = [2]float64{1e-6, 0.5}
)

// unsquash maps an unconstrained z into [r0, r1] on a log scale (a
// sigmoid of z), so the optimiser needs no bounds.
func unsquash(z float64, r [2]float64) float64 {
	s := 1 / (1 + math.Exp(-z))
	return math.Exp(math.Log(r[0]) + s*(math.Log(r[1])-math.Log(r[0])))
}

func paramsOf(z []float64, dim int) gpParams {
	p := gpParams{lengths: make([]float64, dim)}
	for i := range dim {
		p.lengths[i] = unsquash(z[i], lengthRange)
	}
	p.signal = unsquash(z[dim], signalRange)
	p.noise = unsquash(z[dim+1], noiseRange)
	return p
}

// fitGP conditions a GP on (x, y) with the hyperparameters that maximise
// the log marginal likelihood, found by gonum/optimize's Nelder–Mead from a
// few fixed starts (deterministic). y should be standardised.
func fitGP(k kernel, x [][]float64, y []float64) (*gp, error) {
	dim := len(x[0])
	negLL := func(z []float64) float64 {
		g, err := newGP(k, x, y, paramsOf(z, dim))
		if err != nil {
			return math.Inf(1)
		}
		return -g.logLikelihood()
	}
	starts := [][]float64{make([]float64, dim+2), make([]float64, dim+2)}
	for i := range dim {
		starts[1][i] = -1.5 // shorter lengths
	}
	starts[1][dim+1] = 1.5 // more noise
	best, bestF := starts[0], math.Inf(1)
	for _, z0 := range starts {
		res, err := optimize.Minimize(optimize.Problem{Func: negLL}, z0,
			&optimize.Settings{FuncEvaluations: 600, Converger: &optimize.FunctionConverge{Absolute: 1e-7, Iterations: 60}},
			&optimize.NelderMead{})
		if err != nil && res == nil {
			continue
		}
		if res.F < bestF {
			best, bestF = res.X, res.F
		}
	}
	return newGP(k, x, y, paramsOf(best, dim))
}
