package main

import (
	"cmp"
	"slices"

	"github.com/aiperf-go/aiperf/internal/config"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// fromConfig sets the --search-* values a config file's adaptive_search
// sweep stands for, each where the command line (explicit: the flags it
// gave, snake_case) gave none.
func (a *SearchArgs) fromConfig(s *config.Search, explicit []string) {
	if s == nil {
		return
	}
	unset := func(flag string) bool { return !slices.Contains(explicit, flag) }
	if unset("search_space") {
		a.SearchSpace = s.Space
	}
	if unset("search_metric") && unset("search_direction") && unset("search_stat") {
		a.SearchMetric, a.SearchStat, a.SearchDirection = s.Metric, s.Stat, s.Direction
	}
	if unset("search_max_iterations") {
		a.SearchMaxIterations = s.MaxIterations
	}
	if unset("search_initial_points") && s.InitialPoints != nil {
		a.SearchInitialPoints = s.InitialPoints
	}
	if unset("search_random_seed") && s.Seed != nil {
		a.SearchRandomSeed = s.Seed
	}
	if unset("search_planner") {
		a.SearchPlanner = s.Planner
	}
	if unset("search_sla") {
		a.SearchSLA = s.SLA
	}
	if c := s.Convergence; c != nil && unset("convergence_metric") {
		a.ConvergenceMetric, a.ConvergenceStat, a.ConvergenceMode, a.ConvergenceThreshold = c.Metric, c.Stat, c.Mode, c.Threshold
	}
}

// configSearch is the search a config file declares, checked as aiperf
// profile checks it before sending anything (ok false: the file declares
// none).
func configSearch(file *config.File, name string) (plan.Search, bool, error) {
	if file.Search == nil {
		return plan.Search{}, false, nil
	}
	var a SearchArgs
	a.fromConfig(file.Search, nil)
	cooldown := file.MultiRun.CooldownSeconds
	if c := file.Search.CooldownSeconds; c != nil {
		cooldown = max(cooldown, *c)
	}
	return a.Search(searchInput{name: name, base: file.Profile, trials: max(1, file.MultiRun.NumRuns),
		confidence: cmp.Or(file.MultiRun.ConfidenceLevel, 0.95), cooldown: cooldown})
}
