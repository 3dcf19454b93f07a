// Package stats holds the small inferential statistics behind multi-trial
// aggregation and `aiperf compare`: sample mean and standard deviation,
// Student's t distribution (CDF and quantile, from the regularized incomplete
// beta function), t confidence intervals and Welch's unequal-variance t-test.
// It is pure Go on top of package math.
package stats
