package starlark

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/aiperf-go/aiperf/internal/plan"
	"go.starlark.net/lib/json"
	"go.starlark.net/lib/math"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"
)

// DefaultMaxSteps bounds a script's computation when Options.MaxSteps is 0.
// Declaring a thousand cells takes well under a million steps.
const DefaultMaxSteps = 10_000_000

// Options configure Load.
type Options struct {
	// Vars are the --set key=value pairs, visible to the script as vars.
	Vars map[string]string
	// MaxSteps bounds the Starlark execution steps of the whole load (loaded
	// modules and skip calls included); 0 means DefaultMaxSteps.
	MaxSteps uint64
	// ReadFile reads the script and the modules it loads; nil means os.ReadFile.
	ReadFile func(path string) ([]byte, error)
	// Print receives the script's print() output; nil writes it to os.Stderr.
	Print func(msg string)
}

// fileOptions is the one Starlark dialect every file is run with: sets and
// top-level if/for allowed; no while, no recursion, no global reassignment.
var fileOptions = syntax.FileOptions{Set: true, TopLevelControl: true}

// Load runs the script at path and returns the sweeps it declared, in
// declaration order, each expanded into validated cells.
//
// Problems in the script are *Error values (several are joined with
// errors.Join); a failure to read the script itself is an ordinary error.
// When ctx is cancelled, the script stops and Load returns ctx's error.
func Load(ctx context.Context, path string, o Options) ([]plan.Sweep, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	l := newLoader(o)
	stop := context.AfterFunc(ctx, func() { l.thread.Cancel(context.Cause(ctx).Error()) })
	defer stop()

	var sweeps []plan.Sweep
	var errs []error
	if _, err := l.exec(filepath.Clean(path)); err != nil {
		errs = append(errs, err)
	} else {
		l.state.closed = true
		for _, d := range l.state.sweeps {
			sw, problems := d.expand(l)
			sweeps = append(sweeps, sw)
			errs = append(errs, problems...)
		}
	}
	if len(errs) == 0 {
		return sweeps, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	var flat []error // one *Error per problem, even where a file had several
	for _, err := range errs {
		err = l.scriptError(err)
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			flat = append(flat, j.Unwrap()...)
		} else {
			flat = append(flat, err)
		}
	}
	return nil, errors.Join(flat...)
}

// loader runs one script and the modules it loads on a single thread, so
// the step limit, cancellation and backtraces span every file.
type loader struct {
	thread      *starlark.Thread
	state       *declared
	predeclared starlark.StringDict
	readFile    func(string) ([]byte, error)
	cache       map[string]*module // nil entry: being loaded
	loading     []string           // the load chain, for cycle messages
	maxSteps    uint64
	overSteps   bool
}

type module struct {
	globals starlark.StringDict
	err     error
}

func newLoader(o Options) *loader {
	l := &loader{
		state:    &declared{byName: map[string]*declaration{}},
		readFile: o.ReadFile,
		cache:    map[string]*module{},
		maxSteps: cmp.Or(o.MaxSteps, DefaultMaxSteps),
	}
	if l.readFile == nil {
		l.readFile = os.ReadFile
	}
	printFn := o.Print
	if printFn == nil {
		printFn = func(msg string) { fmt.Fprintln(os.Stderr, msg) }
	}
	l.predeclared = starlark.StringDict{
		"profile": starlark.NewBuiltin("profile", profileBuiltin),
		"sweep":   starlark.NewBuiltin("sweep", sweepBuiltin),
		"vars":    varsDict(o.Vars),
		"struct":  starlark.NewBuiltin("struct", starlarkstruct.Make),
		"json":    json.Module,
		"math":    math.Module,
	}
	l.thread = &starlark.Thread{
		Name:  "aiperf sweep script",
		Load:  func(t *starlark.Thread, m string) (starlark.StringDict, error) { return l.load(t, m) },
		Print: func(_ *starlark.Thread, msg string) { printFn(msg) },
		OnMaxSteps: func(t *starlark.Thread) {
			l.overSteps = true
			t.Cancel("step limit")
		},
	}
	l.thread.SetMaxExecutionSteps(l.maxSteps)
	l.thread.SetLocal(stateKey, l.state)
	return l
}

// load implements load(): module paths are relative to the calling file.
func (l *loader) load(thread *starlark.Thread, module string) (starlark.StringDict, error) {
	path := module
	if !filepath.IsAbs(path) {
		from := thread.CallFrame(0).Pos.Filename()
		path = filepath.Join(filepath.Dir(from), module)
	}
	return l.exec(filepath.Clean(path))
}

// exec runs the file at path once and caches its globals (or its error).
func (l *loader) exec(path string) (starlark.StringDict, error) {
	if m, ok := l.cache[path]; ok {
		if m == nil {
			chain := append(slices.Clone(l.loading[slices.Index(l.loading, path):]), path)
			return nil, fmt.Errorf("cycle in load graph: %s", strings.Join(chain, " -> "))
		}
		return m.globals, m.err
	}
	l.cache[path] = nil
	l.loading = append(l.loading, path)
	var globals starlark.StringDict
	src, err := l.readFile(path)
	if err != nil {
		err = fmt.Errorf("read %s: %w", path, err)
	} else {
		globals, err = starlark.ExecFileOptions(&fileOptions, l.thread, path, src, l.predeclared)
	}
	l.loading = l.loading[:len(l.loading)-1]
	l.cache[path] = &module{globals, err}
	return globals, err
}

// scriptError converts a Starlark failure into *Error values.
func (l *loader) scriptError(err error) error {
	limit := ""
	if l.overSteps {
		limit = fmt.Sprintf("script exceeded the step limit of %d steps", l.maxSteps)
	}
	return scriptError(err, limit)
}

// varsDict builds the frozen vars dict, keys in sorted order.
func varsDict(vars map[string]string) *starlark.Dict {
	keys := make([]string, 0, len(vars))
	for k := range vars {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	d := starlark.NewDict(len(keys))
	for _, k := range keys {
		_ = d.SetKey(starlark.String(k), starlark.String(vars[k])) // a fresh dict cannot refuse
	}
	d.Freeze()
	return d
}
