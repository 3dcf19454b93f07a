package starlark_test

import (
	"testing"

	"github.com/aiperf-go/aiperf/starlark"
	"github.com/stretchr/testify/assert"
)

// TestUnsizedIterables: s.codepoints(), s.codepoint_ords() and b.elems()
// have no length, yet every built-in that builds or walks them is bounded
// as list(s.elems()) is: list(s.codepoints()) of a 16 MB string used to
// build 16 million elements in one call (1.9 GB, a minute, Ctrl-C held
// off), and str() of one a 16 MB string past the print bound.
func TestUnsizedIterables(t *testing.T) {
	t.Parallel()
	const s = "s = 'a' * 2000000\n"
	const elems = "elements, more than the 1048576 a script may build in one operation"
	tests := []struct{ name, src, pos, msg string }{
		{"list of codepoints", s + "x = list(s.codepoints())\n", "2:9", "list() would build 1048577 " + elems},
		{"list of codepoint_ords", s + "x = list(s.codepoint_ords())\n", "2:9", "list() would build 1048577 " + elems},
		{"list of bytes' elems", "b = b'a' * 2000000\nx = list(b.elems())\n", "2:9", "list() would build 1048577 " + elems},
		{"list of elems", s + "x = list(s.elems())\n", "2:9", "list() would build 2000000 " + elems},
		{"list of elem_ords", s + "x = list(s.elem_ords())\n", "2:9", "list() would build 2000000 " + elems},
		{"tuple", s + "x = tuple(s.codepoints())\n", "2:10", "tuple() would build 1048577 " + elems},
		{"set", s + "x = set(s.codepoint_ords())\n", "2:8", "set() would build 1048577 " + elems},
		{"sorted", s + "x = sorted(s.codepoints())\n", "2:11", "sorted() would build 1048577 " + elems},
		{"enumerate", s + "x = enumerate(s.codepoints())\n", "2:14", "enumerate() would build 1048577 " + elems},
		{"zip", s + "x = zip(s.codepoints(), [1])\n", "2:8", "zip() would build 1048577 " + elems},
		{"dict", s + "x = dict(s.codepoints())\n", "2:9", "dict() would build 1048577 " + elems},
		{"reversed", s + "x = reversed(s.codepoints())\n", "2:13", "reversed() would build 1048577 " + elems},
		{"max", s + "x = max(s.codepoint_ords())\n", "2:8", "max() would build 1048577 " + elems},
		{"extend", s + "x = []\nx.extend(s.codepoints())\n", "3:9", "extend() would build 1048577 " + elems},
		{"list +=", s + "def f():\n    x = [0]\n    x += s.codepoints()\nf()\n", "4:7", "x + y would build 1048578 " + elems},
		{"set union", s + "x = set().union(s.codepoints())\n", "2:16", "union() would build 1048577 " + elems},
		{"set difference", s + "x = set([1]).difference(s.codepoint_ords())\n", "2:24", "difference() would build 1048577 " + elems},
		{"dict update", s + "x = {}\nx.update(s.codepoints())\n", "3:9", "update() would build 1048577 " + elems},
		{"join", s + "x = ''.join(s.codepoints())\n", "2:12", "join() would build 1048577 " + elems},
		{"str", "s = 'a' * 16000000\nx = str(s.codepoints())\n", "2:8", "str() would build"},
		{"json", "s = 'a' * 16000000\nx = json.encode(s.codepoints())\n", "2:16", "json.encode() would build"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			msg := oneScriptError(t, tt.src, tt.pos)
			assert.Contains(t, msg, tt.msg)
		})
	}
}

// TestUnsizedIterablesKeepSemantics: within the bound, the iterables still
// do what Starlark does, and a range still prints as its bounds.
func TestUnsizedIterablesKeepSemantics(t *testing.T) {
	t.Parallel()
	src := `s = "añb"
checks = [list(s.codepoints()) == ["a", "ñ", "b"], tuple(s.codepoint_ords()) == (97, 241, 98),
    list(b"ab".elems()) == [97, 98], sorted(s.codepoints()) == ["a", "b", "ñ"],
    "-".join(s.codepoints()) == "a-ñ-b", str(s.codepoints()) == '"añb".codepoints()',
    len(str(range(1 << 40))) < 30, json.encode(s.codepoints()) == '["a","ñ","b"]']
if not all(checks):
    fail("changed: %s" % checks)
sweep(name = "s", base = profile(model = "m"))
`
	loadScript(t, src, starlark.Options{})
}

// TestLongBuiltinsRefused: a built-in that would run past the step limit in
// one call (where neither the limit nor Ctrl-C can stop it) is refused
// before it runs: == of lists that share a million-element part a million
// times (10^12 comparisons, Ctrl-C ignored), a sort of 900,000 strings.
func TestLongBuiltinsRefused(t *testing.T) {
	t.Parallel()
	const shared = "l = list(range(1000000))\nm = list(range(1000000))\na = [l] * 1000000\nb = [m] * 1000000\n"
	tests := []struct{ name, src, pos, msg string }{
		{"equal", shared + "x = a == b\n", "5:7", "x == y would take more than the"},
		{"less", shared + "x = a < b\n", "5:7", "x < y would take more than the"},
		{"in", shared + "x = m in a\n", "5:7", "x in y would take more than the"},
		{"index", shared + "x = a.index(m)\n", "5:12", "index() would take more than the"},
		{"max", shared + "x = max(a)\n", "5:8", "max() would take more than the"},
		{"sorted", "l = [str(i) for i in range(300000)] * 3\nx = sorted(l)\n", "2:11", "sorted() would take more than the"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			msg := oneScriptError(t, tt.src, tt.pos)
			assert.Contains(t, msg, tt.msg)
			assert.Contains(t, msg, "steps left of the script's step limit of 10000000 steps")
		})
	}
}

// TestOrdinaryComparisonsAllowed: what sweep scripts do with their
// profiles stays far under the step limit: a profile compares by identity
// and costs one step however many options it holds, sorting with a key=
// compares the keys, and == of sequences of different lengths is answered
// from their lengths.
func TestOrdinaryComparisonsAllowed(t *testing.T) {
	t.Parallel()
	src := `base = profile(model = "m")
ps = [base.replace(concurrency = 1 + i % 64) for i in range(1300)]
by = sorted(ps, key = lambda p: p.concurrency)
out = []
for p in ps[:200]:
    if p not in out:
        out.append(p)
hits = len([p for p in ps[:100] if p in ps])
empty = len([1 for i in range(1000) if ps == []])
ds = sorted([{"c": i % 7, "i": i} for i in range(5000)], key = lambda d: d["c"])
sweep(name = "s", base = base)
`
	loadScript(t, src, starlark.Options{})
}
