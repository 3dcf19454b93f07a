package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A criterion is met only when the whole interval of the paired ratios is
// on its side of the bound, missed when all of it is on the other side.
func TestJudgeRatios(t *testing.T) {
	atLeast, atMost := pinnedBounds[0], pinnedBounds[2] // req/s ≥ 1.00×, server CPU ≤ 1.05×
	for _, tc := range []struct {
		xs   []float64
		b    pinnedBound
		want string
	}{
		{[]float64{1.10, 1.12, 1.08, 1.11}, atLeast, "met"},
		{[]float64{0.80, 0.82, 0.79}, atLeast, "missed"},
		{[]float64{0.95, 1.10, 1.02}, atLeast, "undecided"},
		{[]float64{1.20}, atLeast, "undecided"}, // one round: no spread
		{[]float64{0.90, 0.92, 0.91}, atMost, "met"},
		{[]float64{1.24, 1.26, 1.25}, atMost, "missed"},
		{[]float64{1.00, 1.10, 1.04}, atMost, "undecided"},
	} {
		v := judgeRatios(tc.xs, tc.b)
		assert.Equal(t, tc.want, v.verdict, "%v against %s", tc.xs, tc.b.name)
		if len(tc.xs) > 1 {
			assert.True(t, v.low <= v.mean && v.mean <= v.high, "%v: %.3f in [%.3f, %.3f]", tc.xs, v.mean, v.low, v.high)
		}
	}
}

// The verdicts pair each round's aiperf run with the minimal client's of the
// same round, so that a drift of the machine between rounds cancels: here
// the machine halves its speed between rounds and aiperf is 10% ahead in
// each, which is met although the medians of the two clients overlap.
func TestVerdictsPairRounds(t *testing.T) {
	fig := func(rps, cpu float64) pinnedFigures {
		return pinnedFigures{reqPerSec: rps, clientCPU: cpu, serverCPU: cpu}
	}
	l := levelRuns{c: 64, client: "aiperf",
		aiperf:   []pinnedFigures{fig(2200, 0.30), fig(1100, 0.60), fig(3300, 0.20)},
		baseline: []pinnedFigures{fig(2000, 0.33), fig(1000, 0.66), fig(3000, 0.22)},
	}
	var out strings.Builder
	printVerdicts(&out, []levelRuns{l})
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 3, out.String())
	assert.Contains(t, lines[2], "1.10× [1.10, 1.10] met")
	assert.Contains(t, lines[2], "0.91× [0.91, 0.91] met")
	assert.Contains(t, lines[2], "1000–3000")
}
