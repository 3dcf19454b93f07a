package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/aiperf-go/aiperf/internal/search"
)

// Search is a declared adaptive search (`aiperf profile --search-recipe` or
// --search-space, a script's search()): a planner proposes points of
// Config.Space one at a time, and each probe is a cell of Base with its
// point's options set, run as trials of the sweep runner.
type Search struct {
	Name string
	// Base is every probe's profile before its point is applied, a recipe's
	// fixed options included (see ApplyOptions).
	Base   Profile
	Config search.Config
	// Recipe is the expanded recipe, for its post-process (nil: none).
	Recipe *search.Recipe
	// Planner is a custom planner (a script's function); nil runs
	// Config.Planner's built-in one. PlannerDigest identifies its code (the
	// files it was loaded from) in Digest.
	Planner       search.Planner
	PlannerDigest string
	// CooldownSeconds is the pause between consecutive trials.
	CooldownSeconds float64
	// Source is where the search was declared (file:line), for messages.
	Source string
}

// New builds the search's planner under its config.
func (s Search) New() (*search.Search, error) {
	if s.Planner != nil {
		return search.NewWith(s.Config, s.Planner)
	}
	return search.New(s.Config)
}

// Params are a point's values as the options a probe sets, in the space's
// order: an int64 for an int parameter, a float64 for a real one.
func (s Search) Params(pt search.Point) []Param {
	vals := s.Config.Space.Values(pt)
	out := make([]Param, len(s.Config.Space))
	for i, p := range s.Config.Space {
		out[i] = Param{Name: p.Name, Value: vals[p.Name]}
	}
	return out
}

// Cell is probe number probe (from 0) at point pt: Base with the point's
// options set. Its id hashes the search's name, the point and the probe
// number, so two probes at one point are two cells; its label is AIPerf's
// iteration directory and the point, search_iter_0003__concurrency_16.
func (s Search) Cell(probe int, pt search.Point) (Cell, error) {
	params := s.Params(pt)
	p := s.Base
	for _, prm := range params {
		o, ok := LookupOption(prm.Name)
		if !ok {
			return Cell{}, fmt.Errorf("search %q: %s is not a profile option", s.Name, prm.Name)
		}
		q := p
		if err := o.Set(&q, prm.Value); err != nil {
			return Cell{}, fmt.Errorf("search %q: %s: %w", s.Name, prm.Name, err)
		}
		// As a command-line flag over a config file: the option, and its
		// listed profiling phase when the base lists its phases.
		if err := p.Overlay(&q, []string{o.Name}); err != nil {
			return Cell{}, fmt.Errorf("search %q: %w", s.Name, err)
		}
	}
	iter := fmt.Sprintf("search_iter_%04d", probe)
	return Cell{
		ID:      CellID(s.Name, append(slices.Clone(params), Param{Name: "search_iter", Value: probe})),
		Label:   DirName(iter + "__" + CellLabel(params)),
		Index:   probe,
		Params:  params,
		Profile: p,
	}, nil
}

// Check refuses a search that cannot run, before any traffic: a searched
// parameter that is not a numeric profile option, and a probe profile that
// is invalid at the corners of the space (every parameter at its lower
// bound, then at its upper one). Profile problems are *FieldError values
// naming the corner.
func (s Search) Check() error {
	for _, p := range s.Config.Space {
		o, ok := LookupOption(p.Name)
		if !ok {
			return fmt.Errorf("search %q: --search-space %s: not a profile option; search concurrency, request_rate, "+
				"isl (synthetic_input_tokens_mean), osl (output_tokens_mean) or another numeric option", s.Name, p.Key())
		}
		if tn := o.TypeName(); tn != "int" && tn != "float" {
			return fmt.Errorf("search %q: --search-space %s: the option is a %s; only numeric options can be searched", s.Name, p.Key(), tn)
		}
		if p.Kind == search.KindReal && o.TypeName() == "int" {
			return fmt.Errorf("search %q: --search-space %s: the option takes whole numbers: give the kind int (%s:%g,%g:int)",
				s.Name, p.Key(), p.Key(), p.Lo, p.Hi)
		}
	}
	cells, err := s.Corners()
	if err != nil {
		return err
	}
	var errs []error
	for i, c := range cells {
		corner := [2]string{"lower", "upper"}[i]
		c.Profile.WaitForAll()
		for _, fe := range FieldErrors(c.Profile.Check()) {
			errs = append(errs, &FieldError{Field: fe.Field, Msg: fmt.Sprintf("%s (in the search's probe with every parameter at its %s bound: %s)",
				fe.Msg, corner, CellLabel(c.Params))})
		}
	}
	return joinUnique(errs)
}

// Corners are the probes at the corners of the space: every parameter at
// its lower bound, then every one at its upper bound.
func (s Search) Corners() ([]Cell, error) {
	out := make([]Cell, 2)
	for k := range out {
		pt := make(search.Point, len(s.Config.Space))
		for i, p := range s.Config.Space {
			pt[i] = [2]float64{p.Lo, p.Hi}[k]
		}
		c, err := s.Cell(0, pt)
		if err != nil {
			return nil, err
		}
		out[k] = c
	}
	return out, nil
}

// joinUnique joins errs, each message once.
func joinUnique(errs []error) error {
	seen := map[string]bool{}
	var out []error
	for _, e := range errs {
		if !seen[e.Error()] {
			seen[e.Error()] = true
			out = append(out, e)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return errors.Join(out...)
}

// ApplyOptions sets the named options on p, in name order (a recipe's
// fixed options: concurrency 1 for prefill-ttft-curve, goodput for
// max-goodput-under-slo).
func ApplyOptions(p *Profile, opts map[string]any) error {
	names := make([]string, 0, len(opts))
	for k := range opts {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		o, ok := LookupOption(name)
		if !ok {
			return fmt.Errorf("%s is not a profile option", name)
		}
		if err := o.Set(p, opts[name]); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// Digest identifies what a search runs: a SHA-256 over its name, its
// redacted base profile (its integrations left out, as a sweep's: where the
// results are also sent changes no result), its config (space, objective,
// filters, planner, budget, seed, trial rule) and its custom planner's
// code. A search resumed with another digest is another search.
func (s Search) Digest() string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	_ = enc.Encode("search") // writes to a hash never fail
	_ = enc.Encode(s.Name)
	_ = enc.Encode(s.Base.Redacted().WithoutIntegrations())
	_ = enc.Encode(s.Config)
	_ = enc.Encode(s.PlannerDigest)
	return hex.EncodeToString(h.Sum(nil))
}

// Describe is the search in one line: planner, space, filters, objective
// and budget, e.g. `monotonic_sla over concurrency [1, 1000] int; SLA
// time_to_first_token:p99:lt:80; ...`.
func (s Search) Describe() string {
	c := s.Config
	var space []string
	for _, p := range c.Space {
		d := fmt.Sprintf("%s [%g, %g] %s", p.Name, p.Lo, p.Hi, p.Kind)
		if p.Log {
			d += " log"
		}
		space = append(space, d)
	}
	parts := []string{c.Planner + " over " + strings.Join(space, " × ")}
	if c.Recipe != "" {
		parts[0] = "recipe " + c.Recipe + ": " + parts[0]
	}
	if len(c.Filters) > 0 {
		var fs []string
		for _, f := range c.Filters {
			fs = append(fs, f.String())
		}
		parts = append(parts, "SLA "+strings.Join(fs, ", "))
	}
	if c.Objective.Metric != "" {
		parts = append(parts, fmt.Sprintf("objective %s %s", c.Objective.Key(), c.Objective.Direction))
	}
	budget := "probes"
	if c.MaxIterations > 0 {
		budget = fmt.Sprintf("at most %d probes", c.MaxIterations)
	}
	trials := max(c.Trials.Min, 1)
	if c.Trials.Max > trials {
		budget += fmt.Sprintf(" of %d to %d trials", trials, c.Trials.Max)
	} else {
		budget += fmt.Sprintf(" of %d trial(s)", trials)
	}
	parts = append(parts, fmt.Sprintf("%s, seed %d", budget, c.Seed))
	return strings.Join(parts, "; ")
}
