package starlark

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aiperf-go/aiperf/internal/plan"
	"go.starlark.net/starlark"
)

// point is one cell of a declaration before skip: its parameters and, for a
// scenario, its name.
type point struct {
	params []plan.Param
	label  string
}

// points expands the declaration: matrix in itertools.product order (first
// key outermost), zip element-wise, scenarios in order, or the base alone.
func (d *declaration) points() []point {
	switch d.mode {
	case "matrix":
		total := 1
		for _, a := range d.axes {
			total *= len(a.values)
		}
		out := make([]point, total)
		for k := range out {
			params := make([]plan.Param, len(d.axes))
			rest := k
			for j := len(d.axes) - 1; j >= 0; j-- {
				n := len(d.axes[j].values)
				params[j] = plan.Param{Name: d.axes[j].name, Value: d.axes[j].values[rest%n]}
				rest /= n
			}
			out[k].params = params
		}
		return out
	case "zip":
		out := make([]point, len(d.axes[0].values))
		for k := range out {
			for _, a := range d.axes {
				out[k].params = append(out[k].params, plan.Param{Name: a.name, Value: a.values[k]})
			}
		}
		return out
	case "scenarios":
		out := make([]point, len(d.scenarios))
		for k, s := range d.scenarios {
			out[k] = point{params: s.params, label: plan.DirName(s.name)}
		}
		return out
	}
	return []point{{label: "base"}}
}

// labelled expands the declaration and labels every point, skipped or not,
// so a cell's label does not depend on skip.
func (d *declaration) labelled() []point {
	pts := d.points()
	if d.mode == "matrix" || d.mode == "zip" {
		params := make([][]plan.Param, len(pts))
		for k := range pts {
			params[k] = pts[k].params
		}
		for k, l := range plan.CellLabels(params) {
			pts[k].label = l
		}
	}
	return pts
}

// size counts the cells that sweep()'s matrix, zip or scenarios declare,
// before skip, and says how they multiply. It looks only at the lengths of
// the lists, so a runaway matrix is refused before a single value is
// checked or expanded.
func size(matrix, zip *starlark.Dict, scenarios *starlark.List) (*big.Int, string) {
	length := func(v starlark.Value) int {
		if seq, ok := v.(starlark.Sequence); ok {
			return seq.Len()
		}
		return 1 // not a list: parseAxes says so
	}
	name := func(k starlark.Value) string {
		if s, ok := starlark.AsString(k); ok {
			return s
		}
		return shown(k)
	}
	switch {
	case matrix != nil:
		n := big.NewInt(1)
		var parts []string
		for _, kv := range matrix.Items() {
			n.Mul(n, big.NewInt(int64(length(kv[1]))))
			parts = append(parts, fmt.Sprintf("%s (%d)", name(kv[0]), length(kv[1])))
		}
		return n, fmt.Sprintf("matrix %s = %s cells", strings.Join(parts, " × "), n)
	case zip != nil && zip.Len() > 0:
		n := length(zip.Items()[0][1]) // unequal lengths: parseAxes says so
		return big.NewInt(int64(n)), fmt.Sprintf("zip of %d cells", n)
	case scenarios != nil:
		return big.NewInt(int64(scenarios.Len())), fmt.Sprintf("%d scenarios", scenarios.Len())
	}
	return big.NewInt(1), "1 cell"
}

// admit counts a sweep's trials against the plan's limit before its cells
// are expanded, so a runaway matrix or trials value fails fast.
func (st *declared) admit(cells *big.Int, how string, trials int) error {
	n := new(big.Int).Mul(cells, big.NewInt(int64(trials)))
	total := new(big.Int).Add(n, big.NewInt(int64(st.trials)))
	limit := big.NewInt(int64(st.maxTrials))
	const fix = "sweep fewer values or trials, or raise the limit with --max-trials N"
	per := "1 trial"
	if trials != 1 {
		per = fmt.Sprintf("%d trials", trials)
	}
	switch {
	case n.Cmp(limit) > 0:
		return fmt.Errorf("the plan is too large: %s × %s = %s trials, over the limit of %d; %s", how, per, n, st.maxTrials, fix)
	case total.Cmp(limit) > 0:
		return fmt.Errorf("the plan is too large: this sweep's %s trials (%s × %s) bring the script's total to %s, over the limit of %d; %s",
			n, how, per, total, st.maxTrials, fix)
	}
	st.trials = int(total.Int64())
	return nil
}

// expand turns a declaration into a plan.Sweep: it applies the parameters,
// seeds and skip, then validates every cell. It reports every problem it
// finds rather than stopping at the first.
func (d *declaration) expand(l *loader) (plan.Sweep, []error) {
	sw := plan.Sweep{
		Name:            d.name,
		Trials:          d.trials,
		CooldownSeconds: d.cooldown,
		Source:          fmt.Sprintf("%s:%d", d.pos.Filename(), d.pos.Line),
		Convergence:     d.converge,
	}
	at := func(format string, a ...any) error {
		return &Error{Pos: d.pos.String(), Msg: fmt.Sprintf("sweep %q", d.name) + fmt.Sprintf(format, a...)}
	}
	byID := map[string]string{}
	byLabel := map[string]string{} // folded label → label: one directory on case-insensitive file systems
	for k, pt := range d.labelled() {
		if k%cancelEvery == 0 && l.ctx != nil && l.ctx.Err() != nil {
			return sw, []error{l.ctx.Err()} // LoadScript says the load was interrupted
		}
		p := d.base
		for _, prm := range pt.params {
			if prm.Secret(d.base.RedactParam) {
				return sw, []error{at(": %s cannot be swept: its value is a secret and would be written into cell "+
					"labels, artifact paths and the store; set it on the base profile (one sweep per credential)", prm.Name)}
			}
			o, _ := lookupOption(prm.Name)
			if err := o.Set(&p, prm.Value); err != nil { // checked by sweep(); cannot happen
				return sw, []error{at(": %s: %v", prm.Name, err)}
			}
		}
		if p.InputFile != "" && !filepath.IsAbs(p.InputFile) {
			// A script names its data relative to itself, as load() does;
			// the trial runs wherever the sweep was started.
			if dir, err := filepath.Abs(filepath.Dir(d.pos.Filename())); err == nil {
				p.InputFile = filepath.Join(dir, p.InputFile)
			}
		}
		if !d.sameSeed && !slices.ContainsFunc(pt.params, func(p plan.Param) bool { return p.Name == "random_seed" }) {
			p.RandomSeed = d.base.RandomSeed + int64(k)
		}
		label := pt.label
		if d.skip != nil {
			drop, err := callSkip(l.thread, d.skip, &cellValue{params: pt.params, label: label, profile: p})
			if err != nil {
				err = l.scriptError(err)
				var se *Error
				if errors.As(err, &se) {
					se.Msg = fmt.Sprintf("sweep %q: skip(cell %s): %s", d.name, label, se.Msg)
				}
				return sw, []error{err}
			}
			if drop {
				continue
			}
		}
		id := plan.CellID(d.name, pt.params)
		switch {
		case byID[id] == label:
			return sw, []error{at(": cell %s appears twice", label)}
		case byID[id] != "":
			return sw, []error{at(": cells %s and %s have the same parameters", byID[id], label)}
		case byLabel[strings.ToLower(label)] == label:
			return sw, []error{at(": two different cells are labelled %s", label)}
		case byLabel[strings.ToLower(label)] != "":
			return sw, []error{at(": cells %s and %s differ only in letter case: they would share a directory "+
				"on a case-insensitive file system; rename one", byLabel[strings.ToLower(label)], label)}
		}
		byID[id], byLabel[strings.ToLower(label)] = label, label
		sw.Cells = append(sw.Cells, plan.Cell{ID: id, Label: label, Index: len(sw.Cells), Params: pt.params, Profile: p})
	}
	if len(sw.Cells) == 0 {
		return sw, []error{at(": skip dropped every cell")}
	}
	if err := sw.CheckConvergence(); err != nil {
		return sw, []error{at(": convergence: %v", err)}
	}
	return sw, d.validate(l.ctx, sw.Cells, at)
}

// cancelEvery is how many cells expanding or validating a sweep handles
// between looks at the load's context.
const cancelEvery = 256

// validate runs Profile.Check on every cell. A problem every cell shares
// (a missing model, say) is reported once for the sweep.
func (d *declaration) validate(ctx context.Context, cells []plan.Cell, at func(string, ...any) error) []error {
	perCell := make([][]string, len(cells))
	count := map[string]int{}
	for i := range cells {
		if i%cancelEvery == 0 && ctx != nil && ctx.Err() != nil {
			return []error{ctx.Err()}
		}
		for _, fe := range plan.FieldErrors(cells[i].Profile.Check()) {
			perCell[i] = append(perCell[i], fe.Error())
			count[fe.Error()]++
		}
	}
	var errs []error
	reported := map[string]bool{}
	for i, msgs := range perCell {
		for _, m := range msgs {
			switch {
			case len(cells) > 1 && count[m] == len(cells):
				if !reported[m] {
					reported[m] = true
					errs = append(errs, at(" (every cell): %s", m))
				}
			default:
				errs = append(errs, at(" cell %s: %s", cells[i].Label, m))
			}
		}
	}
	return errs
}

// callSkip calls the sweep's skip function on one cell.
func callSkip(thread *starlark.Thread, fn starlark.Callable, cell *cellValue) (bool, error) {
	v, err := starlark.Call(thread, fn, starlark.Tuple{cell}, nil)
	if err != nil {
		return false, err
	}
	return bool(v.Truth()), nil
}

// cellValue is what skip receives: the cell's swept parameters as
// attributes and keys, plus label and profile.
type cellValue struct {
	params  []plan.Param
	label   string
	profile plan.Profile
}

var (
	_ starlark.HasAttrs = (*cellValue)(nil)
	_ starlark.Mapping  = (*cellValue)(nil)
)

// String renders the parameters, e.g. cell(concurrency = 4).
func (c *cellValue) String() string {
	s := "cell("
	for i, p := range c.params {
		if i > 0 {
			s += ", "
		}
		s += p.Name + " = " + toStarlark(p.Value).String()
	}
	return s + ")"
}

// Type is "cell".
func (c *cellValue) Type() string { return "cell" }

// Freeze does nothing: a cell is immutable.
func (c *cellValue) Freeze() {}

// Truth is always true.
func (c *cellValue) Truth() starlark.Bool { return starlark.True }

// Hash fails: cells are not dict keys.
func (c *cellValue) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: cell") }

// Attr returns a parameter, the label or the cell's full profile.
func (c *cellValue) Attr(name string) (starlark.Value, error) {
	switch name {
	case "label":
		return starlark.String(c.label), nil
	case "profile":
		return &profileValue{p: c.profile}, nil
	}
	if v, ok := c.param(name); ok {
		return v, nil
	}
	return nil, nil
}

// AttrNames lists the parameters, label and profile.
func (c *cellValue) AttrNames() []string {
	names := []string{"label", "profile"}
	for _, p := range c.params {
		names = append(names, p.Name)
	}
	return names
}

// Get implements cell["option"] and "option" in cell.
func (c *cellValue) Get(k starlark.Value) (starlark.Value, bool, error) {
	name, ok := starlark.AsString(k)
	if !ok {
		return nil, false, fmt.Errorf("cell keys are option names, got %s", k.Type())
	}
	v, found := c.param(name)
	return v, found, nil
}

// param looks a parameter up by option name or alias.
func (c *cellValue) param(name string) (starlark.Value, bool) {
	if o, err := lookupOption(name); err == nil {
		name = o.Name
	}
	for _, p := range c.params {
		if p.Name == name {
			return toStarlark(p.Value), true
		}
	}
	return nil, false
}
