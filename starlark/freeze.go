package starlark

// What a module's end does: its globals are frozen, and go.starlark.net
// freezes a tuple (and a function's defaults and free variables) by
// walking it whole each time it occurs, with no memory of what it has
// walked: a global tuple that shares its parts (x = (x, x) sixty times)
// takes 2^60 steps to freeze, after the script's last step, where neither
// the step limit nor Ctrl-C can stop it. The freeze is counted first,
// charged, and refused when it passes the step limit.

import (
	"fmt"
	"sort"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"
)

// freezeWork is about how many values Freeze visits in v: a tuple, a
// function and what they hold each time they occur, a list, dict, set or
// struct once (Freeze marks them). It stops counting past limit.
func freezeWork(v starlark.Value, once map[any]bool, limit int) int {
	n := 0
	stack := []starlark.Value{v}
	push := func(v starlark.Value) {
		if v != nil {
			stack = append(stack, v)
		}
	}
	for len(stack) > 0 && n <= limit {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n++
		switch v := v.(type) {
		case starlark.Tuple:
			stack = append(stack, v...)
		case *starlark.Function:
			for i := range v.NumFreeVars() {
				_, fv := v.FreeVar(i)
				push(fv)
			}
			for i := range v.NumParams() {
				push(v.ParamDefault(i))
			}
		case *starlark.Builtin: // a bound method ([…].append): its receiver is frozen
			push(v.Receiver())
		case *starlark.List, *starlark.Dict, *starlark.Set, *starlarkstruct.Struct:
			if once[v] {
				continue
			}
			once[v] = true
			switch v := v.(type) {
			case *starlarkstruct.Struct:
				for _, name := range v.AttrNames() {
					f, _ := v.Attr(name)
					push(f)
				}
			case *starlark.Dict:
				for k, x := range v.Entries() {
					push(k)
					push(x)
				}
			default:
				stack = append(stack, elementsOf(v.(starlark.Iterable))...)
			}
		}
	}
	return n
}

// elementsOf is what an iterable yields.
func elementsOf(it starlark.Iterable) []starlark.Value {
	var out []starlark.Value
	for v := range starlark.Elements(it) {
		out = append(out, v)
	}
	return out
}

// checkFreeze charges the freeze of a module's globals (a quarter step a
// value) and refuses it, naming the first global that goes past the step
// limit and where the file assigns it.
func (l *loader) checkFreeze(f *syntax.File, globals starlark.StringDict) error {
	names := make([]string, 0, len(globals))
	for name := range globals {
		names = append(names, name)
	}
	sort.Strings(names)
	once := map[any]bool{}
	for _, name := range names {
		left := budget(l.thread)
		if left < 0 {
			return nil
		}
		limit := mul(left, 4)
		n := freezeWork(globals[name], once, limit)
		charge(l.thread, n/4)
		if n <= limit {
			continue
		}
		return &Error{Pos: assignedAt(f, name).String(), Msg: fmt.Sprintf("global %s: freezing it at the end of the module "+
			"would take more than the %d steps left of the script's step limit of %d steps (a tuple is walked each time it occurs): "+
			"build a value that shares fewer parts, or keep it in a function's local variable", name, left, l.maxSteps)}
	}
	return nil
}

// assignedAt is where the file first assigns or defines the global name at
// its top level (the file's start when it does not).
func assignedAt(f *syntax.File, name string) syntax.Position {
	var found syntax.Position
	var stmts func(list []syntax.Stmt)
	stmts = func(list []syntax.Stmt) {
		for _, s := range list {
			switch s := s.(type) {
			case *syntax.AssignStmt:
				syntax.Walk(s.LHS, func(n syntax.Node) bool {
					if id, ok := n.(*syntax.Ident); ok && id.Name == name && !found.IsValid() {
						found = id.NamePos
					}
					return true
				})
			case *syntax.DefStmt:
				if s.Name.Name == name && !found.IsValid() {
					found = s.Name.NamePos
				}
			case *syntax.IfStmt:
				stmts(s.True)
				stmts(s.False)
			case *syntax.ForStmt:
				stmts(s.Body)
			}
		}
	}
	stmts(f.Stmts)
	if !found.IsValid() {
		return syntax.MakePosition(&f.Path, 1, 1)
	}
	return found
}
