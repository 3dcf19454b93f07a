package starlark

import (
	"errors"
	"strings"

	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Error is a problem in a sweep script: a syntax error, a failure while the
// script ran, or an invalid cell. Callers tell script errors from I/O errors
// with errors.As.
type Error struct {
	// Pos is where the problem is, as file:line:col.
	Pos string
	// Msg says what is wrong.
	Msg string
	// Backtrace lists the calls that led to the problem, outermost first,
	// when it happened below the top level of a file; otherwise it is empty.
	Backtrace string
}

// Error renders "file:line:col: msg", followed by the backtrace if any.
func (e *Error) Error() string {
	if e.Backtrace == "" {
		return e.Pos + ": " + e.Msg
	}
	return e.Pos + ": " + e.Msg + "\n" + e.Backtrace
}

const builtinFile = "<builtin>"

// scriptError turns an error from go.starlark.net into *Error values. It
// digs through load() wrappers to the innermost failure, which is where the
// user has to look. stepLimit, when non-empty, replaces the interpreter's
// cancellation message.
func scriptError(err error, stepLimit string) error {
	var eval *starlark.EvalError // innermost
	for e := err; e != nil; e = errors.Unwrap(e) {
		switch x := e.(type) {
		case *starlark.EvalError:
			eval = x
		case syntax.Error:
			return &Error{Pos: x.Pos.String(), Msg: x.Msg, Backtrace: backtrace(eval)}
		case resolve.ErrorList:
			errs := make([]error, len(x))
			for i, r := range x {
				errs[i] = &Error{Pos: r.Pos.String(), Msg: r.Msg, Backtrace: backtrace(eval)}
			}
			return errors.Join(errs...)
		}
	}
	if eval == nil {
		return err
	}
	msg := eval.Msg
	stack := eval.CallStack
	switch {
	case stepLimit != "":
		msg = stepLimit
	case len(stack) > 0 && stack[len(stack)-1].Name == "fail":
		msg = strings.TrimPrefix(msg, "fail: ")
	}
	return &Error{Pos: innermost(stack).String(), Msg: msg, Backtrace: backtrace(eval)}
}

// scriptFrames drops the guards' frames (rewrite.go) and the trailing
// built-in frames (the builtin that failed).
func scriptFrames(stack starlark.CallStack) starlark.CallStack {
	var out starlark.CallStack
	for _, f := range stack {
		if !strings.HasPrefix(f.Name, guardName) {
			out = append(out, f)
		}
	}
	for len(out) > 0 && out[len(out)-1].Pos.Filename() == builtinFile {
		out = out[:len(out)-1]
	}
	return out
}

// callerPos is where the script called the running builtin: the first
// frame below it that is not a guard's.
func callerPos(th *starlark.Thread) syntax.Position {
	for d := 1; d < th.CallStackDepth(); d++ {
		if f := th.CallFrame(d); !strings.HasPrefix(f.Name, guardName) {
			return f.Pos
		}
	}
	return syntax.Position{}
}

// innermost is the position of the deepest script frame.
func innermost(stack starlark.CallStack) syntax.Position {
	if s := scriptFrames(stack); len(s) > 0 {
		return s[len(s)-1].Pos
	}
	return syntax.Position{}
}

// backtrace renders the call chain when there is more than one script frame.
func backtrace(e *starlark.EvalError) string {
	if e == nil {
		return ""
	}
	stack := scriptFrames(e.CallStack)
	if len(stack) < 2 {
		return ""
	}
	return strings.TrimSuffix(stack.String(), "\n")
}
