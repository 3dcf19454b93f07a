package starlark

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"maps"
	"path/filepath"
	"regexp"
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

// DefaultMaxTrials bounds a plan's size when Options.MaxTrials is 0.
const DefaultMaxTrials = 100_000

// Options configure Load.
type Options struct {
	// Vars are the --set key=value pairs, visible to the script as vars.
	Vars map[string]string
	// MaxSteps bounds the Starlark execution steps of the whole load (loaded
	// modules and skip calls included); 0 means DefaultMaxSteps.
	MaxSteps uint64
	// MaxMemory bounds how much the heap may grow while the script runs
	// (measured every 65,536 steps); 0 means DefaultMaxMemory. One
	// operation builds at most MaxStringBytes or MaxElements (guard.go).
	MaxMemory uint64
	// MaxTrials bounds the plan: the cells of every sweep, counted before
	// skip, times its trials, summed over the script. A sweep() call that
	// goes over it fails before its cells are expanded. 0 means
	// DefaultMaxTrials.
	MaxTrials int
	// LibPaths are directories whose trees load() may read modules from,
	// besides the top-level script's own directory tree.
	LibPaths []string
	// ReadFile reads the script and the modules it loads; nil means
	// os.ReadFile. Paths are then checked lexically: an in-memory file
	// system has no symlinks to resolve.
	ReadFile func(path string) ([]byte, error)
	// Print receives the script's print() lines, their control characters
	// escaped, the secrets of the script's profiles redacted and their size
	// bounded (output.go); nil writes them to os.Stderr.
	Print func(msg string)
}

// fileOptions is the one Starlark dialect every file is run with: sets and
// top-level if/for allowed; no while, no recursion, no global reassignment.
var fileOptions = syntax.FileOptions{Set: true, TopLevelControl: true}

// Script is what a script declared: its sweeps and its searches, each in
// declaration order.
type Script struct {
	Sweeps   []plan.Sweep
	Searches []plan.Search
}

// Load runs the script at path and returns the sweeps it declared, in
// declaration order, each expanded into validated cells; the searches it
// declares are checked as LoadScript checks them and left out.
func Load(ctx context.Context, path string, o Options) ([]plan.Sweep, error) {
	s, err := LoadScript(ctx, path, o)
	return s.Sweeps, err
}

// LoadScript runs the script at path and returns the sweeps it declared,
// each expanded into validated cells, and its searches, each with its
// planner function bound (called on the empty history once, so a planner
// that fails, loops past the step limit or proposes a point outside the
// space is refused now) and its probe profiles checked.
//
// load() reads only .star files inside the directory tree of the script
// (path) or of a lib path, symlinks resolved: see Options.LibPaths.
//
// Problems in the script are *Error values (several are joined with
// errors.Join); a failure to read the script itself, a script not named
// *.star or an unusable lib path is an ordinary error. When ctx is
// cancelled, the script stops and LoadScript returns ctx's error; a search
// planner's later calls stop with ctx too.
func LoadScript(ctx context.Context, path string, o Options) (Script, error) {
	if err := ctx.Err(); err != nil {
		return Script{}, fmt.Errorf("load %s: %w", path, err)
	}
	path = filepath.Clean(path)
	sb, err := newSandbox(path, o.LibPaths, o.ReadFile == nil)
	if err != nil {
		return Script{}, err
	}
	target, err := sb.script(path)
	if err != nil {
		return Script{}, err
	}
	l := newLoader(o, sb)
	l.ctx = ctx
	stop := context.AfterFunc(ctx, func() { l.thread.Cancel(context.Cause(ctx).Error()) })
	defer stop()
	defer l.out.flush()

	var out Script
	var errs []error
	if _, err := l.exec(path, target); err != nil {
		errs = append(errs, err)
	} else if err := l.unreadVars(o.Vars); err != nil {
		errs = append(errs, err)
	} else {
		l.state.closed = true
		for _, d := range l.state.sweeps {
			if err := ctx.Err(); err != nil {
				errs = append(errs, err)
				break
			}
			sw, problems := d.expand(l)
			out.Sweeps = append(out.Sweeps, sw)
			errs = append(errs, problems...)
		}
		for _, d := range l.state.searches {
			s, err := d.bind(ctx, l)
			out.Searches = append(out.Searches, s)
			errs = append(errs, err)
		}
	}
	if errors.Join(errs...) == nil {
		return out, nil
	}
	if err := ctx.Err(); err != nil {
		return Script{}, fmt.Errorf("load %s: %w", path, err)
	}
	var flat []error // one *Error per problem, even where a file had several
	for _, err := range errs {
		if err == nil {
			continue
		}
		err = l.scriptError(err)
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				flat = append(flat, l.out.redactError(e))
			}
		} else {
			flat = append(flat, l.out.redactError(err))
		}
	}
	return Script{}, errors.Join(flat...)
}

// loader runs one script and the modules it loads on a single thread, so
// the step limit, cancellation and backtraces span every file.
type loader struct {
	ctx         context.Context // the load's: expanding a sweep's cells stops with it
	thread      *starlark.Thread
	state       *declared
	predeclared starlark.StringDict
	readFile    func(string) ([]byte, error)
	sandbox     *sandbox
	cache       map[string]*module // by the path read; nil entry: being loaded
	loading     []loading          // the load chain, for cycle messages
	maxSteps    uint64
	guard       *guard
	limit       string          // the limit the script went over, said instead of the cancellation
	out         *output         // print() and the secrets error messages must not show
	sources     hash.Hash       // every file read, for a search planner's digest
	literals    map[string]bool // every string literal of every file read
	varKeys     map[string]bool // the literals read as vars.get("k") or vars["k"]
}

type module struct {
	globals starlark.StringDict
	err     error
}

// loading is a file being run: the path read and the name positions use.
type loading struct{ target, display string }

func newLoader(o Options, sb *sandbox) *loader {
	maxTrials := o.MaxTrials
	if maxTrials <= 0 {
		maxTrials = DefaultMaxTrials
	}
	l := &loader{
		state:    &declared{byName: map[string]*declaration{}, maxTrials: maxTrials},
		readFile: o.ReadFile,
		sandbox:  sb,
		cache:    map[string]*module{},
		maxSteps: cmp.Or(o.MaxSteps, DefaultMaxSteps),
		guard:    &guard{maxMemory: cmp.Or(o.MaxMemory, DefaultMaxMemory), baseline: heapBytes(), maxSteps: cmp.Or(o.MaxSteps, DefaultMaxSteps)},
		sources:  sha256.New(),
		literals: map[string]bool{},
		varKeys:  map[string]bool{},
	}
	if l.readFile == nil {
		l.readFile = readScript
	}
	l.out = newOutput(o.Print)
	l.predeclared = starlark.StringDict{
		"profile": starlark.NewBuiltin("profile", profileBuiltin),
		"sweep":   starlark.NewBuiltin("sweep", sweepBuiltin),
		"search":  starlark.NewBuiltin("search", searchBuiltin),
		"vars":    varsDict(o.Vars),
		"struct":  starlark.NewBuiltin("struct", starlarkstruct.Make),
		"json":    json.Module,
		"math":    math.Module,
	}
	maps.Copy(l.predeclared, l.guard.builtins())
	l.thread = &starlark.Thread{
		Name:       "aiperf sweep script",
		Load:       func(t *starlark.Thread, m string) (starlark.StringDict, error) { return l.load(t, m) },
		Print:      func(_ *starlark.Thread, msg string) { l.out.print(msg) },
		OnMaxSteps: l.checkpoint,
	}
	l.thread.SetMaxExecutionSteps(min(memoryCheckSteps, l.maxSteps))
	l.thread.SetLocal(stateKey, l.state)
	l.thread.SetLocal(guardKey, l.guard)
	l.thread.SetLocal(outputKey, l.out)
	l.guard.slice = l.prelude("slice")
	return l
}

// checkpoint runs every memoryCheckSteps steps: it stops the script at its
// step limit or over its memory bound, else lets it run on.
func (l *loader) checkpoint(t *starlark.Thread) {
	steps := t.ExecutionSteps()
	if steps >= l.maxSteps {
		l.limit = fmt.Sprintf("script exceeded the step limit of %d steps", l.maxSteps)
		t.Cancel("step limit")
		return
	}
	if grown, over := l.guard.memory(); over {
		l.limit = l.guard.overMemory(grown).Error()
		t.Cancel("memory limit")
		return
	}
	t.SetMaxExecutionSteps(min(steps+memoryCheckSteps, l.maxSteps))
}

// preludeSrc defines what the guards call to keep Starlark's own
// semantics, compiled without the rewrite; its frames are built-in ones.
const preludeSrc = "def slice(x, lo, hi, step):\n    return x[lo:hi:step]\n"

// prelude is the prelude's function name.
func (l *loader) prelude(name string) starlark.Callable {
	globals, err := starlark.ExecFileOptions(&fileOptions, l.thread, builtinFile, preludeSrc, nil)
	if err != nil {
		panic(fmt.Sprintf("the prelude does not compile: %v", err))
	}
	return globals[name].(starlark.Callable)
}

// load implements load(): module paths are relative to the calling file,
// and the sandbox decides whether the module may be read.
func (l *loader) load(thread *starlark.Thread, module string) (starlark.StringDict, error) {
	display, target, err := l.sandbox.module(thread.CallFrame(0).Pos.Filename(), module)
	if err != nil {
		return nil, err
	}
	return l.exec(display, target)
}

// exec runs the file at target once and caches its globals (or its
// error); positions name it display.
func (l *loader) exec(display, target string) (starlark.StringDict, error) {
	if m, ok := l.cache[target]; ok {
		if m == nil {
			var chain []string
			for _, f := range l.loading[slices.IndexFunc(l.loading, func(f loading) bool { return f.target == target }):] {
				chain = append(chain, f.display)
			}
			chain = append(chain, display)
			return nil, fmt.Errorf("cycle in load graph: %s", strings.Join(chain, " -> "))
		}
		return m.globals, m.err
	}
	l.cache[target] = nil
	l.loading = append(l.loading, loading{target, display})
	var globals starlark.StringDict
	src, err := l.readFile(target)
	if err != nil {
		err = fmt.Errorf("read %s: %w", display, err)
	} else {
		fmt.Fprintf(l.sources, "%s\x00%d\x00%s", display, len(src), src)
		globals, err = l.run(display, src)
	}
	l.loading = l.loading[:len(l.loading)-1]
	l.cache[target] = &module{globals, err}
	return globals, err
}

// run parses the file, rewrites it so that its operations are guarded
// (rewrite.go), and runs it.
func (l *loader) run(display string, src []byte) (starlark.StringDict, error) {
	f, err := fileOptions.Parse(display, src, 0)
	if err != nil {
		return nil, err
	}
	syntax.Walk(f, func(n syntax.Node) bool { // the names the script may read from vars
		if lit, ok := n.(*syntax.Literal); ok && lit.Token == syntax.STRING {
			l.literals[lit.Value.(string)] = true
		}
		if k, ok := varKey(n); ok {
			l.varKeys[k] = true
		}
		return true
	})
	if err := rewriteFile(f); err != nil {
		return nil, err
	}
	prog, err := starlark.FileProgram(f, l.predeclared.Has)
	if err != nil {
		return nil, err
	}
	globals, err := prog.Init(l.thread, l.predeclared)
	if ferr := l.checkFreeze(f, globals); ferr != nil { // left unfrozen: the load fails
		return globals, cmp.Or(err, ferr)
	}
	globals.Freeze()
	return globals, err
}

// scriptError converts a Starlark failure into *Error values.
func (l *loader) scriptError(err error) error {
	return scriptError(err, l.limit)
}

// maxSuggested bounds the names an unread --set key is compared with.
const maxSuggested = 10_000

// unreadVars refuses a --set key that no loaded file names as a string
// (vars.get("url"), vars["url"]): a misspelt key would otherwise leave the
// script's default in place, silently.
func (l *loader) unreadVars(vars map[string]string) error {
	var unread []string
	for k := range vars {
		if !l.literals[k] {
			unread = append(unread, k)
		}
	}
	if len(unread) == 0 {
		return nil
	}
	sort.Strings(unread)
	names := make([]string, 0, len(l.varKeys))
	for k := range l.varKeys { // the keys the script reads as vars.get("k") or vars["k"]
		names = append(names, k)
	}
	if len(names) == 0 { // else (vars passed on under another name) the literals that could be names
		for lit := range l.literals {
			if len(lit) <= 64 && varName.MatchString(lit) {
				names = append(names, lit)
			}
		}
	}
	if len(names) > maxSuggested { // a suggestion's cost is bounded: past this, none
		names = nil
	}
	var errs []error
	for _, k := range unread {
		errs = append(errs, fmt.Errorf("--set %s: the script never reads a variable of that name (a misspelt key would "+
			"leave its default in place)%s", k, plan.Suggest(k, names)))
	}
	return errors.Join(errs...)
}

// varName is what a --set key that names a variable looks like.
var varName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)

// varKey is the key n reads from the vars dict by name: the literal of
// vars.get("k", ...) or vars["k"].
func varKey(n syntax.Node) (string, bool) {
	var x, key syntax.Expr
	switch n := n.(type) {
	case *syntax.CallExpr:
		dot, ok := n.Fn.(*syntax.DotExpr)
		if !ok || dot.Name.Name != "get" || len(n.Args) == 0 {
			return "", false
		}
		x, key = dot.X, n.Args[0]
	case *syntax.IndexExpr:
		x, key = n.X, n.Y
	default:
		return "", false
	}
	id, ok := x.(*syntax.Ident)
	lit, ok2 := key.(*syntax.Literal)
	if !ok || !ok2 || id.Name != "vars" || lit.Token != syntax.STRING {
		return "", false
	}
	return lit.Value.(string), true
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
