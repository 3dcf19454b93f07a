package config

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Search is a file's sweep of type adaptive_search, as the values of
// aiperf profile's --search-* flags it stands for (the command maps them,
// so that a search reads and runs one way whichever way it was given).
type Search struct {
	Space         []string // --search-space PATH:LO,HI:KIND[:log]
	Metric        string   // --search-metric
	Stat          string   // --search-stat
	Direction     string   // --search-direction
	MaxIterations *int     // --search-max-iterations
	InitialPoints *int     // --search-initial-points
	Seed          *int64   // --search-random-seed
	Planner       string   // --search-planner
	SLA           []string // --search-sla METRIC:STAT:OP:THRESHOLD
	// Convergence is multi_run.convergence: --convergence-*.
	Convergence *Convergence
	// CooldownSeconds is sweep.cooldown_seconds, the pause between probes.
	CooldownSeconds *float64
}

// Convergence is multi_run.convergence of a search: stop adding trials to
// a probe once the metric is stable.
type Convergence struct {
	Metric, Stat, Mode string
	Threshold          *float64
}

// filterOps are AIPerf's SLA operators, in either spelling.
var filterOps = map[string]string{"lt": "lt", "le": "le", "gt": "gt", "ge": "ge", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}

// adaptiveSearch reads a sweep of type adaptive_search.
func (d *decoder) adaptiveSearch(v *yaml.Node) {
	s := &Search{}
	d.fields(v, "sweep", []field{
		{keys("type"), func(string, *yaml.Node) {}},
		{keys("search_space"), func(path string, n *yaml.Node) { s.Space = d.searchSpace(path, n) }},
		{keys("objectives"), func(path string, n *yaml.Node) { d.objectives(path, n, s) }},
		{keys("max_iterations"), func(path string, n *yaml.Node) { s.MaxIterations = d.intPtr(path, n) }},
		{keys("n_initial_points"), func(path string, n *yaml.Node) { s.InitialPoints = d.intPtr(path, n) }},
		{keys("random_seed"), func(path string, n *yaml.Node) {
			if x, ok := d.int(path, n); ok {
				seed := int64(x)
				s.Seed = &seed
			}
		}},
		{keys("planner"), into(func(p string, n *yaml.Node) (string, bool) {
			return d.enum(p, n, "bayesian", "monotonic_sla", "smooth_isotonic", "optuna")
		}, &s.Planner)},
		{keys("sla_filters"), func(path string, n *yaml.Node) { s.SLA = d.slaFilters(path, n) }},
		{keys("cooldown_seconds"), func(path string, n *yaml.Node) {
			if x, ok := d.pause(path, n); ok {
				s.CooldownSeconds = &x
			}
		}},
		{keys("outcome_constraints"), d.notYet("outcome_constraints:", "use sla_filters")},
		{keys("post_process"), d.notYet("a search's post_process:", "")},
		{keys("recipe_name"), d.notYet("recipe_name:", "use aiperf profile --search-recipe")},
		{keys("plateau_window"), d.notYet("plateau_window:", "")},
		{keys("plateau_threshold"), d.notYet("plateau_threshold:", "")},
		{keys("improvement_patience"), d.notYet("improvement_patience:", "")},
		{keys("optuna_sampler"), d.notYet("optuna_sampler: (AIPerf's Optuna stack)", "use planner: bayesian")},
		{keys("optuna_acquisition"), d.notYet("optuna_acquisition: (AIPerf's Optuna stack)", "use planner: bayesian")},
		{keys("optuna_terminator"), d.notYetUnless("none", "optuna_terminator:", "")},
		{keys("objective_pooling"), d.notYetUnless("mean", "objective_pooling: pooled", "")},
		{keys("monotonic_stability_trials"), d.notYet("monotonic_stability_trials:", "")},
		{keys("sla_replicates"), d.notYet("sla_replicates:", "use aiperf profile --search-max-replicates")},
		{keys("sla_precision"), d.notYetUnless("normal", "sla_precision:", "")},
		{keys("sla_warmup_seconds"), d.notYet("sla_warmup_seconds:", "")},
		{keys("constraint_mode"), d.notYetUnless("penalty", "constraint_mode: eic", "")},
		{keys("sla_tiers"), d.notYet("sla_tiers: (multi-tier SLOs)", "")},
	})
	if s.Space == nil {
		d.errorf(v, "sweep.search_space", "an adaptive_search sweep needs search_space: [{path, lo, hi, kind}]")
	}
	if s.MaxIterations == nil {
		d.errorf(v, "sweep.max_iterations", "an adaptive_search sweep needs max_iterations (2-200): how many probes it may run")
	}
	d.f.Search = s
}

func (d *decoder) intPtr(path string, n *yaml.Node) *int {
	if x, ok := d.int(path, n); ok {
		return &x
	}
	return nil
}

// searchSpace reads search_space: [{path, lo, hi, kind, log}] as
// --search-space values.
func (d *decoder) searchSpace(path string, v *yaml.Node) []string {
	if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
		d.errorf(v, path, "expected a list of {path, lo, hi, kind}, got %s", d.describe(v))
		return nil
	}
	var out []string
	for i, dim := range v.Content {
		at := fmt.Sprintf("%s[%d]", path, i)
		if dim = deref(dim); !d.mapping(dim, at) {
			continue
		}
		var p, kind string
		var lo, hi float64
		var log bool
		d.fields(dim, at, []field{
			{keys("path"), into(d.str, &p)},
			{keys("lo"), into(d.float, &lo)},
			{keys("hi"), into(d.float, &hi)},
			{keys("kind"), into(func(p string, n *yaml.Node) (string, bool) { return d.enum(p, n, "int", "real") }, &kind)},
			{keys("log"), into(d.bool, &log)},
		})
		if p == "" {
			d.errorf(dim, at, "path is required (e.g. concurrency)")
			continue
		}
		spec := p + ":" + strconv.FormatFloat(lo, 'g', -1, 64) + "," + strconv.FormatFloat(hi, 'g', -1, 64)
		if kind == "" && log {
			kind = "real"
		}
		if kind != "" {
			spec += ":" + kind
		}
		if log {
			spec += ":log"
		}
		out = append(out, spec)
	}
	return out
}

// objectives reads objectives: one {metric, stat, direction}; several
// (a Pareto search) are not supported yet.
func (d *decoder) objectives(path string, v *yaml.Node, s *Search) {
	switch {
	case v.Kind != yaml.SequenceNode || len(v.Content) == 0:
		d.errorf(v, path, "expected a list of {metric, stat, direction}, got %s", d.describe(v))
		return
	case len(v.Content) > 1:
		d.errorf(v, path, "several objectives (a multi-objective Pareto search) are not supported yet: give one")
		return
	}
	o := deref(v.Content[0])
	at := path + "[0]"
	if !d.mapping(o, at) {
		return
	}
	d.fields(o, at, []field{
		{keys("metric"), into(d.str, &s.Metric)},
		{keys("stat"), into(d.str, &s.Stat)},
		{keys("direction"), into(func(p string, n *yaml.Node) (string, bool) {
			return d.enum(p, n, "maximize", "minimize")
		}, &s.Direction)},
		{keys("threshold"), d.notYet("an objective's threshold (a Pareto reference point)", "")},
	})
}

// slaFilters reads sla_filters: [{metric, stat, op, threshold}] as
// --search-sla values.
func (d *decoder) slaFilters(path string, v *yaml.Node) []string {
	if v.Kind != yaml.SequenceNode {
		d.errorf(v, path, "expected a list of {metric, stat, op, threshold}, got %s", d.describe(v))
		return nil
	}
	var out []string
	for i, f := range v.Content {
		at := fmt.Sprintf("%s[%d]", path, i)
		if f = deref(f); !d.mapping(f, at) {
			continue
		}
		var metric, stat, op string
		var thr float64
		d.fields(f, at, []field{
			{keys("metric"), into(d.str, &metric)},
			{keys("stat"), into(d.str, &stat)},
			{keys("op"), func(p string, n *yaml.Node) {
				if s, ok := d.str(p, n); ok {
					if op = filterOps[s]; op == "" {
						d.errorf(n, p, "expected lt | le | gt | ge (or < <= > >=), got %q", s)
					}
				}
			}},
			{keys("threshold"), into(d.float, &thr)},
		})
		out = append(out, strings.Join([]string{metric, stat, op, strconv.FormatFloat(thr, 'g', -1, 64)}, ":"))
	}
	return out
}

// convergence reads multi_run.convergence: a search's probes' criterion
// (ci_width or cv: a search reads no per-request records), or without an
// adaptive_search sweep each cell's (distribution too).
func (d *decoder) convergence(path string, v *yaml.Node) {
	if !d.mapping(v, path) {
		return
	}
	modes := []string{"ci_width", "cv"}
	if d.f.Search == nil {
		modes = append(modes, "distribution")
	}
	c := &Convergence{}
	d.fields(v, path, []field{
		{keys("metric"), into(d.str, &c.Metric)},
		{keys("stat"), into(d.str, &c.Stat)},
		{keys("mode"), into(func(p string, n *yaml.Node) (string, bool) { return d.enum(p, n, modes...) }, &c.Mode)},
		{keys("threshold"), func(p string, n *yaml.Node) {
			if x, ok := d.float(p, n); ok {
				c.Threshold = &x
			}
		}},
		{keys("min_runs"), d.notYetUnless("3", "a min_runs other than 3", "")},
	})
	if d.f.Search == nil {
		d.f.MultiRun.Convergence = c
		return
	}
	d.f.Search.Convergence = c
}
