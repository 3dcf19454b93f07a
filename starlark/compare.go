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

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// spend charges n steps to an operation about to run in one go, and
// refuses it when they take the thread past its step limit.
func spend(th *starlark.Thread, what string, n int) error {
	charge(th, n)
	g, _ := th.Local(guardKey).(*guard)
	if g == nil || g.maxSteps == 0 || th.Steps <= g.maxSteps {
		return nil
	}
	return fmt.Errorf("%s would take about %d steps, past the script's step limit of %d steps", what, n, g.maxSteps)
}

// walked is the cost of walking v whole: its printed size in steps (16
// bytes a step), 0 for a value that holds no others.
func walked(th *starlark.Thread, v starlark.Value) int {
	switch v.(type) {
	case *starlark.List, starlark.Tuple, *starlark.Dict, *starlark.Set:
		n, _ := printed(th, v) // nested too deep: the comparison fails at its own depth limit
		return n >> 4
	}
	return 0
}

// checkCompare charges a comparison or a membership test.
func checkCompare(th *starlark.Thread, op syntax.Token, x, y starlark.Value) error {
	what := "x " + op.String() + " y"
	switch op {
	case syntax.IN, syntax.NOT_IN:
		switch y.(type) {
		case *starlark.List, starlark.Tuple: // x compared with each element
			return spend(th, what, walked(th, y))
		}
		return spend(th, what, walked(th, x)) // hashed
	}
	return spend(th, what, min(walked(th, x), walked(th, y)))
}

// checkSort charges sorted(), min() and max() for their comparisons: each
// element is compared about log n times (once for min and max).
func checkSort(th *starlark.Thread, name string, args starlark.Tuple) error {
	if len(args) == 0 {
		return nil
	}
	n := max(elementCount(th, args[0]), 0)
	cost := walked(th, args[0])
	if name == "sorted" {
		cost = mul(max(n, cost), bits.Len(uint(n)))
	}
	return spend(th, name+"()", cost)
}
