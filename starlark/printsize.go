package starlark

// How large a value prints: the bound of every operation that writes
// values into a string (format, %, str, repr, json).

import (
	"fmt"
	"strings"
	"unsafe"

	"go.starlark.net/starlark"
)

// checkFormat bounds a format's result: its text plus, for every place a
// value is written (a mark), the largest value printed.
func checkFormat(th *starlark.Thread, what, format, mark string, args ...starlark.Value) error {
	largest := 0
	for _, a := range args {
		vals := []starlark.Value{a}
		switch a := a.(type) {
		case starlark.Tuple:
			vals = a
		case *starlark.Dict:
			vals = dictValues(a)
		}
		for _, v := range vals {
			n, err := printed(th, v)
			if err != nil {
				return err
			}
			largest = max(largest, n)
		}
	}
	return checkString(th, what, add(len(format), mul(strings.Count(format, mark), largest)))
}

// printed is how many bytes v takes printed by str or repr (at most: a
// string's escapes aside), charging the walk. The walk remembers the size
// of each list, dict, set and tuple it has seen, so a value that shares
// its parts costs its distinct parts.
func printed(th *starlark.Thread, v starlark.Value) (int, error) {
	w := sizer{seen: map[any]int{}}
	n, err := w.size(v, 0)
	charge(th, w.visited>>2)
	return n, err
}

type sizer struct {
	seen    map[any]int // by a container's identity
	visited int
}

func (w *sizer) size(v starlark.Value, depth int) (int, error) {
	if depth > maxNesting {
		return 0, fmt.Errorf("a value nested more than %d deep", maxNesting)
	}
	w.visited++
	var (
		key   any
		elems func(yield func(starlark.Value) bool)
		each  = 2     // ", " between elements
		stop  = false // stop walking past MaxStringBytes (the walks of containers say the whole size)
	)
	switch v := v.(type) {
	case starlark.String:
		return len(v) + 2, nil
	case starlark.Bytes:
		return 4*len(v) + 3, nil
	case starlark.Int:
		return v.BigInt().BitLen()/3 + 2, nil
	case *starlark.List:
		key, elems = v, starlark.Elements(v)
	case *starlark.Set:
		key, elems = v, starlark.Elements(v)
	case starlark.Tuple:
		if len(v) > 0 {
			key = unsafe.SliceData(v)
		}
		elems = starlark.Elements(v)
	case *starlark.Dict:
		key, each = v, 4 // ": " and ", "
		elems = func(yield func(starlark.Value) bool) {
			for k, x := range v.Entries() {
				if !yield(k) || !yield(x) {
					return
				}
			}
		}
	case starlark.Iterable: // s.codepoints(), s.elems(), b.elems(): the list they yield
		if v.Type() == "range" {
			return 64, nil // its bounds
		}
		elems, stop = starlark.Elements(v), true
	case starlark.HasAttrs: // a struct or module: its fields
		each = 4
		elems = func(yield func(starlark.Value) bool) {
			for _, name := range v.AttrNames() {
				if f, err := v.Attr(name); err == nil && f != nil && (!yield(starlark.String(name)) || !yield(f)) {
					return
				}
			}
		}
	default:
		return 64, nil
	}
	if n, ok := w.seen[key]; ok && key != nil {
		return n, nil
	}
	total := 2
	for c := range elems {
		n, err := w.size(c, depth+1)
		if err != nil {
			return 0, err
		}
		if total = add(total, add(n, each)); stop && total > MaxStringBytes {
			break // over the bound already: the rest need not be walked
		}
	}
	if key != nil {
		w.seen[key] = total
	}
	return total, nil
}

// dictValues is a dict's values.
func dictValues(d *starlark.Dict) []starlark.Value {
	out := make([]starlark.Value, 0, d.Len())
	for _, v := range d.Entries() {
		out = append(out, v)
	}
	return out
}

// shown is v as an error message shows it: as str() prints it when that
// is short, else by its type and size (a value that shares its parts
// could print as exabytes).
func shown(v starlark.Value) string {
	w := sizer{seen: map[any]int{}}
	if n, err := w.size(v, 0); err == nil && n <= 1024 {
		return v.String()
	}
	if n, unit := sizeOf(v); unit != "" {
		return fmt.Sprintf("a %s of %d %s", v.Type(), n, unit)
	}
	return "a " + v.Type()
}
