package main

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aiperf-go/aiperf/internal/compare"
	"github.com/aiperf-go/aiperf/internal/config"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/runner"
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

// checkSearchMetrics checks that s optimises, filters, converges on and
// reads statistics a probe measures: a client metric's tag (compare's
// rule, with the nearest name) and a statistic it offers; not an alias
// (ttft) nor the server's or GPU's metrics, which a probe's verdict does
// not read; and, without streaming, none only a streamed reply measures
// (TTFT, ITL, ...). A misspelt tag or a streaming-only one fails before any
// probe instead of leaving every probe unmeasured. A script's search is
// named by where it is declared and its arguments; the command line's by
// its flags. It also refuses a search that can drive none of its probes
// (checkSearchDriven).
func checkSearchMetrics(s plan.Search) error {
	c := s.Config
	script := s.Source != ""
	label := func(flag, arg string) string {
		if script {
			return arg
		}
		return flag
	}
	check := func(what, given, metric, key string) error {
		if metric == "" {
			return nil
		}
		keys, err := compare.ParseKeys([]string{key})
		switch {
		case err != nil:
			return searchErr(s, fmt.Errorf("%s %s: %w", what, given, err))
		case strings.Contains(keys[0].Metric, ".") || keys[0].Metric != metric:
			return searchErr(s, fmt.Errorf("%s %s: a search judges its probes by the client's metrics: name one by its tag "+
				"(time_to_first_token, inter_token_latency, request_latency, output_token_throughput, ...)", what, given))
		case !s.Base.Streaming && metrics.StreamingOnly(metric):
			fix := "add --streaming"
			if script {
				fix = "give the base profile streaming = True"
			}
			return searchErr(s, fmt.Errorf("%s %s reads a streaming-only metric: %s", what, given, fix))
		}
		return nil
	}
	objective := c.Objective.Metric
	if script {
		objective = c.Objective.Key()
	}
	errs := []error{check(label("--search-metric", "objective"), objective, c.Objective.Metric, c.Objective.Key())}
	for _, f := range c.Filters {
		errs = append(errs, check(label("--search-sla", "sla"), f.String(), f.Metric, f.Key()))
	}
	if cv := c.Trials.Convergence; cv != nil {
		errs = append(errs, check("--convergence-metric", cv.Metric, cv.Metric, cv.Key()))
	}
	for _, k := range c.Extra {
		metric, _, _ := strings.Cut(k, ".")
		errs = append(errs, check(label("statistic", "stats"), k, metric, k))
	}
	return errors.Join(append(errs, checkSearchDriven(s))...)
}

// checkSearchDriven refuses a search none of whose probes can be driven
// (runner.UndrivenSpace: every probe's concurrency above the requests it
// sends), which would otherwise stop before its first probe having sent
// nothing. Only a space every point of which is undriven is refused: one
// that starts at a load it can drive runs, and stops below the first one it
// cannot (runner.ReasonUndriven).
func checkSearchDriven(s plan.Search) error {
	u, ok, err := runner.UndrivenSpace(s)
	if err != nil || !ok {
		return nil // a probe's profile Check reports
	}
	var space []string
	for _, p := range s.Config.Space {
		space = append(space, fmt.Sprintf("%s:%g,%g:%s", p.Name, p.Lo, p.Hi, p.Kind))
	}
	var corner []string
	for _, p := range u.Corner.Params {
		corner = append(corner, fmt.Sprintf("%s %v", p.Name, p.Value))
	}
	// The highest load, not the lowest: a planner may probe any point first
	// (bayesian starts inside the space), and stops below one it cannot drive.
	what := fmt.Sprintf("--search-space %s", strings.Join(space, " --search-space "))
	fix := fmt.Sprintf("give a --request-count of at least %d (the space's highest load: a search may probe any load first), "+
		"a space starting at a load of %d or below, or a --benchmark-duration", u.Highest, u.Requests)
	if s.Config.Recipe != "" {
		what = fmt.Sprintf("--search-recipe %s's space %s", s.Config.Recipe, strings.Join(space, " "))
	}
	if s.Source != "" {
		what = "space " + strings.Join(space, " ")
		fix = fmt.Sprintf("give the base profile a request_count of at least %d (the space's highest load), start the space "+
			"at a load of %d or below, or give the base profile a benchmark_duration", u.Highest, u.Requests)
	}
	return searchErr(s, fmt.Errorf("%s: no probe of the space can be driven: at %s, %s; nothing was sent: %s",
		what, strings.Join(corner, ", "), u.Why, fix))
}

// searchErr is err about search s: named by where a script declares it
// (file:line), or by its name.
func searchErr(s plan.Search, err error) error {
	if s.Source != "" {
		return fmt.Errorf("%s: search %q: %w", s.Source, s.Name, err)
	}
	return fmt.Errorf("search %q: %w", s.Name, err)
}
