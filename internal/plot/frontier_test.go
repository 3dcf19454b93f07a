package plot

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/aiperf-go/aiperf/internal/compare"
)

func pt(label string, x, y float64) Point {
	return Point{Label: label, X: Interval{Mean: x, Low: math.NaN(), High: math.NaN()}, Y: Interval{Mean: y, Low: math.NaN(), High: math.NaN()}}
}

func labels(ps []Point) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Label)
	}
	return out
}

func TestFrontierLatencyAgainstThroughput(t *testing.T) {
	// x: TTFT p99 (lower better), y: req/s (higher better).
	ps := []Point{
		pt("c1", 20, 10), pt("c2", 21, 18), pt("c4", 25, 30),
		pt("slow-and-weak", 30, 20), // beaten by c4 on both
		pt("c8", 40, 31),
		pt("tie-x", 21, 15), // same TTFT as c2, less throughput: beaten
	}
	f := Frontier(ps, compare.LowerIsBetter, compare.HigherIsBetter)
	assert.Equal(t, []string{"c1", "c2", "c4", "c8"}, labels(f), "in increasing X")
}

func TestFrontierBothHigher(t *testing.T) {
	// Interactivity: per-user tok/s against total tok/s, both higher.
	ps := []Point{pt("a", 100, 1000), pt("b", 50, 3000), pt("c", 80, 900), pt("d", 20, 2500)}
	f := Frontier(ps, compare.HigherIsBetter, compare.HigherIsBetter)
	assert.Equal(t, []string{"b", "a"}, labels(f))
}

func TestFrontierDuplicatesAndEdges(t *testing.T) {
	assert.Empty(t, Frontier(nil, compare.LowerIsBetter, compare.HigherIsBetter))
	one := []Point{pt("only", 1, 1)}
	assert.Equal(t, []string{"only"}, labels(Frontier(one, compare.LowerIsBetter, compare.HigherIsBetter)))
	// Two identical points: neither beats the other.
	dup := []Point{pt("a", 5, 5), pt("b", 5, 5), pt("c", 6, 5)}
	assert.Equal(t, []string{"a", "b"}, labels(Frontier(dup, compare.LowerIsBetter, compare.HigherIsBetter)))
}

func TestFrontierMatchesCompareDominance(t *testing.T) {
	// A brute-force check of the definition on a grid with ties.
	var ps []Point
	for i := range 7 {
		for j := range 5 {
			ps = append(ps, pt("", float64((i*3+j*5)%7), float64((i*2+j)%5)))
		}
	}
	for i := range ps {
		ps[i].Label = string(rune('A' + i))
	}
	f := Frontier(ps, compare.LowerIsBetter, compare.HigherIsBetter)
	var want []string
	for _, p := range ps {
		dominated := false
		for _, q := range ps {
			if q.X.Mean <= p.X.Mean && q.Y.Mean >= p.Y.Mean && (q.X.Mean < p.X.Mean || q.Y.Mean > p.Y.Mean) {
				dominated = true
			}
		}
		if !dominated {
			want = append(want, p.Label)
		}
	}
	assert.ElementsMatch(t, want, labels(f))
}
