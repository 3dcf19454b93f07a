package starlark

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"path/filepath"
	"strings"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/search"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// searchDecl is one search() call: the search as declared, its planner
// function when it has one (bound after the script has run).
type searchDecl struct {
	pos    syntax.Position
	search plan.Search
	fn     starlark.Callable
}

// plannerNames maps search()'s planner names (AIPerf's --search-planner
// values and max-concurrency-under-sla's styles) to the built-in planners.
var plannerNames = map[string]string{
	"monotonic": search.PlannerMonotonic, search.PlannerMonotonic: search.PlannerMonotonic,
	search.PlannerSmoothIsotonic: search.PlannerSmoothIsotonic,
	"bo":                         search.PlannerBayesian, search.PlannerBayesian: search.PlannerBayesian,
	search.PlannerGrid: search.PlannerGrid,
}

// searchArgs are search()'s arguments.
type searchArgs struct {
	name                        string
	base                        starlark.Value
	space                       starlark.Value
	sla, stats, grid            *starlark.List
	objective, direction        string
	planner                     starlark.Value
	maxIterations, initialPts   starlark.Value // None: the planner's default
	seed                        starlark.Value // None: 0
	trials, maxReplicates       int
	confidence, cooldownSeconds starlark.Value
}

// searchBuiltin implements search(name, base, space, sla, objective,
// direction, planner, max_iterations, initial_points, seed, trials,
// max_replicates, confidence, grid, stats, cooldown_seconds): it checks its
// arguments and records the search; Load binds its planner function and
// asks it for the first point once the script has run.
func searchBuiltin(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	a := searchArgs{direction: string(search.Maximize), trials: 1, confidence: starlark.Float(0.95),
		cooldownSeconds: starlark.MakeInt(0)}
	if err := starlark.UnpackArgs(b.Name(), args, kwargs,
		"name", &a.name, "base", &a.base, "space", &a.space, "sla?", &a.sla, "objective?", &a.objective,
		"direction?", &a.direction, "planner?", &a.planner, "max_iterations?", &a.maxIterations,
		"initial_points?", &a.initialPts, "seed?", &a.seed, "trials?", &a.trials, "max_replicates?", &a.maxReplicates,
		"confidence?", &a.confidence, "grid?", &a.grid, "stats?", &a.stats, "cooldown_seconds?", &a.cooldownSeconds); err != nil {
		return nil, err
	}
	fail := func(format string, x ...any) error { return fmt.Errorf("search: "+format, x...) }
	st := thread.Local(stateKey).(*declared)
	if st.closed {
		return nil, fail("searches are declared by the script itself, not from inside a function Load calls")
	}
	pos := callerPos(thread)
	if err := checkName(a.name); err != nil {
		return nil, fail("name %w", err)
	}
	if prev, ok := st.byName[a.name]; ok {
		return nil, fail("name %q is already used by the sweep or search at %s", a.name, prev.pos)
	}
	d, err := a.declare(pos)
	if err != nil {
		return nil, fail("%w", err)
	}
	srch, err := d.search.New()
	if d.fn != nil {
		srch, err = search.NewWith(d.search.Config, nopPlanner{})
	}
	if err != nil {
		return nil, fail("%q: %w", a.name, err)
	}
	c := srch.Config()
	per := max(c.Trials.Max, c.Trials.Min)
	if err := st.admit(big.NewInt(int64(c.MaxIterations)), fmt.Sprintf("a search of at most %d probes", c.MaxIterations), per); err != nil {
		return nil, fail("%w", err)
	}
	st.searches = append(st.searches, d)
	st.byName[a.name] = &declaration{name: a.name, pos: pos}
	return starlark.None, nil
}

// declare checks the arguments and builds the search.
func (a *searchArgs) declare(pos syntax.Position) (*searchDecl, error) {
	pv, ok := a.base.(*profileValue)
	if !ok {
		return nil, fmt.Errorf("base: want a profile (from profile()), got %s", a.base.Type())
	}
	space, err := parseSpace(a.space)
	if err != nil {
		return nil, err
	}
	filters, err := stringsOf("sla", a.sla, search.ParseFilter)
	if err != nil {
		return nil, err
	}
	extra, err := stringsOf("stats", a.stats, func(s string) (string, error) {
		if m, st, ok := strings.Cut(s, "."); !ok || m == "" || st == "" {
			return "", fmt.Errorf("%q is not metric.stat, e.g. request_latency.p99", s)
		}
		return s, nil
	})
	if err != nil {
		return nil, err
	}
	conf, ok := starlark.AsFloat(a.confidence)
	if !ok {
		return nil, fmt.Errorf("confidence: want float, got %s", a.confidence.Type())
	}
	cool, ok := starlark.AsFloat(a.cooldownSeconds)
	if !ok {
		return nil, fmt.Errorf("cooldown_seconds: want a number ≥ 0, got %s", shown(a.cooldownSeconds))
	}
	var bad *plan.FieldError
	if errors.As(plan.CheckSeconds("cooldown_seconds", cool, true), &bad) { // finite, 0 to one year, as sweep()'s
		return nil, fmt.Errorf("cooldown_seconds %s", bad.Msg)
	}
	if a.trials < 1 {
		return nil, fmt.Errorf("trials must be at least 1, got %d", a.trials)
	}
	budget, err := a.budget()
	if err != nil {
		return nil, err
	}
	c := search.Config{Space: space, Filters: filters, Extra: extra,
		Trials: search.TrialRule{Min: a.trials, Max: max(a.maxReplicates, a.trials), Confidence: conf}}
	budget.Apply(&c)
	if a.maxReplicates != 0 && a.maxReplicates < a.trials {
		return nil, fmt.Errorf("max_replicates %d is below trials %d, the trials every probe runs", a.maxReplicates, a.trials)
	}
	if a.objective != "" {
		m, st, ok := strings.Cut(a.objective, ".")
		if !ok {
			return nil, fmt.Errorf("objective %q is not metric.stat, e.g. output_token_throughput.avg", a.objective)
		}
		c.Objective = search.Objective{Metric: m, Stat: st, Direction: search.Direction(a.direction)}
	}
	d := &searchDecl{pos: pos}
	switch p := a.planner.(type) {
	case nil, starlark.NoneType:
		c.Planner = search.PlannerBayesian
		if len(space) == 1 && len(filters) > 0 {
			c.Planner = search.PlannerMonotonic
		}
	case starlark.String:
		name, ok := plannerNames[string(p)]
		if !ok {
			return nil, fmt.Errorf("planner %q: use monotonic, smooth_isotonic, bo (bayesian), grid, or a function of the history", string(p))
		}
		c.Planner = name
	case starlark.Callable:
		d.fn = p
		c.Planner = "starlark:" + p.Name()
	default:
		return nil, fmt.Errorf("planner: want a name or a function, got %s", a.planner.Type())
	}
	if a.grid != nil {
		if c.Planner != search.PlannerGrid {
			return nil, fmt.Errorf("grid lists the points of planner = \"grid\", not of %s", c.Planner)
		}
		if c.Grid, err = gridPoints(space, a.grid); err != nil {
			return nil, err
		}
	}
	d.search = plan.Search{Name: a.name, Base: pv.p, Config: c, CooldownSeconds: cool,
		Source: fmt.Sprintf("%s:%d", pos.Filename(), pos.Line)}
	return d, nil
}

// budget reads max_iterations, initial_points and seed (None: not given)
// and checks them by the command line's rule (search.Budget).
func (a *searchArgs) budget() (search.Budget, error) {
	var b search.Budget
	for _, k := range []struct {
		name string
		v    starlark.Value
		set  func(int64)
	}{
		{"max_iterations", a.maxIterations, func(n int64) { b.MaxIterations = ptrTo(int(n)) }},
		{"initial_points", a.initialPts, func(n int64) { b.InitialPoints = ptrTo(int(n)) }},
		{"seed", a.seed, func(n int64) { b.Seed = &n }},
	} {
		if k.v == nil || k.v == starlark.None {
			continue
		}
		var n int64
		if err := starlark.AsInt(k.v, &n); err != nil {
			return b, fmt.Errorf("%s: %w", k.name, err)
		}
		k.set(n)
	}
	return b, b.Check(search.BudgetArguments)
}

func ptrTo[T any](v T) *T { return &v }

// parseSpace reads space: a dict of option → [lo, hi] (an int parameter
// when both bounds are ints), or a list of AIPerf's --search-space strings
// ("concurrency:1,1000:int:log").
func parseSpace(v starlark.Value) (search.Space, error) {
	var specs []string
	switch x := v.(type) {
	case *starlark.Dict:
		for _, kv := range x.Items() {
			key, ok := starlark.AsString(kv[0])
			if !ok {
				return nil, fmt.Errorf("space: keys must be option names, got %s", kv[0].Type())
			}
			seq, ok := kv[1].(starlark.Indexable)
			if !ok || seq.Len() != 2 {
				return nil, fmt.Errorf("space: %s: want [lo, hi], got %s", key, shown(kv[1]))
			}
			kind := search.KindInt
			var bounds [2]string
			for i := range 2 {
				switch b := seq.Index(i).(type) {
				case starlark.Int:
					bounds[i] = b.String()
				case starlark.Float:
					bounds[i], kind = b.String(), search.KindReal
				default:
					return nil, fmt.Errorf("space: %s: bounds must be numbers, got %s", key, b.Type())
				}
			}
			specs = append(specs, fmt.Sprintf("%s:%s,%s:%s", key, bounds[0], bounds[1], kind))
		}
	case *starlark.List:
		var err error
		if specs, err = stringsOf("space", x, func(s string) (string, error) { return s, nil }); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("space: want a dict of option → [lo, hi] or a list of \"PATH:LO,HI[:int|real[:log]]\", got %s", v.Type())
	}
	var space search.Space
	for _, spec := range specs {
		p, err := search.ParseParam(spec)
		if err != nil {
			return nil, fmt.Errorf("space: %w", err)
		}
		o, err := lookupOption(p.Name)
		if err != nil {
			return nil, fmt.Errorf("space: %w", err)
		}
		p.Name = o.Name
		space = append(space, p)
	}
	if err := space.Validate(); err != nil {
		return nil, fmt.Errorf("space: %w", err)
	}
	return space, nil
}

// stringsOf parses every string of list (nil: none) with parse.
func stringsOf[T any](what string, list *starlark.List, parse func(string) (T, error)) ([]T, error) {
	if list == nil {
		return nil, nil
	}
	out := make([]T, 0, list.Len())
	for i := range list.Len() {
		s, ok := starlark.AsString(list.Index(i))
		if !ok {
			return nil, fmt.Errorf("%s[%d]: want a string, got %s", what, i, list.Index(i).Type())
		}
		v, err := parse(s)
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", what, i, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// gridPoints reads grid: a list of dicts of the space's options.
func gridPoints(space search.Space, list *starlark.List) ([]search.Point, error) {
	out := make([]search.Point, 0, list.Len())
	for i := range list.Len() {
		pt, err := pointOf(space, list.Index(i))
		if err != nil {
			return nil, fmt.Errorf("grid[%d]: %w", i, err)
		}
		out = append(out, pt)
	}
	return out, nil
}

// pointOf reads a point: a dict with a number for every parameter of the
// space, keyed by option name (or alias) or AIPerf's path.
func pointOf(space search.Space, v starlark.Value) (search.Point, error) {
	d, ok := v.(*starlark.Dict)
	if !ok {
		return nil, fmt.Errorf("want a dict of %s, got %s", paramNames(space), v.Type())
	}
	pt := make(search.Point, len(space))
	set := make([]string, len(space)) // the key that gave each parameter
	for _, kv := range d.Items() {
		key, ok := starlark.AsString(kv[0])
		if !ok {
			return nil, fmt.Errorf("keys must be option names, got %s", kv[0].Type())
		}
		i := paramIndex(space, key)
		if i < 0 {
			return nil, fmt.Errorf("%s is not a searched parameter (the space is %s)", key, paramNames(space))
		}
		if set[i] != "" { // by its name and by an alias or path: one of the values would be dropped
			return nil, fmt.Errorf("%s and %s name one parameter, %s: give it once", set[i], key, space[i].Name)
		}
		x, ok := starlark.AsFloat(kv[1])
		if !ok {
			return nil, fmt.Errorf("%s: want a number, got %s", key, kv[1].Type())
		}
		pt[i], set[i] = x, key
	}
	for i, p := range space {
		if set[i] == "" {
			return nil, fmt.Errorf("%s is missing (the space is %s)", p.Name, paramNames(space))
		}
	}
	return pt, nil
}

// paramIndex finds a parameter by option name or alias, or by AIPerf's
// path or its last part (rate for phases.profiling.rate); -1: none.
func paramIndex(space search.Space, key string) int {
	name := key
	if o, err := lookupOption(key); err == nil {
		name = o.Name
	}
	for i, p := range space {
		if p.Name == name || p.Path == key || (p.Path != "" && p.Path[strings.LastIndex(p.Path, ".")+1:] == key) {
			return i
		}
	}
	return -1
}

func paramNames(space search.Space) string {
	names := make([]string, len(space))
	for i, p := range space {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

// nopPlanner stands in for a planner function while search() checks the
// config: it is never asked for a point.
type nopPlanner struct{}

func (nopPlanner) Next([]search.Observation) search.Decision { return search.Decision{Stop: true} }

// bind finishes a declared search once the script has run: its planner
// function bound to the script's limits, an input file named relative to
// the script made absolute (as for a sweep's cells), its probe profiles
// checked, and its planner asked for the first point, so that a search
// that cannot start is refused before any traffic.
func (d *searchDecl) bind(ctx context.Context, l *loader) (plan.Search, error) {
	s := d.search
	at := func(err error) error {
		var se *Error
		if errors.As(err, &se) {
			return err
		}
		return &Error{Pos: d.pos.String(), Msg: fmt.Sprintf("search %q: %v", s.Name, err)}
	}
	if s.Base.InputFile != "" && !filepath.IsAbs(s.Base.InputFile) {
		if dir, err := filepath.Abs(filepath.Dir(d.pos.Filename())); err == nil {
			s.Base.InputFile = filepath.Join(dir, s.Base.InputFile)
		}
	}
	s.Base.WaitForAll()
	if d.fn != nil {
		srch, err := search.NewWith(s.Config, nopPlanner{})
		if err != nil {
			return s, at(err)
		}
		s.Planner = &planner{search: s.Name, fn: d.fn, space: s.Config.Space, keys: srch.Config().Keys(),
			maxSteps: l.maxSteps, out: l.out, ctx: ctx, state: l.state, guard: l.guard}
		s.PlannerDigest = hex.EncodeToString(l.sources.Sum(nil))
	}
	if err := s.Check(); err != nil {
		var errs []error
		for _, fe := range plan.FieldErrors(err) {
			errs = append(errs, at(fe))
		}
		if len(errs) == 0 {
			errs = append(errs, at(err))
		}
		return s, errors.Join(errs...)
	}
	srch, err := s.New()
	if err != nil {
		return s, at(err)
	}
	step, err := srch.Next(search.History{})
	if err != nil {
		return s, at(err)
	}
	if step.Stop {
		return s, at(fmt.Errorf("the planner proposes no first point (%s): a search needs one", step.Why))
	}
	return s, nil
}
