package config

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// Bounds on rendering {{ }}. Variables that repeat each other ("{{ a }}{{
// a }}", [ "{{ a }}", "{{ a }}" ]) double at each step, so forty of them
// would render to terabytes: each variable is rendered once, and what the
// renders build is bounded, one value and in all.
const (
	// maxRenderedBytes bounds one rendered scalar: a config file's own
	// size, which any text written out in the file fits.
	maxRenderedBytes = MaxFileBytes
	// maxRenderedTotal bounds the text rendering a file puts in its
	// values, its sweep's variations included.
	maxRenderedTotal = 64 << 20
	// maxRenderedValues bounds the values copied in by {{ name }} of list
	// and object variables, the variations included (as variations bounds
	// their bodies' values).
	maxRenderedValues = maxValues * 10
)

// renderBudget is what the renders of a file (its variations included)
// have built so far.
type renderBudget struct {
	bytes, values int
}

// charge counts bytes of text and values built, reporting whether they fit
// the file's budget.
func (t *templates) charge(bytes, values int) bool {
	t.budget.bytes += bytes
	t.budget.values += values
	return t.budget.bytes <= maxRenderedTotal && t.budget.values <= maxRenderedValues
}

// overBudget reports, once per render of a file or variation, that its
// budget is spent; the scalar is left unrendered.
func (d *decoder) overBudget(n *yaml.Node, path string, t *templates) {
	d.origin[n] = originFailed
	if t.spent {
		return
	}
	t.spent = true
	d.errorf(n, pathOr(path), "rendering {{ }} builds more than %d MiB of text or %d values in all (a sweep's "+
		"variations included), the most a config may build: refer to long or large variables fewer times, or sweep fewer values",
		maxRenderedTotal>>20, maxRenderedValues)
}

// renderText renders a scalar holding text around its expressions (or
// several of them) as a string, stopping once it would pass
// maxRenderedBytes.
func (d *decoder) renderText(n *yaml.Node, path string, t *templates) {
	var b strings.Builder
	fits := true
	write := func(s string) {
		if fits = fits && b.Len()+len(s) <= maxRenderedBytes; fits {
			b.WriteString(s)
		}
	}
	last := 0
	for _, m := range varRef.FindAllStringSubmatchIndex(n.Value, -1) {
		piece := n.Value[m[0]:m[1]]
		if v, ok := d.eval(n, path, n.Value[m[2]:m[3]], t); ok {
			piece = show(v)
		}
		write(n.Value[last:m[0]])
		write(piece)
		if !fits {
			break
		}
		last = m[1]
	}
	if write(n.Value[last:]); !fits {
		d.tooLong(n, path, t)
		return
	}
	if !t.charge(b.Len(), 0) {
		d.overBudget(n, path, t)
		return
	}
	n.Value = b.String()
	n.Tag, n.Style = tagStr, yaml.DoubleQuotedStyle
	if d.origin[n] != originFailed {
		d.origin[n] = originTemplate
	}
}

// tooLong reports, once per render of a file or variation, a value that
// would render to more than maxRenderedBytes; the scalar is left
// unrendered, its text counted as built.
func (d *decoder) tooLong(n *yaml.Node, path string, t *templates) {
	d.origin[n] = originFailed
	if !t.charge(maxRenderedBytes, 0) {
		d.overBudget(n, path, t)
		return
	}
	if t.long {
		return
	}
	t.long = true
	d.errorf(n, pathOr(path), "its {{ }} expressions render more than %d MiB of text, the most one value may hold (a config "+
		"file's size): put long text in a file the config names (prompts and datasets go there), "+
		"or repeat variables fewer times", maxRenderedBytes>>20)
}
