package search

import "fmt"

// Budget is a search's budget as the user gave it (nil: not given): the
// --search-max-iterations, --search-initial-points and
// --search-random-seed flags, or search()'s max_iterations,
// initial_points and seed. One rule checks both (AIPerf's
// AdaptiveSearchConfig): 2 to 200 iterations, at least one initial point
// and fewer than the iterations, a seed ≥ 0.
type Budget struct {
	MaxIterations *int
	InitialPoints *int
	Seed          *int64
}

// BudgetNames are the names of a Budget's knobs in the caller's syntax.
type BudgetNames struct{ MaxIterations, InitialPoints, Seed string }

// Budget knob names: aiperf profile's flags and search()'s arguments.
var (
	BudgetFlags     = BudgetNames{"--search-max-iterations", "--search-initial-points", "--search-random-seed"}
	BudgetArguments = BudgetNames{"max_iterations", "initial_points", "seed"}
)

// Bounds of a given MaxIterations (AIPerf's max_iterations: ge=2, le=200).
const (
	MinIterations = 2
	MaxIterations = 200
)

// DefaultInitialPoints is the Bayesian planner's space-filling probes when
// none are given: 5 (AIPerf's default), fewer under a smaller budget so
// that the model is fitted at least once.
func DefaultInitialPoints(maxIterations int) int { return max(1, min(5, maxIterations-1)) }

// Check checks the budget, each message naming what the user gave by n.
func (b Budget) Check(n BudgetNames) error {
	if m := b.MaxIterations; m != nil && (*m < MinIterations || *m > MaxIterations) {
		return fmt.Errorf("%s must be between %d and %d (got %d)", n.MaxIterations, MinIterations, MaxIterations, *m)
	}
	if p := b.InitialPoints; p != nil {
		switch m := b.MaxIterations; {
		case *p < 1:
			return fmt.Errorf("%s must be at least 1 (got %d): the Bayesian planner's space-filling probes before its model "+
				"(omit it for the default, 5 or fewer to fit the budget)", n.InitialPoints, *p)
		case m != nil && *p >= *m:
			return fmt.Errorf("%s %d must be below %s %d: the planner fits its model after them", n.InitialPoints, *p, n.MaxIterations, *m)
		}
	}
	if s := b.Seed; s != nil && *s < 0 {
		return fmt.Errorf("%s must be ≥ 0 (got %d)", n.Seed, *s)
	}
	return nil
}

// Apply sets the knobs given on c; without InitialPoints under a given
// MaxIterations, c's initial points are cut to fit it.
func (b Budget) Apply(c *Config) {
	if b.MaxIterations != nil {
		c.MaxIterations = *b.MaxIterations
		if b.InitialPoints == nil && c.InitialPoints > 0 {
			c.InitialPoints = min(c.InitialPoints, DefaultInitialPoints(c.MaxIterations))
		}
	}
	if b.InitialPoints != nil {
		c.InitialPoints = *b.InitialPoints
	}
	if b.Seed != nil {
		c.Seed = *b.Seed
	}
}
