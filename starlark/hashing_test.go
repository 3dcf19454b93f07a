package starlark_test

import (
	"strings"
	"testing"

	"github.com/aiperf-go/aiperf/starlark"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sharedTuple defines mkt(n), a tuple that shares its parts: 2^n values
// hashed, frozen or compared whole, n tuples in memory; and mkd(n), a dict
// that does the same. mkt(25) hashes 33 million values, past the step limit.
const sharedTuple = `def mkt(n):
    x = (1,)
    for i in range(n):
        x = (x, x)
    return x
def mkd(n):
    x = {"a": 1}
    for i in range(n):
        x = {"a": x, "b": x}
    return x
`

// TestHashingRefused: every way a script hashes a value (a dict key in a
// literal, a comprehension, x[k], x[k] = v, get, set(), add, union, a
// struct in a dict, dict() of pairs) is charged for the values it walks, shared parts
// each time they occur, and refused before it runs past the step limit:
// {mkt(60): 1} used to hash 2^60 values in one step, where neither the step
// limit nor Ctrl-C could stop it. A sort's key= results are charged too.
func TestHashingRefused(t *testing.T) {
	t.Parallel()
	const more = "would take more than the "
	tests := []struct{ name, body, pos, msg string }{
		{"dict literal", "    return {t: 1}\n", "13:13", "hashing this key " + more},
		{"comprehension", "    return {k: 1 for k in [t]}\n", "13:13", "hashing this key " + more},
		{"index", "    return {1: 2}[t]\n", "13:19", "hashing this key " + more},
		{"index assignment", "    d = {}\n    d[t] = 1\n", "14:7", "hashing this key " + more},
		{"get", "    return {}.get(t)\n", "13:18", "get() " + more},
		{"set", "    return set([t])\n", "13:15", "set() " + more},
		{"add", "    s = set()\n    s.add(t)\n", "14:10", "add() " + more},
		{"union", "    return set().union([t])\n", "13:23", "union() " + more},
		{"dict of pairs", "    return dict([[t, 1]])\n", "13:16", "dict() " + more},
		{"struct in dict", "    return struct(a = t) in {}\n", "13:26", "x in y " + more},
		{"sorted by key", "    return sorted([1, 2], key = lambda v: t)\n", "13:18", "sorted() " + more},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := sharedTuple + "def f():\n    t = mkt(25)\n" + tt.body + "f()\n"
			msg := oneScriptError(t, src, tt.pos)
			assert.Contains(t, msg, tt.msg)
			assert.Contains(t, msg, "of the script's step limit of 10000000 steps")
		})
	}
}

// TestPairValuesAreNotHashed: dict() and update() hash a pair's key, not
// its value: a value that shares its parts is no reason to refuse them.
func TestPairValuesAreNotHashed(t *testing.T) {
	t.Parallel()
	loadScript(t, sharedTuple+"def f():\n    t = mkt(25)\n    d = dict([(\"k\", t)])\n    d.update([[\"j\", t]])\n"+
		"    return len(d)\nn = f()\nsweep(name = \"s\", base = profile(model = \"m\"))\n", starlark.Options{})
}

// TestFreezeRefused: a global that shares its parts is refused where it is
// assigned: the module's end freezes it, and go.starlark.net walks a tuple
// whole each time it occurs (T = mkt(60) used to hang after the script's
// last step, Ctrl-C ignored). A local is not frozen.
func TestFreezeRefused(t *testing.T) {
	t.Parallel()
	msg := oneScriptError(t, sharedTuple+"T = mkt(25)\nsweep(name = \"s\", base = profile(model = \"m\"))\n", "11:1")
	assert.Contains(t, msg, "global T: freezing it at the end of the module would take more than the ")
	msg = oneScriptError(t, sharedTuple+"F = [mkt(25)].append\nsweep(name = \"s\", base = profile(model = \"m\"))\n", "11:1")
	assert.Contains(t, msg, "global F: freezing it", "a bound method freezes its receiver")

	loadScript(t, sharedTuple+"def f():\n    t = mkt(25)\n    return 1\nx = f()\nsweep(name = \"s\", base = profile(model = \"m\"))\n",
		starlark.Options{})
}

// TestFailBounded: fail() prints its arguments as str() does, so it is
// bounded as str() is: fail(mkd(60)) used to build its message until the
// Go runtime ran out of memory.
func TestFailBounded(t *testing.T) {
	t.Parallel()
	for _, call := range []string{"fail(mkd(22))", "fail(\"x\", sep = mkd(22))"} {
		_, err := loadFiles(t, map[string]string{"sweeps.star": sharedTuple + call + "\n"}, starlark.Options{})
		errs := scriptErrors(t, err)
		require.Len(t, errs, 1)
		msg := errs[0].Msg
		assert.Equal(t, "sweeps.star:11:5", errs[0].Pos, call)
		assert.Truef(t, strings.HasPrefix(msg, "fail() would build ") && strings.HasSuffix(msg,
			"bytes, more than the 16777216 a script may build in one operation"), "%s: %d bytes: %.200s", call, len(msg), msg)
	}
}

// TestHashingKeepsSemantics: the guarded keys and indexes still do what
// Starlark does, and ordinary keys cost nothing more than their step.
func TestHashingKeepsSemantics(t *testing.T) {
	t.Parallel()
	src := `def checks():
    d = {(1, 2): 3, "a": 1}
    d["a"] += 1
    d[(3, 4)] = 5
    e = {k: len(k) for k in ["x", "yy"]}
    s = set([(1, 2)])
    s.add((1, 2))
    return [d[(1, 2)] == 3, d["a"] == 2, d.get((3, 4)) == 5, e == {"x": 1, "yy": 2}, len(s) == 1,
        [1, 2][1] == 2, "abc"[0] == "a", ({1: 1} | {2: 2}) == {1: 1, 2: 2}, struct(a = 1) in {struct(a = 1): 1},
        sorted([3, 1, 2], key = lambda v: -v) == [3, 2, 1], max(["b", "aa"], key = len) == "aa"]
if not all(checks()):
    fail("a guarded key changed: %s" % checks())
d = {}
for i in range(200000):
    d[i % 100] = i
sweep(name = "s", base = profile(model = "m"))
`
	loadScript(t, src, starlark.Options{})
}
