package config

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// Sweep is a file's sweep: section, expanded: a variation per cell.
type Sweep struct {
	Type       string // grid, zip or scenarios
	Variations []Variation
}

// Variation is one cell of a YAML sweep: the parameters that make it (a
// grid or zip's paths and values as written; a scenario's name) and the
// benchmark body with them applied.
type Variation struct {
	Params  []plan.Param
	Profile plan.Profile
}

// MultiRun is a file's multi_run: section (AIPerf's --num-profile-runs in
// YAML); NumRuns 0 when absent.
type MultiRun struct {
	NumRuns         int
	CooldownSeconds float64
	ConfidenceLevel float64
}

// phaseSugar are the bare sweep parameter names that stand for a field of
// the profiling phase (phases.profiling.NAME), as AIPerf accepts them.
var phaseSugar = []string{"concurrency", "prefill_concurrency", "rate", "requests", "duration", "sessions", "users",
	"smoothness", "grace_period", "concurrency_ramp", "prefill_ramp", "rate_ramp"}

// envelope takes the sweep:, multi_run: and variables: keys out of the
// top-level mapping root, so that the rest decodes as one benchmark.
func envelope(root *yaml.Node) (sweep, multiRun, variables *yaml.Node) {
	if root.Kind != yaml.MappingNode {
		return nil, nil, nil
	}
	var kept []*yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch snake(k.Value) {
		case "sweep":
			sweep = v
		case "multi_run":
			multiRun = v
		case "variables":
			variables = v
		default:
			kept = append(kept, k, v)
		}
	}
	root.Content = kept
	return sweep, multiRun, variables
}

// varRef is a {{ ... }} reference; only a bare variable name is supported.
var varRef = regexp.MustCompile(`\{\{\s*(.*?)\s*\}\}`)

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// variables replaces {{ name }} in every scalar of root and sweep with the variables:
// section's values (which may refer to each other). A scalar that is only
// a reference takes the variable's type; one inside text, its text.
func (d *decoder) variables(vars, root, sweep *yaml.Node) {
	values := map[string]*yaml.Node{}
	if vars != nil && d.mapping(vars, "variables") {
		for i := 0; i+1 < len(vars.Content); i += 2 {
			values[vars.Content[i].Value] = deref(vars.Content[i+1])
		}
		for range len(values) { // references between variables, resolved a level a pass
			for _, v := range values {
				d.expand(v, "variables", values)
			}
		}
	}
	d.expand(root, "", values)
	if sweep != nil {
		d.expand(sweep, "sweep", values)
	}
}

func (d *decoder) expand(n *yaml.Node, path string, values map[string]*yaml.Node) {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode, yaml.MappingNode:
		for i, c := range n.Content {
			if n.Kind == yaml.MappingNode && i%2 == 0 {
				continue
			}
			at := path
			if n.Kind == yaml.MappingNode {
				at = join(path, n.Content[i-1].Value)
			}
			d.expand(c, at, values)
		}
	case yaml.ScalarNode:
		if !strings.Contains(n.Value, "{{") {
			return
		}
		if m := varRef.FindStringSubmatch(n.Value); m != nil && m[0] == strings.TrimSpace(n.Value) {
			if v := d.lookupVar(n, path, m[1], values); v != nil && v.Kind == yaml.ScalarNode &&
				!strings.Contains(v.Value, "{{") {
				n.Value, n.Tag, n.Style = v.Value, v.Tag, v.Style
			}
			return
		}
		n.Value = varRef.ReplaceAllStringFunc(n.Value, func(ref string) string {
			if v := d.lookupVar(n, path, varRef.FindStringSubmatch(ref)[1], values); v != nil {
				return v.Value
			}
			return ref
		})
		n.Tag, n.Style = tagStr, yaml.DoubleQuotedStyle
	}
}

func (d *decoder) lookupVar(n *yaml.Node, path, name string, values map[string]*yaml.Node) *yaml.Node {
	switch v, ok := values[name]; {
	case !identifier.MatchString(name):
		d.errorf(n, pathOr(path), "{{ %s }}: only {{ variable }} is supported, not expressions: give the computed value", name)
	case !ok:
		d.errorf(n, pathOr(path), "{{ %s }}: no such variable under variables:", name)
	default:
		return v
	}
	return nil
}

// multiRun reads multi_run:.
func (d *decoder) multiRun(v *yaml.Node) {
	if v == nil || !d.mapping(v, "multi_run") {
		return
	}
	m := &d.f.MultiRun
	d.fields(v, "multi_run", []field{
		{keys("num_runs"), into(d.int, &m.NumRuns)},
		{keys("cooldown_seconds"), into(d.float, &m.CooldownSeconds)},
		{keys("confidence_level"), into(d.float, &m.ConfidenceLevel)},
		{keys("set_consistent_seed"), func(string, *yaml.Node) {}}, // our trials always share the seed
	})
	if m.NumRuns < 1 || m.NumRuns > 10 {
		d.errorf(v, "multi_run.num_runs", "must be between 1 and 10, got %d", m.NumRuns)
	}
}

// point is one variation before decoding: its parameters and how to apply
// them to a copy of the benchmark body.
type point struct {
	params []plan.Param
	apply  func(body *yaml.Node) error
}

// sweepPoints reads sweep: into its variations.
func (d *decoder) sweepPoints(v *yaml.Node) (string, []point) {
	if !d.mapping(v, "sweep") {
		return "", nil
	}
	var typ string
	var params, runs *yaml.Node
	d.fields(v, "sweep", []field{
		{keys("type"), func(path string, n *yaml.Node) { typ, _ = d.enum(path, n, "grid", "zip", "scenarios") }},
		{keys("parameters"), func(_ string, n *yaml.Node) { params = n }},
		{keys("runs"), func(_ string, n *yaml.Node) { runs = n }},
	})
	typ = cmp.Or(typ, "grid")
	if typ == "scenarios" {
		return typ, d.scenarios(runs, v)
	}
	if params == nil || !d.mapping(params, "sweep.parameters") {
		d.errorf(v, "sweep.parameters", "a %s sweep needs parameters: {path: [values]}", typ)
		return typ, nil
	}
	type list struct {
		path   string
		values []*yaml.Node
	}
	var lists []list
	for i := 0; i+1 < len(params.Content); i += 2 {
		k, vals := params.Content[i], deref(params.Content[i+1])
		at := join("sweep.parameters", k.Value)
		if vals.Kind != yaml.SequenceNode || len(vals.Content) == 0 {
			d.errorf(vals, at, "expected a list of values, got %s", d.describe(vals))
			continue
		}
		lists = append(lists, list{k.Value, vals.Content})
	}
	if len(lists) == 0 {
		return typ, nil
	}
	lengths := make([]int, len(lists))
	for i, l := range lists {
		lengths[i] = len(l.values)
		if typ == "zip" && lengths[i] != lengths[0] {
			d.errorf(params, "sweep.parameters", "a zip sweep pairs lists element-wise: %s has %d values, %s has %d",
				lists[0].path, lengths[0], l.path, lengths[i])
			return typ, nil
		}
	}
	combos := plan.Combinations(lengths, typ == "zip") // per point, the index into each list
	points := make([]point, len(combos))
	for i, c := range combos {
		for k, l := range lists {
			val := l.values[c[k]]
			points[i].params = append(points[i].params, plan.Param{Name: l.path, Value: scalarValue(val)})
		}
		points[i].apply = func(body *yaml.Node) error {
			for k, l := range lists {
				if err := setPath(body, l.path, l.values[c[k]]); err != nil {
					return fmt.Errorf("sweep.parameters.%s: %w", l.path, err)
				}
			}
			return nil
		}
	}
	return typ, points
}

// scenarios reads a scenarios sweep's runs: each a benchmark-body overlay,
// deep-merged, named by its name: key or its position.
func (d *decoder) scenarios(runs, v *yaml.Node) []point {
	if runs == nil || deref(runs).Kind != yaml.SequenceNode || len(deref(runs).Content) == 0 {
		d.errorf(v, "sweep.runs", "a scenarios sweep needs runs: a list of benchmark overlays")
		return nil
	}
	var points []point
	for i, run := range deref(runs).Content {
		run = deref(run)
		at := fmt.Sprintf("sweep.runs[%d]", i)
		if !d.mapping(run, at) {
			continue
		}
		name, overlay := fmt.Sprintf("scenario_%d", i+1), &yaml.Node{Kind: yaml.MappingNode, Line: run.Line}
		for j := 0; j+1 < len(run.Content); j += 2 {
			if snake(run.Content[j].Value) == "name" {
				name = run.Content[j+1].Value
				continue
			}
			overlay.Content = append(overlay.Content, run.Content[j], run.Content[j+1])
		}
		points = append(points, point{params: []plan.Param{{Name: "scenario", Value: name}},
			apply: func(body *yaml.Node) error { merge(body, overlay); return nil }})
	}
	return points
}

// merge deep-merges overlay into dst: mappings key by key, anything else
// replaced.
func merge(dst, overlay *yaml.Node) {
	for i := 0; i+1 < len(overlay.Content); i += 2 {
		k, v := overlay.Content[i], overlay.Content[i+1]
		if cur := child(dst, k.Value); cur != nil && cur.Kind == yaml.MappingNode && deref(v).Kind == yaml.MappingNode {
			merge(cur, deref(v))
			continue
		}
		setChild(dst, k.Value, clone(v))
	}
}

// setPath sets the value at a sweep parameter path of the benchmark body:
// a bare phase field (concurrency, rate, ...), phases.SELECTOR.FIELD
// (SELECTOR an index, a phase name, or "profiling" for the one profiling
// phase), datasets.NAME.… for the file's one dataset, or any other dotted
// path of mapping keys.
func setPath(body *yaml.Node, path string, val *yaml.Node) error {
	parts := strings.Split(path, ".")
	if len(parts) == 1 && slices.Contains(phaseSugar, snake(parts[0])) {
		parts = []string{"phases", plan.KindProfiling, parts[0]}
	}
	n := body
	switch snake(parts[0]) {
	case "phases":
		if len(parts) < 3 {
			return fmt.Errorf("want phases.PHASE.FIELD")
		}
		ph, err := phaseNode(child(body, "phases"), parts[1])
		if err != nil {
			return err
		}
		n, parts = ph, parts[2:]
	case "datasets":
		if len(parts) < 3 {
			return fmt.Errorf("want datasets.NAME.FIELD")
		}
		n = child(body, "dataset")
		if ds := child(body, "datasets"); ds != nil && ds.Kind == yaml.SequenceNode && len(ds.Content) == 1 {
			n = deref(ds.Content[0])
		}
		if n == nil {
			return fmt.Errorf("the benchmark has no dataset to set %s on", strings.Join(parts[2:], "."))
		}
		parts = parts[2:]
	}
	for _, p := range parts[:len(parts)-1] {
		next := child(n, p)
		if next == nil {
			next = &yaml.Node{Kind: yaml.MappingNode, Line: n.Line}
			setChild(n, p, next)
		}
		if next.Kind != yaml.MappingNode {
			return fmt.Errorf("%s is not a mapping", p)
		}
		n = next
	}
	setChild(n, parts[len(parts)-1], clone(val))
	return nil
}

// phaseNode picks a phase of the phases: value by index, name, or
// "profiling" for its one profiling phase (a flat mapping is that phase).
func phaseNode(phases *yaml.Node, sel string) (*yaml.Node, error) {
	switch {
	case phases == nil:
		return nil, fmt.Errorf("the benchmark has no phases")
	case phases.Kind == yaml.MappingNode:
		if sel != plan.KindProfiling && sel != "0" {
			return nil, fmt.Errorf("the benchmark has one (profiling) phase, not %q", sel)
		}
		return phases, nil
	}
	if i, err := strconv.Atoi(sel); err == nil {
		if i < 0 || i >= len(phases.Content) {
			return nil, fmt.Errorf("no phase %d (there are %d)", i, len(phases.Content))
		}
		return deref(phases.Content[i]), nil
	}
	var byKind []*yaml.Node
	for _, ph := range phases.Content {
		ph = deref(ph)
		if name := child(ph, "name"); name != nil && name.Value == sel {
			return ph, nil
		}
		if kind := child(ph, "kind"); sel == plan.KindProfiling && kind != nil && kind.Value == plan.KindProfiling {
			byKind = append(byKind, ph)
		}
	}
	if len(byKind) == 1 {
		return byKind[0], nil
	}
	return nil, fmt.Errorf("no phase named %q (or more than one profiling phase)", sel)
}

// child is the value of key (in any spelling) in mapping n, or nil.
func child(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if snake(n.Content[i].Value) == snake(key) {
			return deref(n.Content[i+1])
		}
	}
	return nil
}

// setChild sets key of mapping n to v, adding the key when absent.
func setChild(n *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if snake(n.Content[i].Value) == snake(key) {
			n.Content[i+1] = v
			return
		}
	}
	n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: tagStr, Value: key, Line: v.Line}, v)
}

// clone deep-copies n (aliases followed).
func clone(n *yaml.Node) *yaml.Node {
	n = deref(n)
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, x := range n.Content {
		c.Content[i] = clone(x)
	}
	return &c
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

// variations decodes the benchmark body once per point, on a copy of root
// with the point applied; a variation's problems name it.
func (d *decoder) variations(root *yaml.Node, points []point) []Variation {
	labels := make([][]plan.Param, len(points))
	for i, p := range points {
		labels[i] = p.params
	}
	names := plan.CellLabels(labels)
	out := make([]Variation, 0, len(points))
	for i, p := range points {
		c := clone(root)
		body := child(c, "benchmark")
		if body == nil || body.Kind != yaml.MappingNode {
			d.errorf(root, "benchmark", "a sweep varies the benchmark: body, which is missing")
			return nil
		}
		if err := p.apply(body); err != nil {
			d.errorf(root, "sweep", "variation %s: %v", names[i], err)
			continue
		}
		sub := &decoder{file: d.file, lookupEnv: d.lookupEnv, fromEnv: map[*yaml.Node]bool{}, setAt: map[string]int{}}
		sub.f.Profile = plan.NewProfile()
		sub.fields(c, "", sub.topFields())
		for _, err := range sub.errs {
			if e, ok := err.(*Error); ok {
				e.Msg += " (sweep variation " + names[i] + ")"
			}
			d.errs = append(d.errs, err)
		}
		out = append(out, Variation{Params: p.params, Profile: sub.f.Profile})
	}
	return out
}
