package starlark_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/starlark"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// memFS serves scripts from a map, as an in-memory Options.ReadFile.
func memFS(files map[string]string) func(string) ([]byte, error) {
	return func(path string) ([]byte, error) {
		src, ok := files[path]
		if !ok {
			return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
		}
		return []byte(src), nil
	}
}

// cancelOnRead is memFS of files, and a module started.star whose load
// (the script's signal that it is about to spin) calls cancel: print()
// cannot signal, its lines are held until the script ends.
func cancelOnRead(files map[string]string, cancel func()) func(string) ([]byte, error) {
	read := memFS(files)
	return func(path string) ([]byte, error) {
		if filepath.Base(path) == "started.star" {
			cancel()
			return []byte("started = True\n"), nil
		}
		return read(path)
	}
}

// loadFiles loads "sweeps.star" from files.
func loadFiles(t *testing.T, files map[string]string, o starlark.Options) ([]plan.Sweep, error) {
	t.Helper()
	o.ReadFile = memFS(files)
	return starlark.Load(context.Background(), "sweeps.star", o)
}

// loadScript loads a single script that must succeed.
func loadScript(t *testing.T, src string, o starlark.Options) []plan.Sweep {
	t.Helper()
	sweeps, err := loadFiles(t, map[string]string{"sweeps.star": src}, o)
	require.NoError(t, err)
	return sweeps
}

// scriptErrors unpacks the *starlark.Error values of a (joined) error.
// oneScriptError loads src as sweeps.star, requires exactly one script
// error, at line:column pos, and returns its message.
func oneScriptError(t *testing.T, src, pos string) string {
	t.Helper()
	_, err := loadFiles(t, map[string]string{"sweeps.star": src}, starlark.Options{})
	errs := scriptErrors(t, err)
	require.Len(t, errs, 1)
	assert.Equal(t, "sweeps.star:"+pos, errs[0].Pos, errs[0].Msg)
	return errs[0].Msg
}

func scriptErrors(t *testing.T, err error) []*starlark.Error {
	t.Helper()
	require.Error(t, err)
	var out []*starlark.Error
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		var se *starlark.Error
		require.ErrorAs(t, e, &se, "not a script error: %v", e)
		out = append(out, se)
	}
	return out
}

func labels(s plan.Sweep) []string {
	var out []string
	for _, c := range s.Cells {
		out = append(out, c.Label)
	}
	return out
}

// writeFile writes src to dir/rel, making the directories on the way.
func writeFile(t *testing.T, dir, rel, src string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
}

func TestLoadRelativeToCallingFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(rel, src string) { writeFile(t, dir, rel, src) }
	// A decoy: resolving "../shared.star" against the main file's directory
	// (or the working directory) instead of lib/ would pick this one up.
	write("shared.star", `MODEL = "wrong"`)
	write("sweeps/shared.star", `
MODEL = "right"
sweep(name = "shared", base = profile(model = MODEL))  # declared once, though loaded twice
`)
	write("sweeps/lib/common.star", `
load("../shared.star", "MODEL")
def chat(**kw):
    return profile(model = MODEL, endpoint_type = "chat", streaming = True).replace(**kw)
`)
	write("sweeps/lib/other.star", `
load("../shared.star", "MODEL")
OTHER = MODEL + "-other"
`)
	write("sweeps/main.star", `
load("lib/common.star", "chat")
load("./lib/other.star", "OTHER")
sweep(name = "main", base = chat(concurrency = 2), scenarios = [{"name": "other", "model": OTHER}])
`)

	sweeps, err := starlark.Load(context.Background(), filepath.Join(dir, "sweeps", "main.star"), starlark.Options{})
	require.NoError(t, err)
	require.Len(t, sweeps, 2)
	assert.Equal(t, "shared", sweeps[0].Name)
	assert.Equal(t, filepath.Join(dir, "sweeps", "shared.star")+":3", sweeps[0].Source)
	assert.Equal(t, []string{"right"}, sweeps[0].Cells[0].Profile.Model)

	main := sweeps[1]
	assert.Equal(t, filepath.Join(dir, "sweeps", "main.star")+":4", main.Source)
	require.Len(t, main.Cells, 1)
	cell := main.Cells[0]
	assert.Equal(t, "other", cell.Label)
	assert.Equal(t, []string{"right-other"}, cell.Profile.Model)
	assert.True(t, cell.Profile.Streaming)
	assert.Equal(t, plan.Ptr(2), cell.Profile.Concurrency)
}

func TestLoadMissingScriptIsNotAScriptError(t *testing.T) {
	t.Parallel()
	_, err := starlark.Load(context.Background(), filepath.Join(t.TempDir(), "nope.star"), starlark.Options{})
	require.ErrorIs(t, err, fs.ErrNotExist)
	var se *starlark.Error
	assert.False(t, errors.As(err, &se))
}

func TestVars(t *testing.T) {
	t.Parallel()
	src := `
base = profile(
    model = vars.get("model", "mock-model"),
    url = vars.get("url", "http://127.0.0.1:8000"),
    request_count = int(vars.get("requests", 100)),
)
sweep(name = "v", base = base)
`
	t.Run("defaults", func(t *testing.T) {
		p := loadScript(t, src, starlark.Options{})[0].Cells[0].Profile
		assert.Equal(t, []string{"mock-model"}, p.Model)
		assert.Equal(t, []string{"http://127.0.0.1:8000"}, p.URL)
		assert.Equal(t, plan.Ptr(100), p.RequestCount)
	})
	t.Run("set", func(t *testing.T) {
		vars := map[string]string{"url": "http://10.0.0.1:9000", "requests": "7"}
		p := loadScript(t, src, starlark.Options{Vars: vars})[0].Cells[0].Profile
		assert.Equal(t, []string{"http://10.0.0.1:9000"}, p.URL)
		assert.Equal(t, plan.Ptr(7), p.RequestCount)
	})
	t.Run("frozen", func(t *testing.T) {
		_, err := loadFiles(t, map[string]string{"sweeps.star": `vars["url"] = "x"`}, starlark.Options{})
		errs := scriptErrors(t, err)
		assert.Equal(t, "sweeps.star:1:5", errs[0].Pos)
		assert.Contains(t, errs[0].Msg, "frozen")
	})
}

func TestPrint(t *testing.T) {
	t.Parallel()
	var got []string
	loadScript(t, `
p = profile(model = "m", api_key = "sk-secret", concurrency = 4)
print(p)
print(p.concurrency, p.model, p.request_count)
`, starlark.Options{Print: func(msg string) { got = append(got, msg) }})
	require.Len(t, got, 2)
	assert.Equal(t, `profile(model = ["m"], api_key = "<redacted>", concurrency = 4)`, got[0])
	assert.NotContains(t, got[0], "sk-secret")
	assert.Equal(t, `4 ["m"] None`, got[1])
}

func TestCancel(t *testing.T) {
	t.Parallel()
	t.Run("while running", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		// Without cancellation this loop would run for hours: the step limit
		// is out of reach.
		src := `
def spin():
    n = 0
    for i in range(1 << 30):
        for j in range(1 << 30):
            n += 1
    return n
load("started.star", "started")
spin()
`
		_, err := starlark.Load(ctx, "sweeps.star", starlark.Options{
			ReadFile: cancelOnRead(map[string]string{"sweeps.star": src}, cancel),
			MaxSteps: 1 << 62,
		})
		require.ErrorIs(t, err, context.Canceled)
		var se *starlark.Error
		assert.False(t, errors.As(err, &se), "a cancelled load is not a script error")
	})
	t.Run("before start", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := starlark.Load(ctx, "sweeps.star", starlark.Options{ReadFile: memFS(map[string]string{"sweeps.star": ""})})
		require.ErrorIs(t, err, context.Canceled)
	})
	t.Run("during skip", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		src := `
def slow(cell):
    n = 0
    for i in range(1 << 30):
        for j in range(1 << 30):
            n += 1
    return False
load("started.star", "started")
sweep(name = "s", base = profile(model = "m"), matrix = {"concurrency": [1, 2]}, skip = slow)
`
		_, err := starlark.Load(ctx, "sweeps.star", starlark.Options{
			ReadFile: cancelOnRead(map[string]string{"sweeps.star": src}, cancel),
			MaxSteps: 1 << 62,
		})
		require.ErrorIs(t, err, context.Canceled)
	})
}

// TestErrors checks message and position of every kind of script error.
func TestErrors(t *testing.T) {
	t.Parallel()
	const base = "base = profile(model = \"m\")\n"
	tests := []struct {
		name      string
		files     map[string]string // "sweeps.star" is loaded
		maxSteps  uint64
		pos, msg  string
		backtrace []string // substrings, in order; nil = no backtrace
	}{
		{
			name:  "syntax error",
			files: map[string]string{"sweeps.star": "def f(:\n    pass\n"},
			pos:   "sweeps.star:1:8", msg: "got ':', want ')'",
		},
		{
			name:  "syntax error in a loaded module",
			files: map[string]string{"sweeps.star": "load(\"lib.star\", \"x\")\n", "lib.star": "x = 1 +\n"},
			pos:   "lib.star:1:8", msg: "got newline, want primary expression",
		},
		{
			name:  "undefined names, all of them",
			files: map[string]string{"sweeps.star": "x = y\nz = w\n"},
			pos:   "sweeps.star:1:5", msg: "undefined: y",
		},
		{
			name:  "unknown option",
			files: map[string]string{"sweeps.star": "p = profile(model = \"m\", concurency = 8)\n"},
			pos:   "sweeps.star:1:12", msg: `profile: unknown option "concurency" (did you mean "concurrency"?)`,
		},
		{
			name:  "unknown option, several close matches",
			files: map[string]string{"sweeps.star": "p = profile(output_tokens = 8)\n"},
			pos:   "sweeps.star:1:12",
			msg:   `profile: unknown option "output_tokens" (did you mean "output_tokens_mean" or "output_tokens_stddev"?)`,
		},
		{
			name:  "unknown option, no close match",
			files: map[string]string{"sweeps.star": "p = profile(flux_capacitor = 8)\n"},
			pos:   "sweeps.star:1:12", msg: `profile: unknown option "flux_capacitor"`,
		},
		{
			name:  "wrong type",
			files: map[string]string{"sweeps.star": "p = profile(\n    model = \"m\",\n    concurrency = \"8\",\n)\n"},
			pos:   "sweeps.star:1:12", msg: `profile: concurrency: want int, got string "8"`,
		},
		{
			name:  "wrong type, unsupported Starlark type",
			files: map[string]string{"sweeps.star": "p = profile(streaming = {})\n"},
			pos:   "sweeps.star:1:12", msg: `profile: streaming: want bool, got dict`,
		},
		{
			name:  "wrong type in replace",
			files: map[string]string{"sweeps.star": base + "p = base.replace(request_rate = \"fast\")\n"},
			pos:   "sweeps.star:2:17", msg: `replace: request_rate: want float, got string "fast"`,
		},
		{
			name:  "run-level option",
			files: map[string]string{"sweeps.star": "p = profile(artifact_dir = \"out\")\n"},
			pos:   "sweeps.star:1:12",
			msg:   "profile: artifact_dir is not a profile option: it is set by the sweep runner; use aiperf sweep --artifact-dir",
		},
		{
			name:  "positional profile argument",
			files: map[string]string{"sweeps.star": base + "p = profile(base, concurrency = 2)\n"},
			pos:   "sweeps.star:2:12", msg: "profile: options are keyword arguments, e.g. profile(concurrency = 8)",
		},
		{
			name:  "unknown attribute",
			files: map[string]string{"sweeps.star": base + "x = base.concurency\n"},
			pos:   "sweeps.star:2:9", msg: "profile has no .concurency field or method (did you mean .concurrency?)",
		},
		{
			name: "load cycle",
			files: map[string]string{
				"sweeps.star": "load(\"a.star\", \"a\")\n",
				"a.star":      "load(\"b.star\", \"b\")\na = b\n",
				"b.star":      "load(\"a.star\", \"a\")\nb = a\n",
			},
			pos: "b.star:1:1", msg: "cannot load a.star: cycle in load graph: a.star -> b.star -> a.star",
			backtrace: []string{"sweeps.star:1:1: in <toplevel>", "a.star:1:1: in <toplevel>", "b.star:1:1: in <toplevel>"},
		},
		{
			name:  "load of a missing file",
			files: map[string]string{"sweeps.star": "\nload(\"lib/nope.star\", \"x\")\n"},
			pos:   "sweeps.star:2:1", msg: "cannot load lib/nope.star: read lib/nope.star: open lib/nope.star: file does not exist",
		},
		{
			name:  "load of a file that is not a .star script",
			files: map[string]string{"sweeps.star": "\nload(\"secret.txt\", \"x\")\n", "secret.txt": "hunter2\n"},
			pos:   "sweeps.star:2:1", msg: "cannot load secret.txt: not a .star file: load() reads only Starlark modules",
		},
		{
			name:  "load out of the script's directory",
			files: map[string]string{"sweeps.star": "load(\"lib/a.star\", \"x\")\n", "lib/a.star": "load(\"../../up.star\", \"x\")\n", "../up.star": "x = 1\n"},
			pos:   "lib/a.star:1:1",
			msg: "cannot load ../../up.star: '..' leads to ../up.star, outside . (the script's directory); " +
				"load() reads only inside the script's directory tree; name another directory with --lib-path DIR",
			backtrace: []string{"sweeps.star:1:1: in <toplevel>", "lib/a.star:1:1: in <toplevel>"},
		},
		{
			name:  "load of an absolute path",
			files: map[string]string{"sweeps.star": "load(\"/etc/lib.star\", \"x\")\n", "/etc/lib.star": "x = 1\n"},
			pos:   "sweeps.star:1:1",
			msg: "cannot load /etc/lib.star: absolute path outside . (the script's directory); " +
				"load() reads only inside the script's directory tree; name another directory with --lib-path DIR",
		},
		{
			name:     "step limit",
			files:    map[string]string{"sweeps.star": "def spin():\n    n = 0\n    for i in range(1000000):\n        n += i\n    return n\nspin()\n"},
			maxSteps: 1000,
			pos:      "sweeps.star:4:9", msg: "script exceeded the step limit of 1000 steps",
			backtrace: []string{"sweeps.star:6:5: in <toplevel>", "sweeps.star:4:9: in spin"},
		},
		{
			name:  "fail",
			files: map[string]string{"sweeps.star": "def need(name):\n    fail(\"set \" + name + \" with --set\")\nneed(\"url\")\n"},
			pos:   "sweeps.star:2:9", msg: "set url with --set",
			backtrace: []string{"sweeps.star:3:5: in <toplevel>", "sweeps.star:2:9: in need"},
		},
		{
			name: "runtime error in a loaded module",
			files: map[string]string{
				"sweeps.star":   "load(\"lib/math.star\", \"per_slot\")\nn = per_slot(0)\n",
				"lib/math.star": "def per_slot(c):\n    return 100 // c\n",
			},
			pos: "lib/math.star:2:16", msg: "floored division by zero",
			backtrace: []string{"sweeps.star:2:13: in <toplevel>", "lib/math.star:2:16: in per_slot"},
		},
		{
			name:  "duplicate sweep name",
			files: map[string]string{"sweeps.star": base + "sweep(name = \"s\", base = base)\n\nsweep(name = \"s\", base = base)\n"},
			pos:   "sweeps.star:4:6", msg: `sweep: name "s" is already used by the sweep at sweeps.star:2:6`,
		},
		{
			name:  "zip length mismatch",
			files: map[string]string{"sweeps.star": base + "sweep(name = \"z\", base = base, zip = {\"concurrency\": [1, 8], \"request_rate\": [5, 40, 80]})\n"},
			pos:   "sweeps.star:2:6", msg: "sweep: zip: lists must have equal lengths: concurrency has 2, request_rate has 3",
		},
		{
			name:  "unknown option in a matrix",
			files: map[string]string{"sweeps.star": base + "sweep(name = \"m\", base = base, matrix = {\"concurency\": [1]})\n"},
			pos:   "sweeps.star:2:6", msg: `sweep: matrix: unknown option "concurency" (did you mean "concurrency"?)`,
		},
		{
			name:  "wrong type in a matrix",
			files: map[string]string{"sweeps.star": base + "sweep(name = \"m\", base = base, matrix = {\"concurrency\": [1, \"8\"]})\n"},
			pos:   "sweeps.star:2:6", msg: `sweep: matrix: concurrency: want int, got string "8"`,
		},
		{
			name:  "matrix values not a list",
			files: map[string]string{"sweeps.star": base + "sweep(name = \"m\", base = base, matrix = {\"concurrency\": 4})\n"},
			pos:   "sweeps.star:2:6", msg: "sweep: matrix: concurrency: want a list of values, got int",
		},
		{
			name:  "empty matrix values",
			files: map[string]string{"sweeps.star": base + "sweep(name = \"m\", base = base, matrix = {\"concurrency\": []})\n"},
			pos:   "sweeps.star:2:6", msg: "sweep: matrix: concurrency has no values",
		},
		{
			name:  "alias and name of one option",
			files: map[string]string{"sweeps.star": base + "sweep(name = \"m\", base = base, matrix = {\"isl\": [1], \"synthetic_input_tokens_mean\": [2]})\n"},
			pos:   "sweeps.star:2:6", msg: "sweep: matrix: isl and synthetic_input_tokens_mean set the same option",
		},
		{
			name:  "matrix and zip",
			files: map[string]string{"sweeps.star": base + "sweep(name = \"m\", base = base, matrix = {\"concurrency\": [1]}, zip = {\"concurrency\": [1]})\n"},
			pos:   "sweeps.star:2:6", msg: "sweep: give at most one of matrix, zip and scenarios",
		},
		{
			name:  "scenario without a name",
			files: map[string]string{"sweeps.star": base + "sweep(name = \"s\", base = base, scenarios = [{\"name\": \"a\"}, {\"concurrency\": 2}])\n"},
			pos:   "sweeps.star:2:6", msg: `sweep: scenarios[1]: "name" is required (it labels the cell)`,
		},
		{
			name:  "scenario name used twice",
			files: map[string]string{"sweeps.star": base + "sweep(name = \"s\", base = base, scenarios = [{\"name\": \"a\"}, {\"name\": \"a\", \"concurrency\": 2}])\n"},
			pos:   "sweeps.star:2:6", msg: `sweep: scenarios[1]: name "a" is used twice`,
		},
		{
			name:  "scenario with a wrong type",
			files: map[string]string{"sweeps.star": base + "sweep(name = \"s\", base = base, scenarios = [{\"name\": \"a\", \"streaming\": \"yes\"}])\n"},
			pos:   "sweeps.star:2:6", msg: `sweep: scenarios[0] (a): streaming: want bool, got string "yes"`,
		},
		{
			name:  "sweep name not a directory name",
			files: map[string]string{"sweeps.star": base + "sweep(name = \"my scan\", base = base)\n"},
			pos:   "sweeps.star:2:6", msg: `sweep: name "my scan" may only use letters, digits, '.', '_' and '-'`,
		},
		{
			name:  "base not a profile",
			files: map[string]string{"sweeps.star": "sweep(name = \"s\", base = {\"model\": \"m\"})\n"},
			pos:   "sweeps.star:1:6", msg: "sweep: base: want a profile (from profile()), got dict",
		},
		{
			name:  "trials below one",
			files: map[string]string{"sweeps.star": base + "sweep(name = \"s\", base = base, trials = 0)\n"},
			pos:   "sweeps.star:2:6", msg: "sweep: trials must be at least 1, got 0",
		},
		{
			name:  "negative cooldown",
			files: map[string]string{"sweeps.star": base + "sweep(name = \"s\", base = base, cooldown_seconds = -0.5)\n"},
			pos:   "sweeps.star:2:6", msg: "sweep: cooldown_seconds must be 0 or more, got -0.5",
		},
		{
			name:  "duplicate matrix values",
			files: map[string]string{"sweeps.star": base + "sweep(name = \"s\", base = base, matrix = {\"concurrency\": [1, 2, 1]})\n"},
			pos:   "sweeps.star:2:6", msg: `sweep "s": cell concurrency_1 appears twice`,
		},
		{
			name:  "scenarios with the same settings",
			files: map[string]string{"sweeps.star": base + "sweep(name = \"s\", base = base, scenarios = [{\"name\": \"a\"}, {\"name\": \"b\"}])\n"},
			pos:   "sweeps.star:2:6", msg: `sweep "s": cells a and b have the same parameters`,
		},
		{
			name:  "error inside skip",
			files: map[string]string{"sweeps.star": base + "sweep(name = \"s\", base = base, matrix = {\"concurrency\": [1]},\n      skip = lambda cell: cell.isl > 100)\n"},
			pos:   "sweeps.star:3:31", msg: `sweep "s": skip(cell concurrency_1): cell has no .isl field or method`,
		},
		{
			name:  "sweep declared from skip",
			files: map[string]string{"sweeps.star": base + "def sneaky(cell):\n    sweep(name = \"late\", base = base)\n    return False\nsweep(name = \"s\", base = base, skip = sneaky)\n"},
			pos:   "sweeps.star:3:10",
			msg:   `sweep "s": skip(cell base): sweep: sweeps are declared by the script itself, not from inside skip`,
		},
		{
			name:  "skip drops every cell",
			files: map[string]string{"sweeps.star": base + "sweep(name = \"s\", base = base, matrix = {\"concurrency\": [1, 2]}, skip = lambda c: True)\n"},
			pos:   "sweeps.star:2:6", msg: `sweep "s": skip dropped every cell`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := loadFiles(t, tt.files, starlark.Options{MaxSteps: tt.maxSteps})
			errs := scriptErrors(t, err)
			got := errs[0]
			assert.Equal(t, tt.pos, got.Pos)
			assert.Equal(t, tt.msg, got.Msg)
			assert.True(t, strings.HasPrefix(got.Error(), tt.pos+": "+tt.msg), got.Error())
			if tt.backtrace == nil {
				assert.Empty(t, got.Backtrace)
				return
			}
			require.NotEmpty(t, got.Backtrace)
			rest := got.Backtrace
			for _, frame := range tt.backtrace {
				i := strings.Index(rest, frame)
				require.GreaterOrEqual(t, i, 0, "frame %q missing or out of order in\n%s", frame, got.Backtrace)
				rest = rest[i+len(frame):]
			}
			assert.Contains(t, got.Error(), "\n"+got.Backtrace)
		})
	}
}

func TestUndefinedNamesAllReported(t *testing.T) {
	t.Parallel()
	_, err := loadFiles(t, map[string]string{"sweeps.star": "x = y\nz = w\n"}, starlark.Options{})
	errs := scriptErrors(t, err)
	require.Len(t, errs, 2)
	assert.Equal(t, "sweeps.star:2:5", errs[1].Pos)
	assert.Equal(t, "undefined: w", errs[1].Msg)
}

func TestInputFileIsRelativeToTheScript(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := filepath.Join(dir, "sub", "replay.star")
	require.NoError(t, os.MkdirAll(filepath.Dir(script), 0o755))
	require.NoError(t, os.WriteFile(script, []byte(`
base = profile(model = "m", url = "http://127.0.0.1:8000", input_file = "data/trace.jsonl")
sweep(name = "r", base = base, scenarios = [{"name": "rel"}, {"name": "abs", "input_file": "/srv/trace.jsonl"}])
`), 0o644))
	sweeps, err := starlark.Load(context.Background(), script, starlark.Options{})
	require.NoError(t, err)
	require.Len(t, sweeps[0].Cells, 2)
	assert.Equal(t, filepath.Join(dir, "sub", "data", "trace.jsonl"), sweeps[0].Cells[0].Profile.InputFile,
		"a relative input_file is the script's, wherever the sweep runs")
	assert.Equal(t, "/srv/trace.jsonl", sweeps[0].Cells[1].Profile.InputFile)
}
