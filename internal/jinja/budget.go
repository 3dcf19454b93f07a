// Added to the ardanlabs/jinja fork: the bounds of a render.

package jinja

import (
	"context"
	"fmt"
	"math"
	"math/bits"
)

// Limits bound one render: a template that goes over one fails with a
// *LimitError instead of running on, and the memory it holds stays within
// Bytes and a few values of the largest size it was allowed to build.
type Limits struct {
	// Steps bounds the work: one step for each node executed and
	// expression evaluated, 16 for each loop iteration and macro call, and
	// one for every 256 bytes an operation builds or reads (a list item
	// counts as 32 bytes).
	Steps int64
	// Bytes bounds the strings and lists the render builds, its output
	// included.
	Bytes int64
	// Depth bounds the nesting of macro and caller calls.
	Depth int
}

// DefaultLimits are Render's: ten million steps (about a second), 256 MiB
// and 256 nested macro calls. Real chat templates need a few thousand
// steps a message.
var DefaultLimits = Limits{Steps: 10_000_000, Bytes: 256 << 20, Depth: 256}

// maxNesting bounds the nesting of a template's expressions and blocks and
// of the lists and dicts an operation walks (a list that contains itself
// is walked until it is too deep): past it, parsing or rendering fails
// instead of overflowing the Go stack.
const maxNesting = 256

// itemCost is what a list item or a dict entry counts for in bytes.
const itemCost = 32

// callCost is the steps a loop iteration or a macro call counts for: each
// builds a scope and a handful of values, the work of a dozen steps.
const callCost = 16

// LimitError is a render that went over one of its Limits (What is
// "steps", "bytes" or "call depth"), or one that nested expressions or
// values deeper than the engine goes ("expression nesting", "value
// nesting").
type LimitError struct {
	What string
	Max  int64
}

func (e *LimitError) Error() string {
	switch e.What {
	case "steps":
		return fmt.Sprintf("the template went over its budget of %d steps (an endless or runaway loop?)", e.Max)
	case "bytes":
		return fmt.Sprintf("the template built more than its budget of %d bytes of strings and lists (a runaway repetition or concatenation?)", e.Max)
	case "call depth":
		return fmt.Sprintf("macro calls nested more than %d deep (a runaway recursion?)", e.Max)
	case "expression nesting":
		return fmt.Sprintf("expressions nested more than %d deep, macro calls included", e.Max)
	}
	return fmt.Sprintf("a list or dict nested more than %d deep (one that contains itself?)", e.Max)
}

// interrupted is the panic that unwinds a render whose context ended.
type interrupted struct{ err error }

// meter is one render's budget. Every evaluator of the render shares it;
// what goes over a limit panics, and render recovers the panic as its
// error, so that the deepest helper can stop the render.
type meter struct {
	ctx   context.Context
	done  <-chan struct{}
	lim   Limits
	steps int64 // left
	bytes int64 // left
	depth int   // macro and caller calls in progress
	exprs int   // expressions being evaluated, one inside another
}

func newMeter(ctx context.Context, lim Limits) *meter {
	return &meter{ctx: ctx, done: ctx.Done(), lim: lim, steps: lim.Steps, bytes: lim.Bytes}
}

// failure is the error of a render stopped by panic value r.
func (m *meter) failure(r any) error {
	switch r := r.(type) {
	case *LimitError:
		return r
	case interrupted:
		return fmt.Errorf("render interrupted: %w", r.err)
	}
	return fmt.Errorf("render: the template engine failed: %v", r)
}

// step charges one step.
func (m *meter) step() { m.work(1) }

// work charges n steps and stops the render when its context has ended.
func (m *meter) work(n int64) {
	m.steps -= n
	if m.steps < 0 {
		panic(&LimitError{What: "steps", Max: m.lim.Steps})
	}
	select {
	case <-m.done: // nil for a context that never ends
		panic(interrupted{context.Cause(m.ctx)})
	default:
	}
}

// scan charges the work of reading n bytes.
func (m *meter) scan(n int) { m.work(int64(n)>>8 + 1) }

// alloc charges n bytes about to be built (and the work of building them).
func (m *meter) alloc(n int64) {
	if n < 0 || n > m.bytes {
		m.bytes = -1
		panic(&LimitError{What: "bytes", Max: m.lim.Bytes})
	}
	m.bytes -= n
	m.work(n>>8 + 1)
}

// allocItems charges a list or dict of n items about to be built.
func (m *meter) allocItems(n int) { m.alloc(product(int64(n), itemCost)) }

// product is a × b for sizes ≥ 0, saturated at MaxInt64.
func product(a, b int64) int64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(lo)
}

// sum is a + b for sizes ≥ 0, saturated at MaxInt64.
func sum(a, b int64) int64 {
	if s := a + b; s >= a {
		return s
	}
	return math.MaxInt64
}

// enter begins a macro or caller call, leave ends it.
func (m *meter) enter() {
	m.depth++
	if m.depth > m.lim.Depth {
		panic(&LimitError{What: "call depth", Max: int64(m.lim.Depth)})
	}
	m.work(callCost)
}

func (m *meter) leave() { m.depth-- }

// maxExprs bounds the expressions evaluated one inside another, macro calls
// included: a chain like a+b+c+… parses into a tree as deep as it is long.
const maxExprs = 4096

// enterExpr begins an expression's evaluation, leaveExpr ends it.
func (m *meter) enterExpr() {
	if m.exprs++; m.exprs > maxExprs {
		panic(&LimitError{What: "expression nesting", Max: maxExprs})
	}
	m.step()
}

func (m *meter) leaveExpr() { m.exprs-- }

// nest checks the depth of a value being walked.
func nest(depth int) {
	if depth > maxNesting {
		panic(&LimitError{What: "value nesting", Max: maxNesting})
	}
}
