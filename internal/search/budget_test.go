package search

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every budget of 2 to 200 iterations is a valid Bayesian search: the
// default initial points fit it (5, or one below the budget). Before, any
// budget of 2 to 5 failed, blaming --search-initial-points 5, a flag never
// given.
func TestDefaultInitialPointsFitTheBudget(t *testing.T) {
	t.Parallel()
	for _, n := range []int{2, 3, 5, 6, 200} {
		cfg := slaConfig(PlannerBayesian, 100, 80, TrialRule{})
		Budget{MaxIterations: &n}.Apply(&cfg)
		s, err := New(cfg)
		require.NoError(t, err, "%d iterations", n)
		assert.Equal(t, min(5, n-1), s.Config().InitialPoints, "%d iterations", n)
	}
	// a recipe's 5 initial points are cut to a smaller budget too
	for _, n := range []int{2, 4} {
		r, err := ExpandRecipe(RecipeMaxThroughputTTFT, RecipeInputs{TTFTSLAms: ptr(80.0), Streaming: true, MaxIterations: &n})
		require.NoError(t, err, "%d iterations", n)
		assert.Equal(t, n-1, r.Config.InitialPoints)
	}
}

// The budget's rule names what the user gave, in the CLI's or Starlark's
// words, and refuses 0 initial points instead of reading it as the default.
func TestBudgetCheck(t *testing.T) {
	t.Parallel()
	i := func(v int) *int { return &v }
	for _, tc := range []struct {
		b          Budget
		flag, star string
	}{
		{Budget{MaxIterations: i(1)}, "--search-max-iterations must be between 2 and 200 (got 1)", "max_iterations must be between 2 and 200 (got 1)"},
		{Budget{MaxIterations: i(0)}, "--search-max-iterations must be between 2 and 200 (got 0)", "max_iterations must be between 2 and 200 (got 0)"},
		{Budget{MaxIterations: i(-3)}, "--search-max-iterations must be between 2 and 200 (got -3)", "max_iterations must be between 2 and 200 (got -3)"},
		{Budget{MaxIterations: i(201)}, "--search-max-iterations must be between 2 and 200 (got 201)", "max_iterations must be between 2 and 200 (got 201)"},
		{Budget{MaxIterations: i(3), InitialPoints: i(0)}, "--search-initial-points must be at least 1 (got 0)", "initial_points must be at least 1 (got 0)"},
		{Budget{MaxIterations: i(3), InitialPoints: i(3)}, "--search-initial-points 3 must be below --search-max-iterations 3",
			"initial_points 3 must be below max_iterations 3"},
		{Budget{Seed: ptr(int64(-1))}, "--search-random-seed must be ≥ 0 (got -1)", "seed must be ≥ 0 (got -1)"},
	} {
		t.Run(fmt.Sprint(tc.flag), func(t *testing.T) {
			assert.ErrorContains(t, tc.b.Check(BudgetFlags), tc.flag)
			assert.ErrorContains(t, tc.b.Check(BudgetArguments), tc.star)
		})
	}
	assert.NoError(t, Budget{MaxIterations: i(2), InitialPoints: i(1), Seed: ptr(int64(0))}.Check(BudgetFlags))
	_, err := ExpandRecipe(RecipeMaxThroughputTTFT, RecipeInputs{TTFTSLAms: ptr(80.0), Streaming: true, InitialPoints: i(0)})
	assert.ErrorContains(t, err, "--search-initial-points must be at least 1 (got 0)")
}
