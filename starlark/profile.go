package starlark

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aiperf-go/aiperf/internal/plan"
	"go.starlark.net/starlark"
)

// profileValue is the immutable Starlark value profile() returns.
type profileValue struct {
	p   plan.Profile
	set []string // options given explicitly, in first-given order, for String
}

var _ starlark.HasAttrs = (*profileValue)(nil)

// profileBuiltin implements profile(**options).
func profileBuiltin(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) > 0 {
		return nil, fmt.Errorf("%s: options are keyword arguments, e.g. %s(concurrency = 8)", b.Name(), b.Name())
	}
	return (&profileValue{p: plan.NewProfile()}).with(th, b.Name(), kwargs)
}

// replaceMethod implements p.replace(**options).
func replaceMethod(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) > 0 {
		return nil, fmt.Errorf("replace: options are keyword arguments, e.g. base.replace(concurrency = 8)")
	}
	return b.Receiver().(*profileValue).with(th, "replace", kwargs)
}

// with returns a copy of pv with the keyword arguments applied. Option.Set
// replaces slices rather than mutating them, so the shallow copy is safe.
// The copy's secrets are recorded, for print() and errors to redact.
func (pv *profileValue) with(th *starlark.Thread, fn string, kwargs []starlark.Tuple) (*profileValue, error) {
	out := &profileValue{p: pv.p, set: slices.Clone(pv.set)}
	for _, kv := range kwargs {
		name := string(kv[0].(starlark.String))
		o, err := setOption(&out.p, name, kv[1])
		if err != nil {
			addSecrets(th, out.p) // those given before: the error must not show them either
			return nil, fmt.Errorf("%s: %w", fn, err)
		}
		if !slices.Contains(out.set, o.Name) {
			out.set = append(out.set, o.Name)
		}
	}
	addSecrets(th, out.p)
	return out, nil
}

// String renders the explicitly set options, secrets redacted.
func (pv *profileValue) String() string {
	shown := pv.p.Redacted()
	var b strings.Builder
	b.WriteString("profile(")
	for i, name := range pv.set {
		if i > 0 {
			b.WriteString(", ")
		}
		o, _ := lookupOption(name)
		fmt.Fprintf(&b, "%s = %s", name, toStarlark(o.Get(&shown)))
	}
	b.WriteString(")")
	return b.String()
}

// Type is "profile".
func (pv *profileValue) Type() string { return "profile" }

// Freeze does nothing: a profile is immutable.
func (pv *profileValue) Freeze() {}

// Truth is always true.
func (pv *profileValue) Truth() starlark.Bool { return starlark.True }

// Hash fails: profiles are not dict keys.
func (pv *profileValue) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: profile") }

// Attr returns an option's value, or the replace method. Secrets read
// back as plan.Redacted, as String shows them (p.api_key is "<redacted>";
// a secret header's value, a URL's credentials and secret query
// parameters too): a script that reads one cannot put it into a sweep's
// name, a cell's label, a directory, the store or a message. p.replace()
// keeps them.
func (pv *profileValue) Attr(name string) (starlark.Value, error) {
	if name == "replace" {
		return starlark.NewBuiltin("replace", replaceMethod).BindReceiver(pv), nil
	}
	o, err := lookupOption(name)
	if err != nil {
		return nil, nil // the interpreter reports it, with a spelling hint
	}
	shown := pv.p.Redacted()
	return toStarlark(o.Get(&shown)), nil
}

// AttrNames lists every option and replace.
func (pv *profileValue) AttrNames() []string {
	names := []string{"replace"}
	for _, o := range plan.Options() {
		names = append(names, o.Name)
	}
	slices.Sort(names)
	return names
}
