package starlark

import (
	"fmt"
	"math/bits"
	"runtime"
	"runtime/metrics"
	"strings"

	"go.starlark.net/lib/json"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Bounds of what a script may build. go.starlark.net caps a string or
// list repetition at 2^30 bytes or elements (16 GiB of list) and nothing
// else: a join, a range turned into a list, a concatenation doubled in a
// loop each allocate in one step, where neither the step limit nor
// Ctrl-C can stop them. Every operation that builds a value in proportion
// to its operands (the operators, the built-ins, the methods of strings,
// lists, dicts and sets, json) is checked before it runs (guard) and
// charged steps for its work; what a script holds in all is bounded by
// MaxMemory, measured every memoryCheckSteps steps.
const (
	// MaxStringBytes bounds a string or bytes value one operation builds.
	MaxStringBytes = 16 << 20
	// MaxElements bounds a list, tuple, dict or set one operation builds
	// (16 MiB of values).
	MaxElements = 1 << 20
	// MaxIntBits bounds an integer an operation builds (about 20,000
	// digits) and maxIntDigits a string int() parses (as Python's 4,300
	// digits, against quadratic conversions).
	MaxIntBits   = 1 << 16
	maxIntDigits = 4300
	// DefaultMaxMemory bounds the heap a load may grow by when
	// Options.MaxMemory is 0.
	DefaultMaxMemory = 1 << 30
	// memoryCheckSteps is how often the heap is measured.
	memoryCheckSteps = 1 << 16
	// maxNesting bounds the nesting of a value an operation walks to
	// print or compare it.
	maxNesting = 1000
)

// guardName prefixes the built-ins the rewritten script calls (rewrite.go):
// no identifier can name them, so a script cannot shadow them.
const guardName = "aiperf:"

// guardKey is the thread-local key of the loader's guard.
const guardKey = "aiperf.guard"

// bigAlloc is the size from which an operation checks the memory bound
// before it builds (smaller ones wait for the next checkpoint).
const bigAlloc = 1 << 20

// guard holds what the checks need: the memory bound and baseline.
type guard struct {
	maxMemory uint64
	baseline  uint64
	maxSteps  uint64            // the step limit of a thread (the script's, or a planner call's)
	slice     starlark.Callable // x[lo:hi:step], compiled without the rewrite
}

// heapBytes is the heap's live and not yet swept objects.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// memory reports the script's heap growth when it is over the bound
// (after a collection: garbage does not count).
func (g *guard) memory() (uint64, bool) {
	if heapBytes() < g.baseline+g.maxMemory {
		return 0, false
	}
	runtime.GC()
	if h := heapBytes(); h >= g.baseline+g.maxMemory {
		return h - g.baseline, true
	}
	return 0, false
}

// checkMemory refuses an operation about to build n more bytes when the
// script is already over its memory bound.
func checkMemory(th *starlark.Thread, n int) error {
	g, _ := th.Local(guardKey).(*guard)
	if g == nil || n < bigAlloc {
		return nil
	}
	if grown, over := g.memory(); over {
		return g.overMemory(grown)
	}
	return nil
}

// overMemory is the error of a script over its memory bound.
func (g *guard) overMemory(grown uint64) error {
	return fmt.Errorf("script exceeded its memory bound of %d MiB (it grew the heap by %d MiB)", g.maxMemory>>20, grown>>20)
}

// charge counts n steps of work against the step limit.
func charge(th *starlark.Thread, n int) {
	if n > 0 {
		th.Steps += uint64(n)
	}
}

// tooLarge is the error of an operation that would build too much.
func tooLarge(what string, n int, unit string, limit int) error {
	return fmt.Errorf("%s would build %d %s, more than the %d a script may build in one operation", what, n, unit, limit)
}

// add is a + b for sizes, saturated.
func add(a, b int) int {
	if s := a + b; s >= a {
		return s
	}
	return int(^uint(0) >> 1)
}

// mul is a × b for sizes ≥ 0, saturated.
func mul(a, b int) int {
	if a <= 0 || b <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > uint64(^uint(0)>>1) {
		return int(^uint(0) >> 1)
	}
	return int(lo)
}

// checkString, checkElements and checkInt refuse a value of n bytes,
// elements or bits beyond the bounds, and charge its building.
func checkString(th *starlark.Thread, what string, n int) error {
	if n > MaxStringBytes {
		return tooLarge(what, n, "bytes", MaxStringBytes)
	}
	charge(th, n>>8)
	return checkMemory(th, n)
}

func checkElements(th *starlark.Thread, what string, n int) error {
	if n > MaxElements {
		return tooLarge(what, n, "elements", MaxElements)
	}
	charge(th, n>>4)
	return checkMemory(th, mul(n, 16))
}

func checkInt(what string, n int) error {
	if n > MaxIntBits {
		return tooLarge(what, n, "bits of integer", MaxIntBits)
	}
	return nil
}

// sizeOf is a value's own size: a string's bytes, a container's elements,
// an int's bits; unit says which ("" for other values).
func sizeOf(v starlark.Value) (n int, unit string) {
	switch v := v.(type) {
	case starlark.String:
		return len(v), "bytes"
	case starlark.Bytes:
		return len(v), "bytes"
	case starlark.Int:
		return v.BigInt().BitLen(), "bits"
	case starlark.Sequence:
		return v.Len(), "elements"
	case starlark.Indexable:
		return v.Len(), "elements"
	}
	return 0, ""
}

// checkSized refuses a result of n in unit (as sizeOf) beyond its bound.
func checkSized(th *starlark.Thread, what string, n int, unit string) error {
	switch unit {
	case "bytes":
		return checkString(th, what, n)
	case "elements":
		return checkElements(th, what, n)
	case "bits":
		return checkInt(what, n)
	}
	return nil
}

// work charges an operation that reads x and y (a comparison, a search).
func work(th *starlark.Thread, vs ...starlark.Value) {
	for _, v := range vs {
		switch n, unit := sizeOf(v); unit {
		case "bytes":
			charge(th, n>>8)
		case "elements":
			charge(th, n>>2)
		}
	}
}

// checkBinary checks x op y before it is computed.
func checkBinary(th *starlark.Thread, op syntax.Token, x, y starlark.Value) error {
	if err := checkHashBinary(th, op, x, y); err != nil {
		return err
	}
	what := "x " + op.String() + " y"
	nx, ux := sizeOf(x)
	ny, uy := sizeOf(y)
	switch op {
	case syntax.PLUS, syntax.PIPE:
		if ux == "bits" && uy == "bits" {
			return checkInt(what, max(nx, ny)+1)
		}
		if ux == uy {
			return checkSized(th, what, add(nx, ny), ux)
		}
		if l, ok := x.(*starlark.List); ok && op == syntax.PLUS { // list += iterable
			return checkElements(th, what, add(l.Len(), max(elementCount(th, y), 0)))
		}
	case syntax.STAR:
		if ux == "bits" && uy == "bits" {
			return checkInt(what, add(nx, ny))
		}
		if n, ok := repeatCount(y); ok && ux != "bits" {
			return checkSized(th, "repeat", mul(nx, n), ux)
		}
		if n, ok := repeatCount(x); ok && uy != "bits" {
			return checkSized(th, "repeat", mul(ny, n), uy)
		}
	case syntax.PERCENT:
		if f, ok := x.(starlark.String); ok {
			return checkFormat(th, "x % y", string(f), "%", y)
		}
	case syntax.EQL, syntax.NEQ, syntax.LT, syntax.GT, syntax.LE, syntax.GE, syntax.IN, syntax.NOT_IN:
		if err := checkCompare(th, op, x, y); err != nil {
			return err
		}
	}
	work(th, x, y)
	return nil
}

// repeatCount is an int operand of a repetition (saturated).
func repeatCount(v starlark.Value) (int, bool) {
	i, ok := v.(starlark.Int)
	if !ok {
		return 0, false
	}
	if n, ok := i.Int64(); ok {
		return int(max(n, 0)), true
	}
	if i.Sign() < 0 {
		return 0, true
	}
	return int(^uint(0) >> 1), true
}

// checkCall checks a call of fn before it is made: the built-ins and
// methods that build in proportion to their arguments.
func checkCall(th *starlark.Thread, fn starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) error {
	b, ok := fn.(*starlark.Builtin)
	if !ok {
		return nil
	}
	if recv := b.Receiver(); recv != nil {
		return checkMethod(th, b.Name(), recv, args)
	}
	name := b.Name()
	if starlark.Universe[name] != fn && json.Module.Members[strings.TrimPrefix(name, "json.")] != fn {
		return nil
	}
	switch name {
	case "list", "tuple", "sorted", "set", "dict", "enumerate", "reversed", "min", "max", "any", "all", "zip":
		if err := checkIterables(th, name+"()", args); err != nil {
			return err
		}
		if name == "sorted" || name == "min" || name == "max" {
			return checkSort(th, name, args, kwargs)
		}
		return checkHashBuiltin(th, name, args)
	case "str", "repr", "print", "fail", "json.encode", "json.indent":
		vals := args
		for _, kv := range kwargs {
			vals = append(vals[:len(vals):len(vals)], kv[1])
		}
		total := 0
		for _, v := range vals {
			n, err := printed(th, v)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			total = add(total, n)
		}
		if name == "json.indent" { // a newline and an indent a value
			total = mul(total, 8)
		}
		return checkString(th, name+"()", total)
	case "json.decode":
		if len(args) > 0 {
			n, _ := sizeOf(args[0])
			return checkString(th, "json.decode()", mul(n, 16)) // a value is at least two bytes of JSON
		}
	case "int":
		if len(args) > 0 {
			if s, ok := args[0].(starlark.String); ok && len(s) > maxIntDigits {
				return fmt.Errorf("int: a string of %d characters, more than the %d digits an int may be parsed from", len(s), maxIntDigits)
			}
		}
	case "hash":
		work(th, args...)
	}
	return nil
}

// checkMethod checks a method call on recv.
func checkMethod(th *starlark.Thread, name string, recv starlark.Value, args starlark.Tuple) error {
	what := name + "()"
	n, _ := sizeOf(recv)
	if err := checkHashMethod(th, name, recv, args); err != nil {
		return err
	}
	switch recv := recv.(type) {
	case starlark.String:
		s := string(recv)
		switch name {
		case "join":
			return checkJoin(th, s, args)
		case "replace":
			return checkReplace(th, s, args)
		case "format":
			return checkFormat(th, what, s, "{", args...)
		case "split", "rsplit":
			pieces := len(s)/2 + 1 // at most, split on white space
			if len(args) > 0 {
				if sep, ok := args[0].(starlark.String); ok && sep != "" {
					pieces = strings.Count(s, string(sep)) + 1
				}
			}
			return checkElements(th, what, pieces)
		case "splitlines":
			return checkElements(th, what, strings.Count(s, "\n")+strings.Count(s, "\r")+1)
		}
	case *starlark.List:
		switch name {
		case "extend":
			if len(args) > 0 {
				return checkElements(th, what, add(n, max(elementCount(th, args[0]), 0)))
			}
		case "append", "insert":
			return checkElements(th, what, n+1)
		case "index", "remove": // an element compared with each
			return spend(th, what, compared(recv, budget(th)))
		}
	case *starlark.Dict, *starlark.Set:
		switch name {
		case "update", "union", "symmetric_difference":
			total := n
			for _, a := range args {
				total = add(total, max(elementCount(th, a), 0))
			}
			return checkElements(th, what, total)
		case "difference", "intersection", "issubset", "issuperset":
			if err := checkIterables(th, what, args); err != nil {
				return err
			}
		}
	}
	charge(th, n>>4) // a method reads its receiver at most once
	return nil
}

// checkJoin bounds sep.join(iterable).
func checkJoin(th *starlark.Thread, sep string, args starlark.Tuple) error {
	if len(args) == 0 {
		return nil
	}
	it, ok := args[0].(starlark.Iterable)
	if !ok {
		return nil
	}
	if n := starlark.Len(it); n > MaxElements {
		return tooLarge("join()", n, "elements", MaxElements)
	}
	total, count := 0, 0
	for v := range starlark.Elements(it) {
		if s, ok := v.(starlark.String); ok {
			total = add(total, len(s))
		}
		if count++; count > MaxElements {
			return tooLarge("join()", count, "elements", MaxElements)
		}
	}
	return checkString(th, "join()", add(total, mul(max(count-1, 0), len(sep))))
}

// checkReplace bounds s.replace(old, new[, count]).
func checkReplace(th *starlark.Thread, s string, args starlark.Tuple) error {
	if len(args) < 2 {
		return nil
	}
	old, ok1 := args[0].(starlark.String)
	repl, ok2 := args[1].(starlark.String)
	if !ok1 || !ok2 {
		return nil
	}
	k := strings.Count(s, string(old))
	if len(args) > 2 {
		if c, ok := args[2].(starlark.Int); ok {
			if n, ok := c.Int64(); ok && n >= 0 && n < int64(k) {
				k = int(n)
			}
		}
	}
	charge(th, len(s)>>8)
	return checkString(th, "replace()", add(len(s), mul(k, len(repl))))
}
