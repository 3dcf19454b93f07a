package config

import (
	"errors"
	"maps"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// varRef is a {{ expression }} in a scalar.
var varRef = regexp.MustCompile(`\{\{\s*(.*?)\s*\}\}`)

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// word is a name inside an expression.
var word = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// templates are the variables: section, resolved: each variable's node
// (its {{ }} references rendered) and, for a scalar, its value; for a list
// or object, its count of values. A variable that failed (reported) is in
// failed, and what refers to it is not rendered nor reported again.
type templates struct {
	nodes  map[string]*yaml.Node
	values map[string]value
	sizes  map[string]int
	failed map[string]*yaml.Node
	names  []string      // the variables declared, sorted
	budget *renderBudget // the file's, shared by its variations
	spent  bool          // the budget's end was reported in this render
	long   bool          // a value over maxRenderedBytes was reported in this render
}

// resolveVariables renders the variables: mapping (which may refer to
// each other, in any order) and returns them. Each is rendered once, after
// those it refers to; one that refers to itself through others is
// reported.
func (d *decoder) resolveVariables(vars *yaml.Node) *templates {
	t := &templates{nodes: map[string]*yaml.Node{}, values: map[string]value{}, sizes: map[string]int{},
		failed: map[string]*yaml.Node{}, budget: d.body.rendered}
	if vars == nil || !d.mapping(vars, "variables") {
		return t
	}
	pending, order := d.declared(vars)
	t.names = slices.Sorted(maps.Keys(pending))
	waiting := map[string]int{}    // how many variables each waits for
	users := map[string][]string{} // the variables that wait for each
	var ready []string
	for _, name := range order {
		for r := range references(pending[name], pending) {
			waiting[name]++
			users[r] = append(users[r], name)
		}
		if waiting[name] == 0 {
			ready = append(ready, name)
		}
	}
	for len(ready) > 0 {
		name := ready[0]
		ready = ready[1:]
		d.resolveVariable(name, pending[name], t)
		delete(pending, name)
		for _, u := range users[name] {
			if waiting[u]--; waiting[u] == 0 {
				ready = append(ready, u)
			}
		}
	}
	for _, name := range order { // left: in a cycle, or waiting for one
		if n, ok := pending[name]; ok {
			d.errorf(n, "variables."+name, "refers to itself through other variables: give one of them a value")
			t.failed[name] = n
		}
	}
	return t
}

// declared reads the variables' names, in order, and their values,
// refusing a name that is not one or is given twice.
func (d *decoder) declared(vars *yaml.Node) (map[string]*yaml.Node, []string) {
	pending := map[string]*yaml.Node{}
	keyAt := map[string]*yaml.Node{} // each name's key, to refuse it twice
	var order []string
	for i := 0; i+1 < len(vars.Content); i += 2 {
		k, v := vars.Content[i], deref(vars.Content[i+1])
		if !identifier.MatchString(k.Value) {
			d.errorf(k, "variables", "%q is not a variable name: use letters, digits and _", k.Value)
			continue
		}
		if first, dup := keyAt[k.Value]; dup {
			d.errorf(k, "variables."+k.Value, "repeats key %q of line %d", first.Value, first.Line)
			continue
		}
		keyAt[k.Value] = k
		pending[k.Value], order = v, append(order, k.Value)
	}
	return pending, order
}

// references are the variables of vars that a {{ }} in n names, each once.
func references(n *yaml.Node, vars map[string]*yaml.Node) map[string]bool {
	refs := map[string]bool{}
	eachScalar(n, "", func(n *yaml.Node, _ string) {
		for _, m := range varRef.FindAllStringSubmatch(n.Value, -1) {
			for _, w := range word.FindAllString(m[1], -1) {
				if _, ok := vars[w]; ok {
					refs[w] = true
				}
			}
		}
	})
	return refs
}

// resolveVariable renders the variable name, whose references are all
// resolved, into t. One that failed, or refers to one that did, is
// recorded as failed: what refers to it is not reported again.
func (d *decoder) resolveVariable(name string, n *yaml.Node, t *templates) {
	sub := &decoder{file: d.file, origin: d.origin}
	failed := refersTo(n, t.failed)
	sub.render(n, "variables."+name, t)
	d.errs = append(d.errs, sub.errs...)
	t.nodes[name], t.values[name] = n, nil // nil: not a number or a string
	if n.Kind != yaml.ScalarNode {
		t.sizes[name] = countValues(n).n
		if t.sizes[name] > maxValues && len(sub.errs) == 0 && !failed {
			d.errorf(n, "variables."+name, "holds more than %d values once its {{ }} are rendered, the most a config "+
				"file may hold: refer to list and object variables fewer times", maxValues)
			failed = true
		}
	}
	if len(sub.errs) > 0 || failed {
		t.failed[name] = n
	} else if n.Kind == yaml.ScalarNode {
		t.values[name] = scalarExprValue(n)
	}
}

// refersTo reports whether a {{ }} in n names one of pending.
func refersTo(n *yaml.Node, pending map[string]*yaml.Node) bool {
	if n.Kind != yaml.ScalarNode {
		return slices.ContainsFunc(n.Content, func(c *yaml.Node) bool { return refersTo(deref(c), pending) })
	}
	for _, m := range varRef.FindAllStringSubmatch(n.Value, -1) {
		if mentions(m[1], pending) {
			return true
		}
	}
	return false
}

// mentions reports whether the expression expr names one of names.
func mentions(expr string, names map[string]*yaml.Node) bool {
	for _, w := range word.FindAllString(expr, -1) {
		if _, ok := names[w]; ok {
			return true
		}
	}
	return false
}

// scalarExprValue is a scalar as an expression operand: a number when it
// reads as one, else its text.
func scalarExprValue(n *yaml.Node) value {
	if n.ShortTag() == tagInt || n.ShortTag() == tagFloat || n.Tag == "" && n.Style == 0 {
		if v, err := parseNumber(n.Value); err == nil {
			return v
		}
	}
	return n.Value
}

// render replaces every {{ expression }} in the scalars under n (not in
// keys) with its value over t. A scalar that is only one expression takes
// its value's type: a number stays a number, and a bare {{ name }} of a
// list or object variable becomes that list or object. Text around an
// expression makes the scalar a string.
func (d *decoder) render(n *yaml.Node, path string, t *templates) {
	eachScalar(n, path, func(n *yaml.Node, path string) {
		if strings.Contains(n.Value, "{{") {
			d.renderScalar(n, path, t)
		}
	})
}

func (d *decoder) renderScalar(n *yaml.Node, path string, t *templates) {
	if !t.charge(0, 0) {
		d.overBudget(n, path, t)
		return
	}
	whole := varRef.FindStringSubmatch(n.Value)
	if whole == nil || whole[0] != strings.TrimSpace(n.Value) {
		d.renderText(n, path, t)
		return
	}
	expr := whole[1]
	if v, ok := t.nodes[expr]; ok && v.Kind != yaml.ScalarNode && t.failed[expr] == nil {
		if !t.charge(0, t.sizes[expr]) {
			d.overBudget(n, path, t)
			return
		}
		*n = *clone(v, d.origin)
		return
	}
	v, ok := d.eval(n, path, expr, t)
	if !ok {
		return
	}
	s := show(v)
	if !t.charge(len(s), 0) {
		d.overBudget(n, path, t)
		return
	}
	n.Value = s
	n.Tag, n.Style = "", 0 // re-typed from its text: "8" is an int, "3.0" a float
	if _, ok := v.(string); ok {
		n.Tag = tagStr
	}
	d.origin[n] = originTemplate
}

// eval evaluates expr, a {{ }} of n, over t. It fails, reporting why, on an
// error, and without a word when expr names a variable that failed
// (reported at the variable).
func (d *decoder) eval(n *yaml.Node, path, expr string, t *templates) (value, bool) {
	if mentions(expr, t.failed) {
		d.origin[n] = originFailed
		return nil, false
	}
	v, err := evalExpr(expr, t.values)
	if err != nil {
		d.exprError(n, path, expr, err, t)
		return nil, false
	}
	return v, true
}

func (d *decoder) exprError(n *yaml.Node, path, expr string, err error, t *templates) {
	d.origin[n] = originFailed // reported: not decoded again
	var undef *undefinedError
	if errors.As(err, &undef) {
		names := t.names
		hint := " (there are none: define it under variables:)"
		if s := plan.Suggest(undef.name, names); s != "" {
			hint = s
		} else if len(names) > 0 {
			hint = " (defined: " + strings.Join(names, ", ") + ")"
		}
		d.errorf(n, pathOr(path), "{{ %s }}: %v%s", expr, err, hint)
		return
	}
	d.errorf(n, pathOr(path), "{{ %s }}: %v", expr, err)
}
