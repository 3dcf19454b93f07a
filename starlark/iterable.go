package starlark

// Iterables without a length: s.codepoints(), s.codepoint_ords() and
// b.elems() yield one element per character or byte but say nothing of
// how many, so a check that asks starlark.Len (-1 for them) would let
// list(s.codepoints()) build 16 million elements in one call, beyond the
// reach of the step limit, the memory checks and Ctrl-C. They are counted
// instead, up to the bound.

import (
	"go.starlark.net/starlark"
)

// elementCount is how many elements v yields: its length when it has one,
// else (an iterable without one) its elements counted, the count stopping
// past MaxElements (its work charged); -1 when v is not iterable.
func elementCount(th *starlark.Thread, v starlark.Value) int {
	if n := starlark.Len(v); n >= 0 {
		return n
	}
	it, ok := v.(starlark.Iterable)
	if !ok {
		return -1
	}
	n := 0
	for range starlark.Elements(it) {
		if n++; n > MaxElements {
			break
		}
	}
	charge(th, n>>4)
	return n
}

// checkIterables refuses a call that would build or walk more than
// MaxElements elements from one of its arguments.
func checkIterables(th *starlark.Thread, what string, args starlark.Tuple) error {
	for _, a := range args {
		if n := elementCount(th, a); n > 0 {
			if err := checkElements(th, what, n); err != nil {
				return err
			}
		}
	}
	return nil
}
