package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/search"
	"github.com/aiperf-go/aiperf/runner"
)

// executorFor is the executor for the script's sweeps (see executor); its
// searches run their probes as local subprocesses, so --executor
// kubernetes is refused for a script that declares one.
func (c *SweepCmd) executorFor(sweeps []plan.Sweep) (runner.Executor, error) {
	if len(c.searches) > 0 && c.Executor == "kubernetes" {
		return nil, usageErr(fmt.Errorf("search %q runs its probes as local subprocesses: --executor kubernetes runs a sweep's "+
			"trials; use --only to run the sweeps there and the searches locally (nothing was sent)", c.searches[0].Name))
	}
	return c.executor(sweeps)
}

// runSearches runs the script's searches after its sweeps, unless one was
// interrupted: each under <artifact-dir>/<search>, stored as a search,
// --resume continuing it. It returns errs with theirs appended.
func (c *SweepCmd) runSearches(ctx context.Context, g *Globals, errs []error) []error {
	if errors.Is(errors.Join(errs...), context.Canceled) {
		return errs
	}
	for _, s := range c.searches {
		err := runSearch(ctx, g, s, searchOptions{
			dir: searchDir(c.ArtifactDir, s), confidence: c.ConfidenceLevel, ui: c.UI, resume: c.Resume, script: c.Script,
			vars: c.Set, cliCommand: redactedCommand(g.Args, s.Base.URL, s.Base.Redactor()), workers: c.Workers,
			workerArgs: c.WorkerDeadlines.args(),
		})
		if err != nil {
			errs = append(errs, err)
			if errors.Is(err, context.Canceled) {
				break
			}
		}
	}
	return errs
}

// searchDir is where a script's search keeps its artifacts.
func searchDir(artifactDir string, s plan.Search) string {
	return filepath.Join(artifactDir, plan.DirName(s.Name))
}

// searchPlan is a search as `aiperf plan --format json` shows it: its
// config as search_history.json's config block, its base profile
// (redacted) and its first probe.
type searchPlan struct {
	Name        string               `json:"name"`
	Source      string               `json:"source"`
	Description string               `json:"description"`
	Config      search.HistoryConfig `json:"config"`
	Base        plan.Profile         `json:"base"`
	FirstProbe  map[string]any       `json:"first_probe"`
	FirstWhy    string               `json:"first_probe_why"`
	Dir         string               `json:"dir"`
}

// planSearches describes each search: it asks the planner for the first
// probe (no traffic).
func planSearches(searches []plan.Search) ([]searchPlan, error) {
	out := make([]searchPlan, 0, len(searches))
	for _, s := range searches {
		if err := checkSearchMetrics(s); err != nil {
			return nil, usageErr(err)
		}
		srch, err := s.New()
		if err != nil {
			return nil, usageErr(err)
		}
		step, err := srch.Next(search.History{})
		if err != nil {
			return nil, usageErr(err)
		}
		first := map[string]any{}
		for _, p := range s.Params(step.Point) {
			first[p.Name] = p.Value
		}
		out = append(out, searchPlan{Name: s.Name, Source: s.Source, Description: s.Describe(),
			Config: srch.Document(search.History{}, "").Config, Base: s.Base.Redacted(), FirstProbe: first,
			FirstWhy: step.Why, Dir: searchDir("", s)})
	}
	return out, nil
}

// printSearchPlans prints each search in a few lines.
func printSearchPlans(g *Globals, plans []searchPlan) {
	for _, p := range plans {
		first := ""
		for _, sp := range p.Config.SearchSpace {
			if first != "" {
				first += ", "
			}
			first += fmt.Sprintf("%s %v", sp.Name, p.FirstProbe[sp.Name])
		}
		fmt.Fprintf(g.Stdout, "search %q (%s): %s\n", p.Name, p.Source, p.Description)
		fmt.Fprintf(g.Stdout, "  base:        %s; hooks %s\n", describeLoad(p.Base), hooksOf(p.Base))
		fmt.Fprintf(g.Stdout, "  first probe: %s (%s) in %s\n", first, p.FirstWhy, filepath.Join(p.Dir, search.TrialDir(0, 1)))
	}
}
