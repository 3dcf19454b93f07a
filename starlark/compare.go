package starlark

// What compares values: ==, <, in, sorted, min, max, list.index and
// list.remove. The interpreter sees the step limit and Ctrl-C only between
// its steps, never inside a built-in, and a comparison walks its operands
// whole: a == b of two lists of a million references to one list of a
// million ints compares 10^12 ints in one step. Such an operation is
// charged for its operands' whole size (their shared parts counted each
// time they occur, as printed counts them) and refused before it runs when
// that passes the step limit; within it, it runs for at most about the
// time the limit allows.

import (
	"fmt"
	"math/bits"
	"slices"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"
)

// spend charges n steps to an operation about to run in one go, and
// refuses it when they take the thread past its step limit.
func spend(th *starlark.Thread, what string, n int) error {
	left := budget(th)
	charge(th, n)
	g, _ := th.Local(guardKey).(*guard)
	if g == nil || g.maxSteps == 0 || th.Steps <= g.maxSteps {
		return nil
	}
	return fmt.Errorf("%s would take more than the %d steps left of the script's step limit of %d steps "+
		"(it walks its operands whole, a part they share each time it occurs): use smaller or less nested values", what, left, g.maxSteps)
}

// budget is how many steps the thread has left (0 past its limit), or -1
// without a limit: what a comparison's cost is counted up to.
func budget(th *starlark.Thread) int {
	g, _ := th.Local(guardKey).(*guard)
	if g == nil || g.maxSteps == 0 {
		return -1
	}
	return int(max(int64(g.maxSteps)-int64(th.Steps), 0))
}

// compareDepth bounds the walk of nested values, as the interpreter bounds
// a comparison's recursion.
const compareDepth = 1000

// compared is about how many steps comparing v whole takes: one for each
// value it holds at any depth (a shared part each time it occurs), one more
// per 16 bytes of a string inside it; a value that is no list, tuple, dict or set
// (a profile, which compares by identity) is one. It stops counting past
// limit (no limit below 0: then nothing is counted, nothing being charged).
func compared(v starlark.Value, limit int) int {
	if limit < 0 {
		return 0
	}
	n := 0
	var walk func(v starlark.Value, depth int)
	walk = func(v starlark.Value, depth int) {
		if n > limit || depth > compareDepth {
			return
		}
		n++
		switch v := v.(type) {
		case starlark.String:
			if depth > 0 { // a string operand's own bytes are charged with the operation (work)
				n += len(v) >> 4
			}
		case starlark.Bytes:
			if depth > 0 {
				n += len(v) >> 4
			}
		case starlark.Tuple:
			for _, e := range v {
				walk(e, depth+1)
			}
		case *starlark.List:
			for i := 0; i < v.Len() && n <= limit; i++ {
				walk(v.Index(i), depth+1)
			}
		case *starlarkstruct.Struct: // compared and hashed field by field
			for _, name := range v.AttrNames() {
				if f, err := v.Attr(name); err == nil && f != nil && n <= limit {
					walk(f, depth+1)
				}
			}
		case *starlark.Dict, *starlark.Set:
			it := v.(starlark.Iterable).Iterate()
			defer it.Done()
			var k starlark.Value
			for n <= limit && it.Next(&k) {
				walk(k, depth+1)
				if d, ok := v.(*starlark.Dict); ok {
					e, _, _ := d.Get(k)
					walk(e, depth+1)
				}
			}
		}
	}
	walk(v, 0)
	return n
}

// checkCompare charges a comparison or a membership test: the smaller
// operand walked (nothing for == and != of sequences of different lengths,
// which the interpreter answers from their lengths), every element of a
// list or tuple searched, a dict or set key hashed.
func checkCompare(th *starlark.Thread, op syntax.Token, x, y starlark.Value) error {
	what := "x " + op.String() + " y"
	limit := budget(th)
	switch op {
	case syntax.IN, syntax.NOT_IN:
		switch y.(type) {
		case *starlark.List, starlark.Tuple: // x compared with each element
			return spend(th, what, compared(y, limit))
		}
		return spend(th, what, compared(x, limit)) // hashed
	case syntax.EQL, syntax.NEQ:
		xs, xok := x.(starlark.Indexable)
		ys, yok := y.(starlark.Indexable)
		if xok && yok && xs.Len() != ys.Len() {
			return nil
		}
	}
	cx := compared(x, limit)
	return spend(th, what, compared(y, cx))
}

// checkSort charges sorted(), min() and max() for their comparisons: each
// element is compared about log n times (once for min and max); with a
// key= the keys are compared, each call of it charged as it runs.
func checkSort(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) error {
	if len(args) == 0 {
		return nil
	}
	n := max(elementCount(th, args[0]), 0)
	times := 1 // how often an element is compared
	if name == "sorted" {
		times = max(bits.Len(uint(n)), 1)
	}
	k := slices.IndexFunc(kwargs, func(kv starlark.Tuple) bool { return kv[0] == starlark.String("key") })
	if k < 0 {
		return spend(th, name+"()", mul(max(n, compared(args[0], budget(th))), times))
	}
	kwargs[k][1] = chargedKey(name, kwargs[k][1], times) // the call's own kwargs, made for it
	return spend(th, name+"()", mul(n, times))
}

// chargedKey wraps a sort's key function: each key it returns is charged
// for the comparisons it will take part in (times each) before the sort
// compares it, and refused past the step limit.
func chargedKey(name string, key starlark.Value, times int) starlark.Value {
	return starlark.NewBuiltin(keyGuard, func(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		v, err := starlark.Call(th, key, args, kwargs)
		if err != nil {
			return nil, err
		}
		return v, spend(th, name+"()", mul(compared(v, budget(th)), times))
	})
}
