package starlark

import (
	"fmt"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// guardedOps are the binary operators whose cost or result grows with
// their operands; the rewrite routes them through a guard. and, or (which
// do not evaluate both sides) and the integer-only operators are left.
var guardedOps = []syntax.Token{
	syntax.PLUS, syntax.MINUS, syntax.STAR, syntax.PERCENT, syntax.PIPE, syntax.AMP, syntax.CIRCUMFLEX,
	syntax.EQL, syntax.NEQ, syntax.LT, syntax.GT, syntax.LE, syntax.GE, syntax.IN, syntax.NOT_IN,
}

// augmented maps an augmented assignment to its operator.
var augmented = map[syntax.Token]syntax.Token{
	syntax.PLUS_EQ: syntax.PLUS, syntax.MINUS_EQ: syntax.MINUS, syntax.STAR_EQ: syntax.STAR,
	syntax.PERCENT_EQ: syntax.PERCENT, syntax.PIPE_EQ: syntax.PIPE, syntax.AMP_EQ: syntax.AMP,
	syntax.CIRCUMFLEX_EQ: syntax.CIRCUMFLEX,
}

// Names of the guards the rewritten script calls (guardName keeps a
// script from naming them).
func opGuard(op syntax.Token) string { return guardName + op.String() }

func augGuard(op syntax.Token) string { return guardName + op.String() + "=" }

const (
	callGuard  = guardName + "call"
	sliceGuard = guardName + "slice"
	noneName   = guardName + "None" // None, which a script may rebind
)

// rewriter rewrites a parsed file so that every operation that may build
// or read in proportion to its operands goes through a guard: x op y
// becomes op-guard(x, y); x op= y becomes x op= aug-guard(x, y), the guard
// checking the result's size and returning y (the assignment keeps its
// semantics, a list's += extending it in place); f(args) becomes
// call-guard(f, args); x[lo:hi:step] becomes slice-guard(x, lo, hi, step).
// Positions are kept, so errors point where they did.
type rewriter struct{ err error }

func rewriteFile(f *syntax.File) error {
	var r rewriter
	r.stmts(f.Stmts)
	return r.err
}

func (r *rewriter) stmts(list []syntax.Stmt) {
	for _, s := range list {
		r.stmt(s)
	}
}

func (r *rewriter) stmt(s syntax.Stmt) {
	switch s := s.(type) {
	case *syntax.AssignStmt:
		simple := pure(s.LHS) // before its keys are guarded
		r.target(s.LHS)
		s.RHS = r.expr(s.RHS)
		if op, ok := augmented[s.Op]; ok {
			if !simple && r.err == nil {
				r.err = syntax.Error{Pos: s.OpPos, Msg: fmt.Sprintf("%s to a target that calls a function is not supported: "+
					"assign the call's result to a variable first", s.Op)}
			}
			s.RHS = guardCall(augGuard(op), s.OpPos, s.LHS, s.RHS)
		}
	case *syntax.DefStmt:
		r.params(s.Params)
		r.stmts(s.Body)
	case *syntax.ExprStmt:
		s.X = r.expr(s.X)
	case *syntax.IfStmt:
		s.Cond = r.expr(s.Cond)
		r.stmts(s.True)
		r.stmts(s.False)
	case *syntax.ForStmt:
		s.X = r.expr(s.X)
		r.stmts(s.Body)
	case *syntax.WhileStmt:
		s.Cond = r.expr(s.Cond)
		r.stmts(s.Body)
	case *syntax.ReturnStmt:
		if s.Result != nil {
			s.Result = r.expr(s.Result)
		}
	}
}

// target rewrites the expressions inside an assignment's target (an
// index, a slice bound), not the target itself.
func (r *rewriter) target(e syntax.Expr) {
	switch e := e.(type) {
	case *syntax.IndexExpr:
		e.X, e.Y = r.expr(e.X), keyCall(r.expr(e.Y))
	case *syntax.DotExpr:
		e.X = r.expr(e.X)
	case *syntax.TupleExpr:
		for _, x := range e.List {
			r.target(x)
		}
	case *syntax.ListExpr:
		for _, x := range e.List {
			r.target(x)
		}
	case *syntax.ParenExpr:
		r.target(e.X)
	}
}

// params rewrites the default values of a function's parameters.
func (r *rewriter) params(list []syntax.Expr) {
	for _, p := range list {
		if b, ok := p.(*syntax.BinaryExpr); ok && b.Op == syntax.EQ {
			b.Y = r.expr(b.Y)
		}
	}
}

func (r *rewriter) exprs(list []syntax.Expr) {
	for i, e := range list {
		list[i] = r.expr(e)
	}
}

func (r *rewriter) expr(e syntax.Expr) syntax.Expr {
	switch e := e.(type) {
	case *syntax.BinaryExpr:
		e.X, e.Y = r.expr(e.X), r.expr(e.Y)
		for _, op := range guardedOps {
			if e.Op == op {
				return guardCall(opGuard(op), e.OpPos, e.X, e.Y)
			}
		}
	case *syntax.CallExpr:
		fn := r.expr(e.Fn)
		for i, a := range e.Args {
			switch a := a.(type) {
			case *syntax.BinaryExpr:
				if a.Op == syntax.EQ { // name=value
					a.Y = r.expr(a.Y)
					continue
				}
			case *syntax.UnaryExpr: // *args, **kwargs
				a.X = r.expr(a.X)
				continue
			}
			e.Args[i] = r.expr(a)
		}
		e.Fn = &syntax.Ident{NamePos: e.Lparen, Name: callGuard}
		e.Args = append([]syntax.Expr{fn}, e.Args...)
	case *syntax.SliceExpr:
		args := []syntax.Expr{r.expr(e.X)}
		for _, b := range []syntax.Expr{e.Lo, e.Hi, e.Step} {
			if b == nil {
				b = &syntax.Ident{NamePos: e.Lbrack, Name: noneName}
			} else {
				b = r.expr(b)
			}
			args = append(args, b)
		}
		return guardCall(sliceGuard, e.Lbrack, args...)
	case *syntax.Comprehension:
		e.Body = r.expr(e.Body)
		for _, c := range e.Clauses {
			switch c := c.(type) {
			case *syntax.ForClause:
				c.X = r.expr(c.X)
			case *syntax.IfClause:
				c.Cond = r.expr(c.Cond)
			}
		}
	case *syntax.CondExpr:
		e.Cond, e.True, e.False = r.expr(e.Cond), r.expr(e.True), r.expr(e.False)
	case *syntax.DictExpr:
		for _, x := range e.List {
			if de, ok := x.(*syntax.DictEntry); ok {
				de.Key, de.Value = keyCall(r.expr(de.Key)), r.expr(de.Value)
			}
		}
	case *syntax.DictEntry: // a dict comprehension's
		e.Key, e.Value = keyCall(r.expr(e.Key)), r.expr(e.Value)
	case *syntax.DotExpr:
		e.X = r.expr(e.X)
	case *syntax.IndexExpr:
		e.X, e.Y = r.expr(e.X), keyCall(r.expr(e.Y))
	case *syntax.LambdaExpr:
		r.params(e.Params)
		e.Body = r.expr(e.Body)
	case *syntax.ListExpr:
		r.exprs(e.List)
	case *syntax.TupleExpr:
		r.exprs(e.List)
	case *syntax.ParenExpr:
		e.X = r.expr(e.X)
	case *syntax.UnaryExpr:
		if e.X != nil {
			e.X = r.expr(e.X)
		}
	}
	return e
}

// guardCall is a call of the guard name at pos.
func guardCall(name string, pos syntax.Position, args ...syntax.Expr) *syntax.CallExpr {
	return &syntax.CallExpr{Fn: &syntax.Ident{NamePos: pos, Name: name}, Lparen: pos, Args: args, Rparen: pos}
}

// keyCall wraps a dict key or an index in the key guard, at its position,
// which charges its hash (hashing.go).
func keyCall(e syntax.Expr) syntax.Expr {
	start, _ := e.Span()
	return guardCall(keyGuard, start, e)
}

// pure reports whether evaluating e twice does what evaluating it once
// does: names, literals, and indexes and fields of those.
func pure(e syntax.Expr) bool {
	switch e := e.(type) {
	case *syntax.Ident, *syntax.Literal:
		return true
	case *syntax.IndexExpr:
		return pure(e.X) && pure(e.Y)
	case *syntax.DotExpr:
		return pure(e.X)
	case *syntax.ParenExpr:
		return pure(e.X)
	case *syntax.UnaryExpr:
		return e.X != nil && pure(e.X)
	}
	return false
}

// guards are the built-ins the rewritten script calls, by name.
func (g *guard) builtins() starlark.StringDict {
	d := starlark.StringDict{}
	for _, op := range guardedOps {
		d[opGuard(op)] = starlark.NewBuiltin(opGuard(op), func(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
			x, y := args[0], args[1]
			if err := checkBinary(th, op, x, y); err != nil {
				return nil, err
			}
			switch op {
			case syntax.EQL, syntax.NEQ, syntax.LT, syntax.GT, syntax.LE, syntax.GE:
				ok, err := starlark.Compare(op, x, y)
				return starlark.Bool(ok), err
			case syntax.NOT_IN:
				in, err := starlark.Binary(syntax.IN, x, y)
				if err != nil {
					return nil, err
				}
				return !in.Truth(), nil
			}
			return starlark.Binary(op, x, y)
		})
	}
	for _, op := range augmented {
		d[augGuard(op)] = starlark.NewBuiltin(augGuard(op), func(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
			if err := checkBinary(th, op, args[0], args[1]); err != nil {
				return nil, err
			}
			return args[1], nil
		})
	}
	d[callGuard] = starlark.NewBuiltin(callGuard, func(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if err := checkCall(th, args[0], args[1:], kwargs); err != nil {
			return nil, err
		}
		return starlark.Call(th, args[0], args[1:], kwargs)
	})
	d[noneName] = starlark.None
	d[keyGuard] = starlark.NewBuiltin(keyGuard, keyBuiltin)
	d[sliceGuard] = starlark.NewBuiltin(sliceGuard, func(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
		work(th, args[0])
		return starlark.Call(th, g.slice, args, nil)
	})
	return d
}
