package config

import (
	"errors"
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
// (its {{ }} references rendered) and, for a scalar, its value.
type templates struct {
	nodes  map[string]*yaml.Node
	values map[string]value
}

// resolveVariables renders the variables: mapping (which may refer to
// each other, in any order) and returns them. A variable that refers to
// itself through others is reported.
func (d *decoder) resolveVariables(vars *yaml.Node) *templates {
	t := &templates{nodes: map[string]*yaml.Node{}, values: map[string]value{}}
	if vars == nil || !d.mapping(vars, "variables") {
		return t
	}
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
	for len(pending) > 0 {
		progress := false
		for _, name := range order {
			n, ok := pending[name]
			if !ok || refersTo(n, pending) {
				continue
			}
			delete(pending, name)
			progress = true
			sub := &decoder{file: d.file, origin: d.origin}
			sub.render(n, "variables."+name, t)
			d.errs = append(d.errs, sub.errs...)
			t.nodes[name], t.values[name] = n, nil // nil: not a number or a string
			if n.Kind == yaml.ScalarNode && len(sub.errs) == 0 {
				t.values[name] = scalarExprValue(n)
			}
		}
		if !progress {
			for _, name := range order {
				if n, ok := pending[name]; ok {
					d.errorf(n, "variables."+name, "refers to itself through other variables: give one of them a value")
					delete(pending, name)
				}
			}
		}
	}
	return t
}

// refersTo reports whether a {{ }} in n names one of pending.
func refersTo(n *yaml.Node, pending map[string]*yaml.Node) bool {
	if n.Kind != yaml.ScalarNode {
		return slices.ContainsFunc(n.Content, func(c *yaml.Node) bool { return refersTo(deref(c), pending) })
	}
	for _, m := range varRef.FindAllStringSubmatch(n.Value, -1) {
		for _, w := range word.FindAllString(m[1], -1) {
			if _, ok := pending[w]; ok {
				return true
			}
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
	whole := varRef.FindStringSubmatch(n.Value)
	if whole != nil && whole[0] == strings.TrimSpace(n.Value) {
		if v, ok := t.nodes[whole[1]]; ok && v.Kind != yaml.ScalarNode {
			*n = *clone(v, d.origin)
			return
		}
		v, err := evalExpr(whole[1], t.values)
		if err != nil {
			d.exprError(n, path, whole[1], err, t)
			return
		}
		n.Value = show(v)
		n.Tag, n.Style = "", 0 // re-typed from its text: "8" is an int, "3.0" a float
		if _, ok := v.(string); ok {
			n.Tag = tagStr
		}
		d.origin[n] = originTemplate
		return
	}
	n.Value = varRef.ReplaceAllStringFunc(n.Value, func(ref string) string {
		expr := varRef.FindStringSubmatch(ref)[1]
		v, err := evalExpr(expr, t.values)
		if err != nil {
			d.exprError(n, path, expr, err, t)
			return ref
		}
		return show(v)
	})
	n.Tag, n.Style = tagStr, yaml.DoubleQuotedStyle
	if d.origin[n] != originFailed {
		d.origin[n] = originTemplate
	}
}

func (d *decoder) exprError(n *yaml.Node, path, expr string, err error, t *templates) {
	d.origin[n] = originFailed // reported: not decoded again
	var undef *undefinedError
	if errors.As(err, &undef) {
		names := make([]string, 0, len(t.nodes))
		for name := range t.nodes {
			names = append(names, name)
		}
		slices.Sort(names)
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
