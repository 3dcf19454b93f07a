// Package stats holds the small inferential statistics behind multi-trial
// aggregation and `aiperf compare`: sample mean and standard deviation,
// Student's t distribution (CDF and quantile, from the regularized incomplete
// beta function), t confidence intervals, Welch's unequal-variance t-test
// and the two one-sided Welch tests (TOST) for equivalence within a margin.
// It is pure Go on top of package math.
package stats
