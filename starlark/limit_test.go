package starlark_test

import (
	"strings"
	"testing"

	"github.com/aiperf-go/aiperf/starlark"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPlanTooLarge: a plan over the trial limit fails at the sweep() call,
// naming the sizes and the override, before its cells are expanded (a
// 1000 × 1000 matrix used to take more than a minute to expand, and a
// product beyond 64 bits panicked).
func TestPlanTooLarge(t *testing.T) {
	t.Parallel()
	const base = "base = profile(model = \"m\")\n"
	const fix = "; sweep fewer values or trials, or raise the limit with --max-trials N"
	tests := []struct {
		name, src string
		maxTrials int
		pos, msg  string
	}{
		{
			name: "matrix",
			src: base + "sweep(name = \"big\", base = base, trials = 3,\n" +
				"      matrix = {\"concurrency\": list(range(1, 1001)), \"isl\": list(range(1, 1001))})\n",
			pos: "sweeps.star:2:6",
			msg: "sweep: the plan is too large: matrix concurrency (1000) × isl (1000) = 1000000 cells × 3 trials " +
				"= 3000000 trials, over the limit of 100000" + fix,
		},
		{
			name: "a range too long to check value by value",
			src:  base + "sweep(name = \"r\", base = base, matrix = {\"concurrency\": range(1, 1000000001)})\n",
			pos:  "sweeps.star:2:6",
			msg: "sweep: the plan is too large: matrix concurrency (1000000000) = 1000000000 cells × 1 trial = 1000000000 trials, " +
				"over the limit of 100000" + fix,
		},
		{
			name: "trials",
			src:  base + "sweep(name = \"long\", base = base, trials = 1000000000)\n",
			pos:  "sweeps.star:2:6",
			msg:  "sweep: the plan is too large: 1 cell × 1000000000 trials = 1000000000 trials, over the limit of 100000" + fix,
		},
		{
			name: "matrix product beyond 64 bits",
			src: base + "v = list(range(1, 1001))\n" +
				"sweep(name = \"huge\", base = base, matrix = {\"concurrency\": v, \"isl\": v, \"osl\": v, \"request_count\": v, " +
				"\"random_seed\": v, \"request_rate\": v, \"num_dataset_entries\": v})\n",
			pos: "sweeps.star:3:6",
			msg: "sweep: the plan is too large: matrix concurrency (1000) × isl (1000) × osl (1000) × " +
				"request_count (1000) × random_seed (1000) × request_rate (1000) × num_dataset_entries (1000) = " +
				"1000000000000000000000 cells × 1 trial = 1000000000000000000000 trials, over the limit of 100000" + fix,
		},
		{
			name: "across sweeps",
			src: base + "sweep(name = \"a\", base = base, scenarios = [{\"name\": \"x\"}], trials = 60000)\n" +
				"sweep(name = \"b\", base = base, zip = {\"concurrency\": [1, 2]}, trials = 20001)\n",
			pos: "sweeps.star:3:6",
			msg: "sweep: the plan is too large: this sweep's 40002 trials (zip of 2 cells × 20001 trials) bring the script's total " +
				"to 100002, over the limit of 100000" + fix,
		},
		{
			name:      "a lower limit",
			src:       base + "sweep(name = \"s\", base = base, scenarios = [{\"name\": \"x\"}, {\"name\": \"y\", \"concurrency\": 2}], trials = 3)\n",
			maxTrials: 5,
			pos:       "sweeps.star:2:6",
			msg:       "sweep: the plan is too large: 2 scenarios × 3 trials = 6 trials, over the limit of 5" + fix,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := loadFiles(t, map[string]string{"sweeps.star": tt.src}, starlark.Options{MaxTrials: tt.maxTrials})
			errs := scriptErrors(t, err)
			require.Len(t, errs, 1)
			assert.Equal(t, tt.pos, errs[0].Pos)
			assert.Equal(t, tt.msg, errs[0].Msg)
		})
	}
	t.Run("at the limit", func(t *testing.T) {
		t.Parallel()
		s := loadScript(t, base+"sweep(name = \"s\", base = base, matrix = {\"concurrency\": [1, 2]}, trials = 3)\n",
			starlark.Options{MaxTrials: 6})
		assert.Len(t, s[0].TrialList(), 6)
	})
}

// TestAllocationBounds: every way a script can build without bound in one
// operation — a list or string repeated, a range turned into a list, a join,
// a doubling, a replace or format that repeats its argument, an integer
// squared, a value printed that shares its parts — fails at the operation,
// before it allocates, with what it would have built. go.starlark.net
// itself let each of them allocate gigabytes (a 16 GiB list for
// [0] * 10^9), in one step neither the step limit nor Ctrl-C can stop.
func TestAllocationBounds(t *testing.T) {
	const shared = "def f():\n    l = [1]\n    for i in range(40):\n        l = [l, l]\n    return l\nl = f()\n"
	const elems, bytes = "elements, more than the 1048576 a script may build in one operation",
		"bytes, more than the 16777216 a script may build in one operation"
	tests := []struct{ name, src, pos, msg string }{
		{"list repetition", "x = [0] * 1000000000\n", "1:9", "repeat would build 1000000000 " + elems},
		{"repetition, count first", "x = 1000000000 * [0]\n", "1:16", "repeat would build 1000000000 " + elems},
		{"tuple repetition", "x = (0, 1) * 1000000\n", "1:12", "repeat would build 2000000 " + elems},
		{"string repetition", "x = 'ab' * 100000000\n", "1:10", "repeat would build 200000000 " + bytes},
		{"repetition by a big int", "x = [0] * (1 << 100)\n", "1:9", "repeat would build 9223372036854775807 " + elems},
		{"range to list", "x = list(range(1000000000))\n", "1:9", "list() would build 1000000000 " + elems},
		{"range sorted", "x = sorted(range(1000000000))\n", "1:11", "sorted() would build 1000000000 " + elems},
		{"range to set", "x = set(range(1000000000))\n", "1:8", "set() would build 1000000000 " + elems},
		{"range enumerated", "x = enumerate(range(1000000000))\n", "1:14", "enumerate() would build 1000000000 " + elems},
		{"range walked by all", "x = all(range(1, 1 << 62))\n", "1:8", "all() would build 4611686018427387903 " + elems},
		{"join", "x = ','.join(['x' * 100] * 1000000)\n", "1:13", "join() would build 100999999 " + bytes},
		{"string doubling", "def f():\n    s = 'x'\n    for i in range(64):\n        s += s\nf()\n", "4:11", "x + y would build 33554432 " + bytes},
		{"list doubling", "l = [0]\nfor i in range(64):\n    l.extend(l)\n", "3:13", "extend() would build 2097152 " + elems},
		{"list concatenation", "def f():\n    l = [0]\n    for i in range(64):\n        l = l + l\nf()\n", "4:15", "x + y would build 2097152 " + elems},
		{"replace", "x = ('x' * 100000).replace('', 'y' * 1000)\n", "1:27", "replace() would build 100101000 " + bytes},
		{"format", "x = ('{0}' * 100000).format('z' * 1000)\n", "1:28", "format() would build 100500000 " + bytes},
		{"percent", "x = ('%s' * 1000) % tuple(['z' * 100000] * 1000)\n", "1:19", "x % y would build 100004000 " + bytes},
		{"int squared", "def f():\n    x = 3\n    for i in range(40):\n        x = x * x\nf()\n", "4:15", "x * y would build 103874 bits of integer, more than the 65536 a script may build in one operation"},
		{"int parsed", "x = int('9' * 5000)\n", "1:8", "int: a string of 5000 characters, more than the 4300 digits an int may be parsed from"},
		{"shared parts printed", shared + "s = str(l)\n", "7:8", "str() would build 13194139533306 " + bytes},
		{"shared parts as JSON", shared + "s = json.encode(l)\n", "7:16", "json.encode() would build 13194139533306 " + bytes},
		{"a list nested too deep", "def f():\n    l = []\n    for i in range(2000):\n        l = [l]\n    return l\ns = str(f())\n", "6:8", "str: a value nested more than 1000 deep"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			msg := oneScriptError(t, tt.src, tt.pos)
			assert.Contains(t, msg, tt.msg)
		})
	}
}

// TestWorkCharged: an operation that reads a large value costs steps in
// proportion, so a loop of them meets the step limit after a few hundred
// iterations instead of comparing 10 MB a step for a million steps.
func TestWorkCharged(t *testing.T) {
	t.Parallel()
	src := "a = 'x' * 10000000\nb = 'x' * 10000000\ndef f():\n    n = 0\n    for i in range(1000000):\n        if a == b:\n            n += 1\nf()\n"
	errs := scriptErrors(t, func() error {
		_, err := loadFiles(t, map[string]string{"sweeps.star": src}, starlark.Options{})
		return err
	}())
	require.Len(t, errs, 1)
	assert.Equal(t, "script exceeded the step limit of 10000000 steps", errs[0].Msg)
}

// TestMemoryBound: what a script holds in all is bounded: a comprehension
// of a thousand 1 MB strings goes over a 64 MiB bound (each string alone is
// allowed). Not parallel: the heap is the process's.
func TestMemoryBound(t *testing.T) {
	_, err := loadFiles(t, map[string]string{"sweeps.star": "x = ['x' * 1000000 for i in range(1000)]\n"},
		starlark.Options{MaxMemory: 64 << 20})
	errs := scriptErrors(t, err)
	require.Len(t, errs, 1)
	assert.True(t, strings.HasPrefix(errs[0].Pos, "sweeps.star:1:"), errs[0].Pos)
	assert.Contains(t, errs[0].Msg, "script exceeded its memory bound of 64 MiB")
}

// TestGuardsKeepSemantics: the guarded operations still do what Starlark
// does: += on a list extends it in place (an alias sees it), a slice with
// bounds left out and a negative step, comparisons, not in, keyword and
// unpacked arguments, and a sweep's position is still where the script
// calls sweep().
func TestGuardsKeepSemantics(t *testing.T) {
	t.Parallel()
	src := `def f(x, y = 10, *rest, **kw):
    return x + y + len(rest) + len(kw)
def checks():
    a = [1]
    b = a
    a += [2, 3]
    c = (4, 5) + (6,)
    s = "abcdef"[::-2] + "x" * 2
    d = {"k": 1} | {"j": 2}
    return [b == [1, 2, 3], c[1:] == (5, 6), s == "fdbxx", 7 not in b, sorted(d) == ["j", "k"],
        f(1) == 11, f(1, 2, 3, 4, z = 5) == 6, f(*[1, 2], **{"z": 1}) == 4, "%d-%s" % (1, "a") == "1-a",
        "{}{}".format(1, 2) == "12", ",".join(["a", "b"]) == "a,b", 3 * 4 == 12, [0] * 3 == [0, 0, 0]]
if not all(checks()):
    fail("a guarded operation changed: %s" % checks())
base = profile(model = "m")
sweep(name = "s", base = base, matrix = {"concurrency": [1, 2]})
`
	_, err := loadFiles(t, map[string]string{"sweeps.star": src + "sweep(name = \"s\", base = base)\n"}, starlark.Options{})
	errs := scriptErrors(t, err)
	require.Len(t, errs, 1)
	assert.Equal(t, "sweeps.star:17:6", errs[0].Pos, "the sweep's own position, through the call guard")
	assert.Contains(t, errs[0].Msg, `name "s" is already used by the sweep at sweeps.star:16:6`)

	_, err = loadFiles(t, map[string]string{"sweeps.star": "def f():\n    return [0]\nx = {}\nx[f()[0]] = 1\nx[f()[0]] += 1\n"}, starlark.Options{})
	errs = scriptErrors(t, err)
	assert.Equal(t, "sweeps.star:5:11", errs[0].Pos)
	assert.Contains(t, errs[0].Msg, "+= to a target that calls a function is not supported")
}
