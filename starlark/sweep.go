package starlark

import (
	"errors"
	"fmt"
	"strings"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/search"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// stateKey is the thread-local slot holding the sweeps declared so far.
const stateKey = "aiperf.sweeps"

// declared is the thread-local record of sweep() calls, in call order.
type declared struct {
	sweeps   []*declaration
	searches []*searchDecl
	byName   map[string]*declaration // sweeps and searches
	closed   bool                    // the script has run; skip functions may not declare sweeps
	// maxTrials bounds the trials of all sweeps, counted as they are
	// declared; trials is the count so far.
	maxTrials, trials int
}

// declaration is one sweep() call, checked but not yet expanded.
type declaration struct {
	name      string
	pos       syntax.Position
	base      plan.Profile
	mode      string // "matrix", "zip", "scenarios" or "" (the base alone)
	axes      []axis // matrix and zip
	scenarios []scenario
	trials    int
	cooldown  float64
	skip      starlark.Callable
	sameSeed  bool
	converge  *search.Convergence // convergence = {...}: each cell stops adding trials once it holds
}

// axis is one swept option of a matrix or zip, its values normalised by
// Option.Get so that equal values hash and print alike.
type axis struct {
	name   string
	values []any
}

type scenario struct {
	name   string
	params []plan.Param
}

// sweepBuiltin implements sweep(name, base, matrix, zip, scenarios, trials,
// cooldown_seconds, skip, same_seed): it checks its arguments and records a
// declaration; Load expands it after the script has run.
func sweepBuiltin(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var (
		name        string
		base        starlark.Value
		matrix, zip *starlark.Dict
		scenarios   *starlark.List
		trials                     = 1
		cooldown    starlark.Value = starlark.MakeInt(0)
		skip        starlark.Callable
		sameSeed    bool
		converge    *starlark.Dict
	)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs,
		"name", &name, "base", &base, "matrix??", &matrix, "zip??", &zip, "scenarios??", &scenarios,
		"trials?", &trials, "cooldown_seconds?", &cooldown, "skip??", &skip, "same_seed?", &sameSeed,
		"convergence??", &converge); err != nil {
		return nil, err
	}
	fail := func(format string, a ...any) error { return fmt.Errorf("sweep: "+format, a...) }

	st := thread.Local(stateKey).(*declared)
	if st.closed {
		return nil, fail("sweeps are declared by the script itself, not from inside skip")
	}
	pos := callerPos(thread)
	if err := checkName(name); err != nil {
		return nil, fail("name %w", err)
	}
	if prev, ok := st.byName[name]; ok {
		return nil, fail("name %q is already used by the sweep at %s", name, prev.pos)
	}
	pv, ok := base.(*profileValue)
	if !ok {
		return nil, fail("base: want a profile (from profile()), got %s", base.Type())
	}
	if trials < 1 {
		return nil, fail("trials must be at least 1, got %d", trials)
	}
	cool, ok := starlark.AsFloat(cooldown)
	if !ok {
		return nil, fail("cooldown_seconds: want float, got %s", cooldown.Type())
	}
	var bad *plan.FieldError
	if errors.As(plan.CheckSeconds("cooldown_seconds", cool, true), &bad) {
		return nil, fail("cooldown_seconds %s", bad.Msg)
	}

	d := &declaration{name: name, pos: pos, base: pv.p, trials: trials, cooldown: cool, skip: skip, sameSeed: sameSeed}
	var err error
	if d.converge, err = parseConvergence(converge, d); err != nil {
		return nil, fail("%w", err)
	}
	given := 0
	for _, set := range []bool{matrix != nil, zip != nil, scenarios != nil} {
		if set {
			given++
		}
	}
	if given > 1 {
		return nil, fail("give at most one of matrix, zip and scenarios")
	}
	cells, how := size(matrix, zip, scenarios)
	if err := st.admit(cells, how, trials); err != nil {
		return nil, fail("%w", err)
	}
	switch {
	case matrix != nil:
		d.mode = "matrix"
		d.axes, err = d.parseAxes("matrix", matrix)
	case zip != nil:
		d.mode = "zip"
		if d.axes, err = d.parseAxes("zip", zip); err == nil {
			err = sameLengths(d.axes)
		}
	case scenarios != nil:
		d.mode = "scenarios"
		d.scenarios, err = d.parseScenarios(scenarios)
	}
	if err != nil {
		return nil, fail("%w", err)
	}
	st.sweeps = append(st.sweeps, d)
	st.byName[name] = d
	return starlark.None, nil
}

// parseAxes checks a matrix or zip dict: option names as keys, non-empty
// sequences of valid values.
func (d *declaration) parseAxes(mode string, dict *starlark.Dict) ([]axis, error) {
	if dict.Len() == 0 {
		return nil, fmt.Errorf("%s is empty: give at least one option and its values", mode)
	}
	var axes []axis
	seen := map[string]string{}
	for _, kv := range dict.Items() {
		key, ok := starlark.AsString(kv[0])
		if !ok {
			return nil, fmt.Errorf("%s: keys must be option names, got %s", mode, kv[0].Type())
		}
		seq, ok := kv[1].(starlark.Sequence)
		if _, isMap := kv[1].(starlark.Mapping); !ok || isMap {
			return nil, fmt.Errorf("%s: %s: want a list of values, got %s", mode, key, kv[1].Type())
		}
		if seq.Len() == 0 {
			return nil, fmt.Errorf("%s: %s has no values", mode, key)
		}
		ax := axis{}
		iter := seq.Iterate()
		var v starlark.Value
		for iter.Next(&v) {
			p, err := d.param(key, v)
			if err != nil {
				iter.Done()
				return nil, fmt.Errorf("%s: %w", mode, err)
			}
			ax.name = p.Name
			ax.values = append(ax.values, p.Value)
		}
		iter.Done()
		if other, dup := seen[ax.name]; dup {
			return nil, fmt.Errorf("%s: %s and %s set the same option", mode, other, key)
		}
		seen[ax.name] = key
		axes = append(axes, ax)
	}
	return axes, nil
}

// sameLengths checks that every zip axis has as many values as the first.
func sameLengths(axes []axis) error {
	for _, a := range axes[1:] {
		if len(a.values) != len(axes[0].values) {
			parts := make([]string, len(axes))
			for i, b := range axes {
				parts[i] = fmt.Sprintf("%s has %d", b.name, len(b.values))
			}
			return fmt.Errorf("zip: lists must have equal lengths: %s", strings.Join(parts, ", "))
		}
	}
	return nil
}

// parseScenarios checks a list of {"name": ..., option: value, ...} dicts.
func (d *declaration) parseScenarios(list *starlark.List) ([]scenario, error) {
	if list.Len() == 0 {
		return nil, fmt.Errorf("scenarios is empty: give at least one")
	}
	var out []scenario
	names := map[string]bool{}
	for i := range list.Len() {
		at := fmt.Sprintf("scenarios[%d]", i)
		dict, ok := list.Index(i).(*starlark.Dict)
		if !ok {
			return nil, fmt.Errorf("%s: want a dict, got %s", at, list.Index(i).Type())
		}
		nv, found, _ := dict.Get(starlark.String("name"))
		if !found {
			return nil, fmt.Errorf("%s: \"name\" is required (it labels the cell)", at)
		}
		name, ok := starlark.AsString(nv)
		if !ok {
			return nil, fmt.Errorf("%s: name: want string, got %s", at, nv.Type())
		}
		if err := checkName(name); err != nil {
			return nil, fmt.Errorf("%s: name %w", at, err)
		}
		if names[name] {
			return nil, fmt.Errorf("%s: name %q is used twice", at, name)
		}
		names[name] = true
		sc := scenario{name: name}
		for _, kv := range dict.Items() {
			key, ok := starlark.AsString(kv[0])
			if !ok {
				return nil, fmt.Errorf("%s (%s): keys must be option names, got %s", at, name, kv[0].Type())
			}
			if key == "name" {
				continue
			}
			p, err := d.param(key, kv[1])
			if err != nil {
				return nil, fmt.Errorf("%s (%s): %w", at, name, err)
			}
			sc.params = append(sc.params, p)
		}
		out = append(out, sc)
	}
	return out, nil
}

// param checks one option value against the base and returns it in its
// normalised Go form under the option's canonical name.
func (d *declaration) param(name string, v starlark.Value) (plan.Param, error) {
	scratch := d.base
	o, err := setOption(&scratch, name, v)
	if err != nil {
		return plan.Param{}, err
	}
	return plan.Param{Name: o.Name, Value: o.Get(&scratch)}, nil
}

// checkName accepts names that are a single directory segment.
func checkName(s string) error {
	if s == "" {
		return fmt.Errorf("must not be empty")
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return fmt.Errorf("%q may only use letters, digits, '.', '_' and '-'", s)
		}
	}
	if s == "." || s == ".." {
		return fmt.Errorf("%q is not a usable directory name", s)
	}
	return nil
}
