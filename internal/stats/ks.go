package stats

import (
	"math"
	"slices"
)

// KS is a two-sample Kolmogorov-Smirnov test: D, the largest distance
// between the two samples' empirical distribution functions, and P, the
// probability of a distance at least D were both samples drawn from one
// distribution.
type KS struct {
	D, P float64
}

// KSTwoSample tests whether a and b come from one distribution (both need
// at least one value; otherwise D and P are NaN), as scipy's ks_2samp
// (AIPerf's) does by default: P exact (the share of the samples'
// interleavings whose distance reaches D, counted over the lattice of
// paths) while n·m is at most exactMax² (scipy's rule is neither sample
// over exactMax values: this takes those, and lopsided samples too, where
// the limiting distribution is far off: 10,001 values against 2), else the
// asymptotic Kolmogorov distribution's at √(nm/(n+m))·D. Both samples are
// sorted (copies); the exact count takes O(nm) time and O(min(n, m))
// memory, at most exactMax values.
func KSTwoSample(a, b []float64) KS {
	if len(a) == 0 || len(b) == 0 {
		return KS{D: math.NaN(), P: math.NaN()}
	}
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	n, m := len(x), len(y)
	l := lcm(n, m)
	var h int64 // D·lcm(n, m): the distance in whole steps of the lattice
	i, j := 0, 0
	for i < n && j < m {
		v := min(x[i], y[j])
		for i < n && x[i] == v {
			i++
		}
		for j < m && y[j] == v {
			j++
		}
		h = max(h, abs64(int64(i)*(l/int64(n))-int64(j)*(l/int64(m))))
	}
	d := float64(h) / float64(l)
	if int64(n)*int64(m) > exactMax*exactMax {
		return KS{D: d, P: kolmogorovQ(math.Sqrt(float64(n)*float64(m)/float64(n+m)) * d)}
	}
	return KS{D: d, P: pathsReaching(max(n, m), min(n, m), h, l)} // symmetric: the row over the smaller sample
}

// exactMax is scipy's MAX_AUTO_N: KSTwoSample's exact p-value takes
// samples up to exactMax² interleaving steps.
const exactMax = 10000

// pathsReaching is the probability that a uniformly random interleaving of
// n and m values reaches a distance of h/l between the two empirical
// distribution functions somewhere: 1 − the probability of the paths from
// (0, 0) to (n, m) that stay strictly inside, each step's probability the
// share of the values left on its side.
func pathsReaching(n, m int, h, l int64) float64 {
	if h == 0 {
		return 1
	}
	inside := func(i, j int) bool { return abs64(int64(i)*(l/int64(n))-int64(j)*(l/int64(m))) < h }
	row := make([]float64, m+1) // row[j]: the probability of reaching (i, j) inside
	for i := 0; i <= n; i++ {
		for j := 0; j <= m; j++ {
			switch {
			case i == 0 && j == 0:
				row[0] = 1
				continue
			case !inside(i, j):
				row[j] = 0
				continue
			}
			left := float64(n + m - i - j + 1) // values left before the step into (i, j)
			p := 0.0
			if i > 0 {
				p += row[j] * float64(n-i+1) / left // from (i−1, j): row[j] still holds row i−1
			}
			if j > 0 {
				p += row[j-1] * float64(m-j+1) / left
			}
			row[j] = p
		}
	}
	return min(1, max(0, 1-row[m]))
}

func lcm(a, b int) int64 {
	x, y := int64(a), int64(b)
	for y != 0 {
		x, y = y, x%y
	}
	return int64(a) / x * int64(b)
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// kolmogorovQ is the Kolmogorov distribution's survival function,
// Q(λ) = 2 Σ_{k≥1} (−1)^{k−1} e^{−2k²λ²}, 1 for λ near 0.
func kolmogorovQ(lambda float64) float64 {
	if lambda < 0.2 {
		return 1 // the series converges slowly there, to 1 within 1e-9
	}
	sum, sign := 0.0, 1.0
	for k := 1; k <= 100; k++ {
		term := sign * math.Exp(-2*float64(k*k)*lambda*lambda)
		sum += term
		if math.Abs(term) < 1e-12*math.Abs(sum) {
			break
		}
		sign = -sign
	}
	return min(1, max(0, 2*sum))
}
