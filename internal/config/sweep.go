package config

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// Sweep is a file's sweep: section, expanded: a variation per cell.
type Sweep struct {
	Type       string // grid, zip or scenarios
	Variations []Variation
	// CooldownSeconds is sweep.cooldown_seconds, the pause between
	// variations (nil when absent).
	CooldownSeconds *float64
	// IterationOrder is sweep.iteration_order: repeated or independent
	// ("" when absent).
	IterationOrder string
	// SameSeed is sweep.same_seed: every variation uses the file's seed
	// (nil when absent: each adds its index).
	SameSeed *bool
}

// Variation is one cell of a YAML sweep: the parameters that make it (a
// grid or zip's paths and values as written; a scenario's name) and the
// benchmark body with them applied.
type Variation struct {
	Params  []plan.Param
	Profile plan.Profile
	// Body is the variation's benchmark: body as read (it may hold secrets).
	Body *yaml.Node
	// Keys is where the file sets each option for this variation (a swept
	// one: at its value in the sweep's list).
	Keys map[string]Key
}

// MultiRun is a file's multi_run: section (AIPerf's --num-profile-runs in
// YAML); NumRuns 0 when absent.
type MultiRun struct {
	NumRuns         int
	CooldownSeconds float64
	ConfidenceLevel float64
	// WarmupFirstTrialOnly is disable_warmup_after_first (AIPerf's default
	// true): trials after the first skip the warmup phases, except those
	// of a cell that resets the KV cache before each trial
	// (plan.Sweep.WarmupFirstTrialOnly).
	WarmupFirstTrialOnly bool
	// VarySeedPerTrial is vary_seed_per_trial: each trial its own seed.
	VarySeedPerTrial bool
	// Convergence is convergence: without an adaptive_search sweep (a
	// search's is Search.Convergence): each cell stops adding trials once
	// it holds, as --convergence-*.
	Convergence *Convergence
}

// envelope is the file's cross-variation keys, taken out of the top
// level so that the rest decodes as one benchmark.
type envelope struct {
	sweep, multiRun, variables *yaml.Node
}

// envelopeKey is one key of the envelope and where takeEnvelope puts it.
type envelopeKey struct {
	name string
	slot func(*envelope) **yaml.Node
}

// envelopeKeys are the envelope's top-level keys, each with its slot: the
// one table takeEnvelope takes them by and topFields lists them from.
var envelopeKeys = []envelopeKey{
	{"sweep", func(e *envelope) **yaml.Node { return &e.sweep }},
	{"multi_run", func(e *envelope) **yaml.Node { return &e.multiRun }},
	{"variables", func(e *envelope) **yaml.Node { return &e.variables }},
}

// takeEnvelope removes the envelopeKeys (sweep:, multi_run:, variables:)
// from root, refusing one given twice (multi_run: and multiRun: too).
func (d *decoder) takeEnvelope(root *yaml.Node) envelope {
	var e envelope
	var kept []*yaml.Node
	seen := map[int]*yaml.Node{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], deref(root.Content[i+1])
		at := slices.IndexFunc(envelopeKeys, func(ek envelopeKey) bool { return ek.name == snake(k.Value) })
		if at < 0 {
			kept = append(kept, root.Content[i], root.Content[i+1])
			continue
		}
		if first, dup := seen[at]; dup {
			d.errorf(k, k.Value, "repeats key %q of line %d", first.Value, first.Line)
			continue
		}
		seen[at] = k
		*envelopeKeys[at].slot(&e) = v
	}
	root.Content = kept
	return e
}

// multiRun reads multi_run:.
func (d *decoder) multiRun(v *yaml.Node) {
	if v == nil || !d.mapping(v, "multi_run") {
		return
	}
	m := &d.f.MultiRun
	m.NumRuns, m.WarmupFirstTrialOnly = 1, true
	var consistent *yaml.Node
	d.fields(v, "multi_run", []field{
		{keys("num_runs"), into(d.int, &m.NumRuns)},
		{keys("cooldown_seconds"), func(path string, n *yaml.Node) {
			if x, ok := d.pause(path, n); ok {
				m.CooldownSeconds = x
			}
		}},
		{keys("confidence_level"), func(path string, n *yaml.Node) {
			// as --confidence-level; 0 is not "unset" when written
			if x, ok := d.float(path, n); ok && (x <= 0 || x >= 1) {
				d.errorf(n, path, "must be between 0 and 1 (exclusive), e.g. 0.95, got %g", x)
			} else if ok {
				m.ConfidenceLevel = x
			}
		}},
		{keys("set_consistent_seed"), func(path string, n *yaml.Node) {
			if on, ok := d.bool(path, n); ok && !on {
				consistent = n
			}
		}},
		{keys("disable_warmup_after_first"), into(d.bool, &m.WarmupFirstTrialOnly)},
		{keys("vary_seed_per_trial"), into(d.bool, &m.VarySeedPerTrial)},
		{keys("convergence"), func(_ string, n *yaml.Node) { d.convergenceNode = n }},
	})
	if m.NumRuns < 1 || m.NumRuns > 10 {
		d.errorf(v, "multi_run.num_runs", "must be between 1 and 10, got %d", m.NumRuns)
	}
	d.multiRunSeed = consistent
}

// point is one variation before decoding: its parameters and how to apply
// them to copies of the benchmark body and the variables.
type point struct {
	params []plan.Param
	at     []nodeAt // where each parameter's value is written
	apply  func(body, vars *yaml.Node, origin map[*yaml.Node]string) error
}

// MaxVariations bounds a file's sweep, before it is expanded: each
// variation is a copy of the body, decoded and checked.
const MaxVariations = 10_000

// sweepTypes are AIPerf's sweep types; those after the first three are
// not supported yet.
var sweepTypes = []string{"grid", "zip", "scenarios", "sobol", "latin_hypercube", "adaptive_search"}

// sweepPoints reads sweep: into its variations.
func (d *decoder) sweepPoints(v *yaml.Node) []point {
	if !d.mapping(v, "sweep") {
		return nil
	}
	var typ string
	var params, runs *yaml.Node
	if t := child(v, "type"); t != nil && t.Kind == yaml.ScalarNode && slices.Index(sweepTypes, t.Value) > 2 {
		if t.Value == "adaptive_search" {
			d.adaptiveSearch(v)
			return nil
		}
		d.errorf(t, "sweep.type", "sweep type %s is not supported yet: use grid, zip, scenarios or adaptive_search", t.Value)
		return nil // its other keys are that type's
	}
	s := &d.sweepOpts
	d.fields(v, "sweep", []field{
		{keys("type"), func(path string, n *yaml.Node) { typ, _ = d.enum(path, n, sweepTypes[:3]...) }},
		{keys("parameters"), func(_ string, n *yaml.Node) { params = n }},
		{keys("runs"), func(_ string, n *yaml.Node) { runs = n }},
		{keys("cooldown_seconds"), func(path string, n *yaml.Node) {
			if x, ok := d.pause(path, n); ok {
				s.CooldownSeconds = &x
			}
		}},
		{keys("iteration_order"), into(func(p string, n *yaml.Node) (string, bool) {
			return d.enum(p, n, plan.OrderRepeated, plan.OrderIndependent)
		}, &s.IterationOrder)},
		{keys("same_seed"), func(path string, n *yaml.Node) {
			if x, ok := d.bool(path, n); ok {
				s.SameSeed = &x
			}
		}},
		{keys("sla_filters"), d.notYet("SLA filters on a sweep", "")},
		{keys("post_process"), d.notYet("a sweep's post-processing", "")},
		{keys("recipe_name"), d.notYet("search recipes", "use aiperf profile --search-recipe NAME")},
	})
	d.sweepType = cmp.Or(typ, "grid")
	switch {
	case d.sweepType == "scenarios":
		return d.scenarios(runs, v)
	case params == nil || !d.mapping(params, d.paramsPath()):
		d.errorf(v, d.paramsPath(), "a %s sweep needs %s: {path: [values]}", d.sweepType, d.paramsPath())
		return nil
	}
	return d.gridPoints(params)
}

// paramsPath names the parameters as the file spells them.
func (d *decoder) paramsPath() string {
	if d.migrated.variables {
		return "sweep.variables"
	}
	return "sweep.parameters"
}

// gridPoints reads a grid or zip sweep's parameters.
func (d *decoder) gridPoints(params *yaml.Node) []point {
	type list struct {
		path   string
		key    *yaml.Node
		values []*yaml.Node
	}
	var lists []list
	seen := map[string]string{}
	for i := 0; i+1 < len(params.Content); i += 2 {
		k, vals := params.Content[i], deref(params.Content[i+1])
		at := join(d.paramsPath(), k.Value)
		if vals.Kind != yaml.SequenceNode {
			d.errorf(vals, at, "expected a list of values, got %s", d.describe(vals))
			continue
		}
		if len(vals.Content) == 0 {
			d.errorf(vals, at, "expected at least one value, got an empty list")
			continue
		}
		if first, dup := seen[canonical(k.Value)]; dup {
			d.errorf(k, at, "is the same parameter as %s: give it once", first)
			continue
		}
		if !d.checkParam(k, vals.Content) {
			continue
		}
		seen[canonical(k.Value)] = k.Value
		lists = append(lists, list{k.Value, k, vals.Content})
	}
	if len(lists) == 0 {
		return nil
	}
	lengths := make([]int, len(lists))
	total := 1
	for i, l := range lists {
		lengths[i] = len(l.values)
		if d.sweepType == "zip" && lengths[i] != lengths[0] {
			d.errorf(params, d.paramsPath(), "a zip sweep pairs lists element-wise: %s has %d values, %s has %d",
				lists[0].path, lengths[0], l.path, lengths[i])
			return nil
		}
		if total = min(total*lengths[i], MaxVariations+1); d.sweepType == "zip" {
			total = lengths[0]
		}
	}
	if total > MaxVariations {
		d.errorf(params, d.paramsPath(), "the grid has more than %d variations: sweep fewer values, or split it into several files", MaxVariations)
		return nil
	}
	combos := plan.Combinations(lengths, d.sweepType == "zip") // per point, the index into each list
	points := make([]point, len(combos))
	variation := map[string]int{} // the parameters of each, as read
	for i, c := range combos {
		for k, l := range lists {
			points[i].params = append(points[i].params, plan.Param{Name: l.path, Value: scalarValue(l.values[c[k]])})
			points[i].at = append(points[i].at, nodeAt{l.values[c[k]], join(d.paramsPath(), l.path)})
		}
		key := fmt.Sprintf("%#v", points[i].params)
		if first, dup := variation[key]; dup {
			d.errorf(params, d.paramsPath(), "variations %d and %d are the same (%s): the same values are listed twice; "+
				"each variation is a cell with a directory of its own, so list them once", first+1, i+1, plan.CellLabel(points[i].params))
			return nil
		}
		variation[key] = i
		points[i].apply = func(body, vars *yaml.Node, origin map[*yaml.Node]string) error {
			for k, l := range lists {
				var err error
				if name, ok := strings.CutPrefix(l.path, "variables."); ok {
					setChild(vars, name, clone(l.values[c[k]], origin))
				} else {
					err = setPath(body, l.path, l.values[c[k]], origin)
				}
				if err != nil {
					return &Error{File: d.file, Line: l.key.Line, Path: join(d.paramsPath(), l.path), Msg: err.Error()}
				}
			}
			return nil
		}
	}
	return points
}

// scenarios reads a scenarios sweep's runs: each {name, benchmark: overlay,
// variables: overlay}, deep-merged, named by its name: or its position.
func (d *decoder) scenarios(runs, v *yaml.Node) []point {
	if runs == nil || runs.Kind != yaml.SequenceNode || len(runs.Content) == 0 {
		d.errorf(v, "sweep.runs", "a scenarios sweep needs runs: a list of {name, benchmark: overlay}")
		return nil
	}
	var points []point
	names := map[string]int{}
	for i, run := range runs.Content {
		run = deref(run)
		at := fmt.Sprintf("sweep.runs[%d]", i)
		if !d.mapping(run, at) {
			continue
		}
		name := fmt.Sprintf("scenario_%d", i+1)
		var overlay, vars *yaml.Node
		d.fields(run, at, []field{
			{keys("name"), into(d.str, &name)},
			{keys("benchmark"), func(path string, n *yaml.Node) {
				if d.mapping(n, path) {
					overlay = n
				}
			}},
			{keys("variables"), func(path string, n *yaml.Node) {
				if d.mapping(n, path) {
					vars = n
				}
			}},
		})
		if first, dup := names[strings.ToLower(name)]; dup {
			d.errorf(run, at, "name %q is used by runs[%d] too (names are compared without case): names label the cells' directories", name, first)
		}
		names[strings.ToLower(name)] = i
		points = append(points, point{params: []plan.Param{{Name: "scenario", Value: name}},
			at: []nodeAt{{cmp.Or(child(run, "name"), run), at + ".name"}},
			apply: func(body, vs *yaml.Node, origin map[*yaml.Node]string) error {
				if vars != nil {
					for j := 0; j+1 < len(vars.Content); j += 2 {
						merge(vs, vars.Content[j].Value, deref(vars.Content[j+1]), origin)
					}
				}
				if overlay == nil {
					return nil
				}
				return mergeBody(body, overlay, origin)
			}})
	}
	return points
}

// scalarValue is a sweep value for labels and the store: a number, bool or
// string as the YAML scalar says, else its YAML text.
func scalarValue(n *yaml.Node) any {
	n = deref(n)
	if n.Kind == yaml.ScalarNode {
		var v any
		if err := n.Decode(&v); err == nil {
			if i, ok := v.(int); ok {
				return int64(i)
			}
			return v
		}
		return n.Value
	}
	b, _ := yaml.Marshal(n)
	return strings.TrimSpace(string(b))
}

// copies are a variation's copies of root, its body and the variables.
func (d *decoder) copies(root, vars *yaml.Node) (c, body, vs *yaml.Node) {
	c, vs = clone(root, d.origin), clone(vars, d.origin)
	if vs == nil {
		vs = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	}
	return c, bodyOf(c), vs
}

// bodyOf is root's benchmark: body, added empty when missing (a snippet
// whose body comes from the command line's flags); nil when not an object.
func bodyOf(root *yaml.Node) *yaml.Node {
	body := child(root, "benchmark")
	if body == nil {
		body = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: root.Line}
		setChild(root, "benchmark", body)
	}
	if body.Kind != yaml.MappingNode {
		return nil
	}
	return body
}

// checkPoints applies each point to a copy of the body, reporting paths
// that do not resolve (once each).
func (d *decoder) checkPoints(root, vars *yaml.Node, points []point) {
	reported := map[string]bool{}
	for _, p := range points {
		_, body, vs := d.copies(root, vars)
		if body == nil {
			return
		}
		var e *Error
		if err := p.apply(body, vs, d.origin); errors.As(err, &e) && !reported[e.Error()] {
			reported[e.Error()] = true
			d.errs = append(d.errs, e)
		}
	}
}

// variations decodes the benchmark body once per point, on copies of root
// and the variables with the point applied; a variation's problems name it
// (a problem every variation has is said once). A sweep whose parameter
// carries a secret is refused, and nothing else said: the labels that name
// variations would show it.
func (d *decoder) variations(root, vars *yaml.Node, points []point) []Variation {
	if size := countValues(root).n + countValues(vars).n; len(points)*size > maxValues*10 {
		d.errorf(root, "sweep", "%d variations of a body of %d values are too many to expand: sweep fewer values", len(points), size)
		return nil
	}
	labels := make([][]plan.Param, len(points))
	for i, p := range points {
		labels[i] = p.params
	}
	names := plan.CellLabels(labels)
	out := make([]Variation, 0, len(points))
	profiles := make([]*plan.Profile, len(points))
	var errs []error
	perVariation := make([][]error, len(points))
	reported := map[string]bool{} // a path that does not resolve fails every variation: said once
	for i, p := range points {
		c, body, vs := d.copies(root, vars)
		if body == nil {
			return nil // not an object: reported
		}
		if err := p.apply(body, vs, d.origin); err != nil {
			var e *Error
			if !errors.As(err, &e) {
				e = &Error{File: d.file, Line: root.Line, Path: "sweep", Msg: fmt.Sprintf("variation %s: %v", names[i], err)}
			}
			if !reported[e.Error()] {
				reported[e.Error()] = true
				errs = append(errs, e)
			}
			continue
		}
		sub := newDecoder(d.file, d.lookupEnv, d.origin)
		sub.body = d.body
		sub.render(c, "", sub.resolveVariables(vs))
		sub.decodeTop(c)
		if sub.f.Runtime != d.f.Runtime {
			sub.errorf(cmp.Or(child(child(c, "benchmark"), "runtime"), root), join(d.bodyPath(), "runtime"),
				"cannot differ between the sweep's variations: its ui and workers are the whole run's; set them once in the body")
		}
		perVariation[i], profiles[i] = sub.errs, &sub.f.Profile
		for _, n := range sub.notes { // what a variation's values alone cause (a swept prefill_ramp), said once
			if !slices.Contains(d.notes, n) {
				d.notes = append(d.notes, n)
			}
		}
		out = append(out, Variation{Params: p.params, Profile: sub.f.Profile, Body: child(c, "benchmark"), Keys: sub.setAt})
	}
	if d.secretVariations(points, profiles) {
		return nil
	}
	d.errs = append(append(d.errs, errs...), variationErrors(perVariation, names)...)
	d.resetWarmupNote(out)
	return out
}

// resetWarmupNote notes, once, that the trials of a multi_run: whose
// variations reset the KV cache all keep their warmup despite
// disable_warmup_after_first (plan.Sweep.ResetKeepsWarmup): only when a
// variation has a warmup to keep.
func (d *decoder) resetWarmupNote(vars []Variation) {
	m := d.f.MultiRun
	sw := plan.Sweep{Trials: m.NumRuns, WarmupFirstTrialOnly: m.WarmupFirstTrialOnly, Cells: make([]plan.Cell, len(vars))}
	for i := range vars {
		sw.Cells[i].Profile = vars[i].Profile
	}
	if sw.ResetKeepsWarmup() {
		d.notes = append(d.notes, plan.ResetKeepsWarmupNote)
	}
}
