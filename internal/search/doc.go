// Package search plans adaptive searches over benchmark cells: AIPerf's
// search recipes (max-concurrency-under-sla, max-throughput-ttft-sla,
// concurrency-ramp, prefill-ttft-curve, ...), its explicit --search-* stack
// and its search_history.json, with noise-aware verdicts on top.
//
// The package never runs load. A Search sits above the runner: given the
// History of the probes run so far (each probe a point of the Space and the
// stored statistics of each of its trials), Next says what to run next — a
// new probe, another trial of the last one, or stop with a convergence
// reason. Next is a pure function of (Config, History): replaying stored
// results reaches the same state, which is what makes a search resumable.
//
// A probe's pass/fail on the SLA filters is a statistical verdict (verdict.go):
// with several trials, it passes when the one-sided t confidence bound of each
// filtered statistic is on the good side of its threshold, fails when one is
// on the bad side, and is ambiguous otherwise — an ambiguous probe earns
// another trial, up to TrialRule.Max, before the planner moves. The same
// trial rule carries AIPerf's multi-run convergence (--convergence-*).
//
// Planners: Monotonic (exponential probe + bisection, AIPerf's monotonic_sla),
// SmoothIsotonic (PAVA-denoised monotone interpolation of the SLA margin),
// Grid (a fixed list of points) and BO (a Gaussian process with constrained
// expected improvement, on gonum: gp.go, bo.go). A Planner written elsewhere
// (a Starlark function) plugs in through the same interface.
//
// Recipes (recipes.go) expand AIPerf's recipe flags into a Config plus the
// fixed profile options and post-process of each; Document builds
// search_history.json and PostProcess the sweep_aggregate/ files
// (degradation_knee.json, prefill_curve.json, decode_itl_surface.json,
// pareto_sweep.json, sla_breach.json). Writing them is the caller's job.
package search
