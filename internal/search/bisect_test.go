package search

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The target: an 80 ms TTFT SLA that holds up to concurrency 8 and
// breaks at 9, over [1, 1000], found exactly in at most 12 probes.
func TestMonotonicFindsTheBoundaryAtEight(t *testing.T) {
	t.Parallel()
	s, err := New(slaConfig(PlannerMonotonic, 1000, 80, TrialRule{}))
	require.NoError(t, err)
	h, stop := drive(t, s, ttftAt(boundaryAt(8)))
	assert.Equal(t, "monotonic_precision_reached", stop.Reason)
	sum := s.Summarize(h)
	require.NotNil(t, sum.Bracket.Pass)
	require.NotNil(t, sum.Bracket.Fail)
	assert.Equal(t, 8.0, sum.Bracket.Pass.Value)
	assert.Equal(t, 9.0, sum.Bracket.Fail.Value)
	assert.LessOrEqual(t, len(h.Probes), 12)
	var xs []float64
	for _, p := range h.Probes {
		xs = append(xs, p.Point[0])
	}
	assert.Equal(t, []float64{1, 2, 4, 8, 16, 12, 10, 9}, xs, "exponential probe, then bisection of [8, 16]")
	assert.Equal(t, 1000, sum.GridCells, "one cell per concurrency resolves the boundary as finely")
}

// Table test of both 1D planners on boundaries across the range, one trial
// a probe: the bracket holds the truth and meets the precision.
func TestOneDimPlannersBracketTheBoundary(t *testing.T) {
	t.Parallel()
	for _, planner := range []string{PlannerMonotonic, PlannerSmoothIsotonic} {
		for _, b := range []float64{2, 8, 9, 37, 100, 511, 999} {
			t.Run(fmt.Sprintf("%s/%g", planner, b), func(t *testing.T) {
				t.Parallel()
				s, err := New(slaConfig(planner, 1000, 80, TrialRule{}))
				require.NoError(t, err)
				h, stop := drive(t, s, ttftAt(boundaryAt(b)))
				assert.Contains(t, stop.Reason, "precision_reached")
				br := s.Summarize(h).Bracket
				require.NotNil(t, br.Pass)
				require.NotNil(t, br.Fail)
				assert.LessOrEqual(t, br.Pass.Value, b)
				assert.Greater(t, br.Fail.Value, b)
				gap := br.Fail.Value - br.Pass.Value
				assert.True(t, gap <= 1 || gap/br.Fail.Value < 0.05, "bracket [%g, %g]", br.Pass.Value, br.Fail.Value)
				assert.LessOrEqual(t, len(h.Probes), 20)
			})
		}
	}
}

// The smooth planner root-finds the margin curve: on a smooth linear TTFT
// it needs fewer probes than bisection to pin a boundary deep in a bracket.
func TestSmoothIsotonicUsesTheFit(t *testing.T) {
	t.Parallel()
	count := func(planner string) int {
		s, err := New(slaConfig(planner, 1000, 80, TrialRule{}))
		require.NoError(t, err)
		h, _ := drive(t, s, ttftAt(boundaryAt(700)))
		return len(h.Probes)
	}
	smooth, mono := count(PlannerSmoothIsotonic), count(PlannerMonotonic)
	assert.Less(t, smooth, mono, "smooth %d probes, monotonic %d", smooth, mono)
}

func TestOneDimEdges(t *testing.T) {
	t.Parallel()
	t.Run("nothing fails", func(t *testing.T) {
		s, err := New(slaConfig(PlannerMonotonic, 100, 80, TrialRule{}))
		require.NoError(t, err)
		h, stop := drive(t, s, ttftAt(boundaryAt(5000)))
		assert.Equal(t, "monotonic_no_failure_in_range", stop.Reason)
		assert.Equal(t, 100.0, h.Probes[len(h.Probes)-1].Point[0], "hi is probed explicitly")
		br := s.Summarize(h).Bracket
		assert.Equal(t, 100.0, br.Pass.Value)
		assert.Nil(t, br.Fail)
	})
	t.Run("lo fails", func(t *testing.T) {
		s, err := New(slaConfig(PlannerSmoothIsotonic, 100, 80, TrialRule{}))
		require.NoError(t, err)
		h, stop := drive(t, s, ttftAt(func(float64) float64 { return 500 }))
		assert.Equal(t, "smooth_isotonic_no_pass_in_range", stop.Reason)
		assert.Len(t, h.Probes, 1)
	})
	t.Run("max iterations", func(t *testing.T) {
		cfg := slaConfig(PlannerMonotonic, 1000, 80, TrialRule{})
		cfg.MaxIterations = 3
		s, err := New(cfg)
		require.NoError(t, err)
		h, stop := drive(t, s, ttftAt(boundaryAt(8)))
		assert.Equal(t, ReasonMaxIterations, stop.Reason)
		assert.Len(t, h.Probes, 3)
	})
	t.Run("non-monotonic", func(t *testing.T) {
		// A pass at 16 after the failure at 8: the planner's bracket stays,
		// the answer is the highest pass and flags the failure below it.
		f := func(c float64) float64 {
			if c >= 8 && c < 16 {
				return 200
			}
			return 80 * c / 6.5
		}
		s, err := New(slaConfig(PlannerMonotonic, 1000, 80, TrialRule{}))
		require.NoError(t, err)
		h := History{}
		for _, c := range []float64{1, 2, 4, 8, 16} {
			h.Probes = append(h.Probes, Probe{Point: Point{c}, Trials: []Trial{ttftAt(f)(Point{c}, 0, 0)}})
		}
		br := s.Summarize(h).Bracket
		assert.Equal(t, 4.0, br.Pass.Value)
		assert.Equal(t, 8.0, br.Fail.Value)
		assert.Empty(t, br.NonMonotonic)
		h.Probes[4].Trials[0].Values["time_to_first_token.p95"] = 10 // 16 passes above the failure at 8
		// the planner's bracket stays [4, 8]; the answer's highest pass is 16,
		// the failure at 8 below it flagged
		step, err := s.Next(h)
		require.NoError(t, err)
		assert.Equal(t, "bisect [4, 8]", step.Why)
		br = s.Summarize(h).Bracket
		assert.Equal(t, 16.0, br.Pass.Value)
		assert.Nil(t, br.Fail)
		require.Len(t, br.Below, 1)
		assert.Equal(t, 8.0, br.Below[0].Value)
		assert.Equal(t, []int{3}, br.NonMonotonic)
	})
}

// Resumable: a history stored as JSON and read back by a new Search gives
// the same next step at every prefix as the run that produced it.
func TestReplayReachesTheSameSteps(t *testing.T) {
	t.Parallel()
	for _, planner := range []string{PlannerMonotonic, PlannerSmoothIsotonic, PlannerBayesian} {
		t.Run(planner, func(t *testing.T) {
			t.Parallel()
			cfg := slaConfig(planner, 1000, 80, TrialRule{Min: 2, Max: 6})
			cfg.Seed = 7
			cfg.MaxIterations = 12
			s, err := New(cfg)
			require.NoError(t, err)
			h, stop := drive(t, s, noisyTTFT(boundaryAt(40), 3, 11))
			for k := 0; k <= len(h.Probes); k++ {
				prefix := History{Probes: h.Probes[:k]}
				b, err := json.Marshal(prefix)
				require.NoError(t, err)
				var back History
				require.NoError(t, json.Unmarshal(b, &back))
				fresh, err := New(cfg)
				require.NoError(t, err)
				got, err := fresh.Next(back)
				require.NoError(t, err)
				want, err := s.Next(prefix)
				require.NoError(t, err)
				assert.Equal(t, want, got, "prefix of %d probes", k)
			}
			again, _ := drive(t, s, noisyTTFT(boundaryAt(40), 3, 11))
			assert.Equal(t, h, again, "the same seed reaches the same history")
			_ = stop
		})
	}
}

func TestSummaryLine(t *testing.T) {
	t.Parallel()
	s, err := New(slaConfig(PlannerMonotonic, 1000, 80, TrialRule{Min: 2}))
	require.NoError(t, err)
	h, _ := drive(t, s, ttftAt(boundaryAt(8)))
	assert.Equal(t, "concurrency: 8 passed (100.0%), 9 failed (100.0%: time_to_first_token:p95:lt:80); 8 probes, 16 trials against 2000 for a 1000-cell grid",
		s.Summarize(h).String())
	assert.Equal(t, "no probe yet; 0 probes, 0 trials against 2000 for a 1000-cell grid", s.Summarize(History{}).String())
	assert.Equal(t, "search_iter_0007/profile_runs/run_0002", TrialDir(7, 2))

	// A probe none of whose trials measured the statistic (they failed
	// before any load) fails, and the line says it measured nothing.
	f := Filter{Metric: "inter_token_latency", Stat: "avg", Op: "lt", Threshold: 12.5}
	b := Bracket{Param: Param{Name: "concurrency"}, Fail: &Bound{Value: 1, Trials: 2, Confidence: math.NaN(),
		Breach: &FilterVerdict{Filter: f, N: 0, Mean: math.NaN()}}}
	assert.Equal(t, "concurrency: nothing passed, 1 failed unmeasured (no successful trial of 2 trials measured inter_token_latency:avg:lt:12.5: see runs show)",
		b.String())
}
