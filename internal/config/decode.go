package config

import (
	"cmp"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// YAML core-schema tags, as yaml.Node.ShortTag reports them.
const (
	tagNull  = "!!null"
	tagBool  = "!!bool"
	tagInt   = "!!int"
	tagFloat = "!!float"
	tagStr   = "!!str"
)

// Where a scalar's value came from, when not from the file's text.
const (
	originEnv      = "the environment"
	originTemplate = "a {{ }} expression"
	originFailed   = "a {{ }} expression that failed" // reported already: its key is skipped
)

// decoder walks the YAML tree, filling f and collecting every error.
type decoder struct {
	file      string
	lookupEnv func(string) (string, bool)
	origin    map[*yaml.Node]string // scalars whose value came (partly) from the environment or a template
	setAt     map[string]Key        // option name → where the file set it
	errs      []error
	notes     []string
	f         File
	body      bodyState // shared by the decoders of a file's variations
	migrated  migration // what normalize rewrote
	sweepType string    // grid, zip or scenarios
	sweepOpts Sweep     // sweep:'s settings besides its variations
	// multiRunSeed is multi_run.set_consistent_seed when false.
	multiRunSeed *yaml.Node
	shorthand    int // warmup: and profiling: phases read
	// convergenceNode is multi_run.convergence, read once the sweep says
	// whether the file is a search.
	convergenceNode *yaml.Node
	// datasetName is the one dataset's name, phaseDatasets the phases'
	// dataset: references to it.
	datasetName   string
	phaseDatasets []nodeAt
}

// nodeAt is a value and its path.
type nodeAt struct {
	n    *yaml.Node
	path string
}

// bodyState is what a file's body decoders share.
type bodyState struct {
	flat   bool // the file is in the flat shape: body paths have no benchmark. prefix
	seed42 bool // multi_run's set_consistent_seed: no random_seed means 42, as in AIPerf
	// rendered is what rendering {{ }} has built, the variations included.
	rendered *renderBudget
}

// newDecoder is a decoder of the named file starting from plan.NewProfile().
func newDecoder(file string, lookupEnv func(string) (string, bool), origin map[*yaml.Node]string) *decoder {
	d := &decoder{file: file, lookupEnv: lookupEnv, origin: origin, setAt: map[string]Key{}, datasetName: "default"}
	d.body.rendered = &renderBudget{}
	d.f.Profile = plan.NewProfile()
	return d
}

// note records something the user should know that is not an error.
func (d *decoder) note(n *yaml.Node, path, format string, args ...any) {
	at := fmt.Sprintf("%s:%d", d.file, n.Line)
	if path != "" {
		at += ": " + path
	}
	d.notes = append(d.notes, at+": "+fmt.Sprintf(format, args...))
}

// field is one key a mapping accepts: its snake_case name and aliases, and
// what to do with its value.
type field struct {
	names []string
	apply func(path string, v *yaml.Node)
}

func (d *decoder) errorf(n *yaml.Node, path, format string, args ...any) {
	d.errs = append(d.errs, &Error{File: d.file, Line: n.Line, Path: path, Msg: fmt.Sprintf(format, args...)})
}

// mark records that the file set option, refusing a second setting (e.g.
// random_seed both at the top level and under benchmark).
func (d *decoder) mark(option string, n *yaml.Node, path string) {
	if at, dup := d.setAt[option]; dup {
		d.errorf(n, path, "sets %s again (already set at line %d)", option, at.Line)
		return
	}
	d.setAt[option] = Key{Path: path, Line: n.Line}
}

// fields applies a mapping's keys to the matching fields, reporting unknown
// and repeated keys. Keys may be spelled in camelCase.
func (d *decoder) fields(n *yaml.Node, path string, fs []field) {
	seen := map[int]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), deref(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			d.errorf(k, path, "keys must be plain names, got %s", d.describe(k))
			continue
		}
		at := join(path, k.Value)
		idx := slices.IndexFunc(fs, func(f field) bool { return slices.Contains(f.names, snake(k.Value)) })
		if idx < 0 {
			d.errorf(k, pathOr(path), "unknown key %q%s", k.Value, suggest(snake(k.Value), d.named(path, fs)))
			continue
		}
		if first, dup := seen[idx]; dup {
			d.errorf(k, at, "repeats key %q of line %d", first.Value, first.Line)
			continue
		}
		seen[idx] = k
		if d.origin[v] == originFailed {
			continue
		}
		fs[idx].apply(at, v)
	}
}

// mapping reports whether n is a mapping, recording an error if not.
func (d *decoder) mapping(n *yaml.Node, path string) bool {
	if n.Kind == yaml.MappingNode {
		return true
	}
	d.errorf(n, pathOr(path), "expected an object, got %s", d.describe(n))
	return false
}

// opt is the field handler of a plan.Profile option: it reads the value as
// the option's type, checks it against allowed (when given) and sets it.
func (d *decoder) opt(name string, allowed ...string) func(string, *yaml.Node) {
	o, ok := plan.LookupOption(name)
	if !ok {
		panic("config: unknown plan option " + name)
	}
	return func(path string, n *yaml.Node) {
		var v any
		var ok bool
		switch t := o.Kind; {
		case t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.String:
			v, ok = d.numbers(path, n, t.Elem().Kind() != reflect.Float64)
		case t.Kind() == reflect.Slice:
			v, ok = d.strings(path, n)
		case t == reflect.TypeFor[bool]() || t == reflect.TypeFor[*bool]():
			v, ok = d.bool(path, n)
		case t == reflect.TypeFor[string]():
			v, ok = d.enum(path, n, allowed...)
		case t == reflect.TypeFor[float64]() || t == reflect.TypeFor[*float64]():
			v, ok = d.float(path, n)
		default: // int, *int, int64
			v, ok = d.int(path, n)
		}
		if !ok {
			return
		}
		if err := o.Set(&d.f.Profile, v); err != nil {
			d.errorf(n, path, "%v", err)
			return
		}
		d.mark(name, n, path)
	}
}

// into is the field handler that reads a value with read and stores it in dst.
func into[T any](read func(string, *yaml.Node) (T, bool), dst *T) func(string, *yaml.Node) {
	return func(path string, n *yaml.Node) {
		if v, ok := read(path, n); ok {
			*dst = v
		}
	}
}

// str reads a string. A value substituted from the environment is text
// whatever it looks like, and is tagged so.
func (d *decoder) str(path string, n *yaml.Node) (string, bool) {
	if n.Kind == yaml.ScalarNode && (n.ShortTag() == tagStr || d.origin[n] != "") {
		n.Tag = tagStr // the body, printed, says it is text: ${KEY:} is "", not null
		return n.Value, true
	}
	d.errorf(n, path, "expected string, got %s", d.describe(n))
	return "", false
}

// enum reads a string that must be one of allowed (any string when empty).
func (d *decoder) enum(path string, n *yaml.Node, allowed ...string) (string, bool) {
	s, ok := d.str(path, n)
	if ok && len(allowed) > 0 && !slices.Contains(allowed, s) {
		d.errorf(n, path, "expected %s, got %q", strings.Join(allowed, " | "), s)
		return "", false
	}
	return s, ok
}

func (d *decoder) int(path string, n *yaml.Node) (int, bool) {
	var v int
	if n.Kind != yaml.ScalarNode || n.ShortTag() != tagInt || n.Decode(&v) != nil {
		d.errorf(n, path, "expected int, got %s", d.describe(n))
		return 0, false
	}
	return v, true
}

func (d *decoder) float(path string, n *yaml.Node) (float64, bool) {
	var v float64
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != tagInt && n.ShortTag() != tagFloat) || n.Decode(&v) != nil {
		d.errorf(n, path, "expected number, got %s", d.describe(n))
		return 0, false
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		d.errorf(n, path, "expected a finite number, got %s", d.describe(n))
		return 0, false
	}
	return v, true
}

// pause is seconds bounded as a cooldown: 0 or more and at most a year
// (plan.CheckSeconds, as the cooldown flags are).
func (d *decoder) pause(path string, n *yaml.Node) (float64, bool) {
	x, ok := d.seconds(path, n, false)
	if !ok {
		return 0, false
	}
	if err := plan.CheckSeconds(path, x, true); err != nil {
		msg := err.Error()
		if fe, ok := err.(*plan.FieldError); ok {
			msg = fe.Msg
		}
		d.errorf(n, path, "%s", msg)
		return 0, false
	}
	return x, true
}

func (d *decoder) bool(path string, n *yaml.Node) (bool, bool) {
	var v bool
	if n.Kind != yaml.ScalarNode || n.ShortTag() != tagBool || n.Decode(&v) != nil {
		d.errorf(n, path, "expected false | true, got %s", d.describe(n))
		return false, false
	}
	return v, true
}

// strings reads a string or a list of strings.
func (d *decoder) strings(path string, n *yaml.Node) ([]string, bool) {
	if n.Kind != yaml.SequenceNode {
		s, ok := d.str(path, n)
		return []string{s}, ok
	}
	out := make([]string, 0, len(n.Content))
	for i, item := range n.Content {
		s, ok := d.str(fmt.Sprintf("%s[%d]", path, i), deref(item))
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// numbers reads a number or a list of numbers (integers when integer).
func (d *decoder) numbers(path string, n *yaml.Node, integer bool) ([]any, bool) {
	items := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		items = n.Content
	}
	out := make([]any, 0, len(items))
	for i, item := range items {
		at := path
		if n.Kind == yaml.SequenceNode {
			at = fmt.Sprintf("%s[%d]", path, i)
		}
		var v any
		var ok bool
		if integer {
			v, ok = d.int(at, deref(item))
		} else {
			v, ok = d.float(at, deref(item))
		}
		if !ok {
			return nil, false
		}
		out = append(out, v)
	}
	return out, true
}

// describe names a value's type for "expected X, got Y" messages. Values from
// the environment are not shown: they may be secrets.
func (d *decoder) describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "object"
	case yaml.SequenceNode:
		return "list"
	}
	name := strings.TrimPrefix(n.ShortTag(), "!!")
	if name == "str" {
		name = "string"
	}
	switch {
	case name == "null":
		return "null"
	case d.origin[n] != "":
		return name + " from " + d.origin[n]
	case name == "string":
		return fmt.Sprintf("string %q", n.Value)
	}
	return name + " " + n.Value
}

// envRef matches ${VAR} and ${VAR:default}, as AIPerf does.
var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\}`)

// eachScalar calls fn on every scalar value under n (not on keys) with its
// dotted path.
func eachScalar(n *yaml.Node, path string, fn func(n *yaml.Node, path string)) {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for i, c := range n.Content {
			at := path
			if n.Kind == yaml.SequenceNode {
				at = fmt.Sprintf("%s[%d]", path, i)
			}
			eachScalar(c, at, fn)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			eachScalar(n.Content[i+1], join(path, n.Content[i].Value), fn)
		}
	case yaml.ScalarNode:
		fn(n, path)
	}
}

// substitute replaces environment references in every scalar value (not in
// keys). A plain (unquoted) scalar is then re-typed, so `timeout: ${T:600}`
// is a number, while a quoted one stays a string.
func (d *decoder) substitute(root *yaml.Node, path string) {
	eachScalar(root, path, func(n *yaml.Node, path string) {
		if !strings.Contains(n.Value, "${") {
			return
		}
		n.Value = envRef.ReplaceAllStringFunc(n.Value, func(ref string) string {
			m := envRef.FindStringSubmatch(ref)
			if v, ok := d.lookupEnv(m[1]); ok {
				return v
			}
			if strings.Contains(ref, ":") {
				return m[2]
			}
			d.errorf(n, pathOr(path), "environment variable %s is not set (write ${%s:default} for a default)", m[1], m[1])
			return ref
		})
		d.origin[n] = originEnv
		if n.Style == 0 {
			n.Tag = "" // re-resolve: ShortTag and Decode type plain scalars from their text
		}
	})
}

// deref follows YAML aliases (*name) to the anchored node.
func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// pathOr names the top level for errors about the document itself.
func pathOr(path string) string {
	if path == "" {
		return "(top level)"
	}
	return path
}

// snake turns camelCase into snake_case ("apiKey" → "api_key").
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 && s[i-1] != '_' {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// named are the keys an unknown key at path is named among: fs, except
// at the top level of a file in the flat shape, whose keys are the body's
// (bodyKeys) and the envelope's, as that shape spells them.
func (d *decoder) named(path string, fs []field) []field {
	if path != "" || !d.body.flat {
		return fs
	}
	var out []field
	for _, k := range bodyKeys {
		out = append(out, field{keys(k), nil})
	}
	for _, f := range fs {
		if !slices.Contains(f.names, "benchmark") && !slices.Contains(f.names, "schema_version") &&
			!slices.ContainsFunc(bodyKeys, func(k string) bool { return slices.Contains(f.names, k) }) {
			out = append(out, f)
		}
	}
	return out
}

// suggest proposes the accepted keys closest to a misspelt one (the main
// names first, then their aliases), or lists the accepted keys.
func suggest(key string, fs []field) string {
	var names, aliases []string
	for _, f := range fs {
		names = append(names, f.names[0])
		aliases = append(aliases, f.names[1:]...)
	}
	if s := cmp.Or(plan.Suggest(key, names), plan.Suggest(key, aliases)); s != "" {
		return s
	}
	return " (expected one of: " + strings.Join(names, ", ") + ")"
}
