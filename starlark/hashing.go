package starlark

// What hashes values: a dict's keys (in a literal, a comprehension, x[k],
// x[k] = v, get, pop, setdefault, update, dict(), |), a set's elements
// (set(), add, remove, discard, union, update, the set operators). A
// tuple's hash walks it whole, with no depth bound, inside one step: a
// tuple that shares its parts (x = (x, x) sixty times) hashes 2^60 values
// where neither the step limit nor Ctrl-C can stop it. Such an operation is
// charged for what it hashes, counted as compared counts (shared parts each
// time they occur), and refused before it runs when that passes the step
// limit.

import (
	"fmt"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"
)

// keyGuard is the guard the rewrite wraps a dict key or an index in.
const keyGuard = guardName + "key"

// errNested refuses a key its hash would recurse through too deeply.
var errNested = fmt.Errorf("a key nested more than %d deep: its hash would recurse as deep; use a flatter key", maxNesting)

// hashWork is about how many steps hashing v takes: one for each value a
// tuple or struct inside it holds (a shared part each time it occurs), one
// per 256 bytes of a string; an int, a short string or a value that cannot
// be hashed costs nothing. It stops counting past limit (no limit below 0:
// then nothing is counted, nothing being charged), and refuses a value
// nested more than maxNesting deep (its hash would recurse as deep).
func hashWork(v starlark.Value, limit int) (int, error) {
	if limit < 0 {
		return 0, nil
	}
	type item struct {
		v     starlark.Value
		depth int
	}
	n := 0
	stack := []item{{v, 0}}
	for len(stack) > 0 && n <= limit {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if it.depth > maxNesting {
			return 0, errNested
		}
		switch v := it.v.(type) {
		case starlark.String:
			n += len(v) >> 8
		case starlark.Bytes:
			n += len(v) >> 8
		case starlark.Tuple:
			n += len(v)
			for _, e := range v {
				stack = append(stack, item{e, it.depth + 1})
			}
		case *starlarkstruct.Struct:
			names := v.AttrNames()
			n += len(names)
			for _, name := range names {
				if f, err := v.Attr(name); err == nil && f != nil {
					stack = append(stack, item{f, it.depth + 1})
				}
			}
		}
	}
	return n, nil
}

// keysWork is hashWork summed over what an iterable holds (a dict's keys,
// a list's, tuple's or set's elements), up to limit.
func keysWork(v starlark.Value, limit int) (int, error) {
	if limit < 0 {
		return 0, nil
	}
	switch v.(type) {
	case *starlark.List, starlark.Tuple, *starlark.Set, *starlark.Dict:
	default:
		return 0, nil // a range, a string's elements: ints and strings
	}
	n := 0
	for e := range starlark.Elements(v.(starlark.Iterable)) {
		w, err := hashWork(e, limit-n)
		if err != nil {
			return 0, err
		}
		if n = add(n, w); n > limit {
			break
		}
	}
	return n, nil
}

// pairKeys are the keys dict() and dict.update() hash of their
// arguments: a dict's keys, and the first of each pair a list or tuple of
// pairs holds (its value is not hashed).
func pairKeys(args starlark.Tuple) []starlark.Value {
	var keys []starlark.Value
	for _, a := range args {
		switch a := a.(type) {
		case *starlark.Dict:
			keys = append(keys, a.Keys()...)
		case *starlark.List, starlark.Tuple:
			for e := range starlark.Elements(a.(starlark.Iterable)) {
				if pair, ok := e.(starlark.Indexable); ok && pair.Len() == 2 {
					e = pair.Index(0)
				}
				keys = append(keys, e)
			}
		}
	}
	return keys
}

// spendHash charges what hashes keys (hashWork of each of keys, keysWork
// of each of iterables) and refuses it past the step limit.
func spendHash(th *starlark.Thread, what string, keys, iterables []starlark.Value) error {
	limit := budget(th)
	n := 0
	for i, v := range append(keys[:len(keys):len(keys)], iterables...) {
		work := hashWork
		if i >= len(keys) {
			work = keysWork
		}
		w, err := work(v, max(limit-n, 0))
		if err != nil {
			return err
		}
		n = add(n, w)
	}
	if n == 0 {
		return nil
	}
	return spend(th, what, n)
}

// checkHashBuiltin checks the built-ins that hash what they are given:
// dict() its pairs' keys and set() its elements.
func checkHashBuiltin(th *starlark.Thread, name string, args starlark.Tuple) error {
	switch name {
	case "dict":
		return spendHash(th, "dict()", pairKeys(args), nil)
	case "set":
		return spendHash(th, "set()", nil, args)
	}
	return nil
}

// checkHashMethod checks the methods of dicts and sets that hash their
// arguments (and, making a new set, the receiver's elements).
func checkHashMethod(th *starlark.Thread, name string, recv starlark.Value, args starlark.Tuple) error {
	what := name + "()"
	switch recv.(type) {
	case *starlark.Dict:
		switch name {
		case "get", "pop", "setdefault":
			return spendHash(th, what, args[:min(len(args), 1)], nil)
		case "update":
			return spendHash(th, what, pairKeys(args), nil)
		}
	case *starlark.Set:
		switch name {
		case "add", "remove", "discard":
			return spendHash(th, what, args[:min(len(args), 1)], nil)
		case "union", "update", "difference", "intersection", "symmetric_difference", "issubset", "issuperset":
			return spendHash(th, what, nil, append(starlark.Tuple{recv}, args...))
		}
	}
	return nil
}

// checkHashBinary checks x op y of dicts or sets, which hash the keys of
// both.
func checkHashBinary(th *starlark.Thread, op syntax.Token, x, y starlark.Value) error {
	switch op {
	case syntax.PIPE, syntax.AMP, syntax.CIRCUMFLEX, syntax.MINUS:
	default:
		return nil
	}
	_, xd := x.(*starlark.Dict)
	_, xs := x.(*starlark.Set)
	if !xd && !xs {
		return nil
	}
	return spendHash(th, "x "+op.String()+" y", nil, []starlark.Value{x, y})
}

// keyBuiltin is the guard of a dict key or an index: it charges the key's
// hash and returns it.
func keyBuiltin(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	if err := spendHash(th, "hashing this key", args[:1], nil); err != nil {
		return nil, err
	}
	return args[0], nil
}
