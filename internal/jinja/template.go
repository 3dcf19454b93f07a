// Changed from ardanlabs/jinja v1.8.0: renders are bounded (RenderContext,
// Limits) and a panic in the engine is an error, not a crash.

package jinja

import (
	"context"
	"fmt"
	"strings"
)

// Template is a compiled Jinja template ready for rendering.
type Template struct {
	nodes []node
	src   string
}

// Compile parses a Jinja template source string and returns a compiled
// template that can be rendered multiple times with different data.
func Compile(source string) (*Template, error) {
	segs, err := scan(source)
	if err != nil {
		return nil, fmt.Errorf("jinja scan: %w", err)
	}

	nodes, err := parseTemplate(segs)
	if err != nil {
		return nil, fmt.Errorf("jinja parse: %w", err)
	}

	return &Template{nodes: nodes, src: source}, nil
}

// Render executes the template with the provided data and returns the
// rendered string, within DefaultLimits. Each call creates an isolated
// scope so templates are safe to render concurrently after compilation.
func (t *Template) Render(data map[string]any) (string, error) {
	return t.RenderContext(context.Background(), data, DefaultLimits)
}

// RenderContext is Render within lim, stopping with ctx's error when ctx
// ends. A template that goes over a limit fails with a *LimitError.
func (t *Template) RenderContext(ctx context.Context, data map[string]any, lim Limits) (string, error) {
	// Convert Go data to Value types.
	vals := make(map[string]Value, len(data))
	for k, v := range data {
		vals[k] = FromGoValue(v)
	}

	return render(ctx, t.nodes, vals, lim)
}

// RenderValues is like Render but accepts pre-converted Value data.
func (t *Template) RenderValues(data map[string]Value) (string, error) {
	return render(context.Background(), t.nodes, data, DefaultLimits)
}

// =============================================================================

// render executes the AST with the given data and returns the result. A
// limit, the end of ctx or a panic of the engine stops it with an error.
func render(ctx context.Context, nodes []node, data map[string]Value, lim Limits) (out string, err error) {
	m := newMeter(ctx, lim)
	defer func() {
		if r := recover(); r != nil {
			out, err = "", m.failure(r)
		}
	}()
	e := evaluator{
		output: strings.Builder{},
		m:      m,
	}

	// Create user data scope on top of the builtins, which are bound to
	// this render's meter.
	e.scope = newScope(newGlobals(m))
	for k, v := range data {
		e.scope.set(k, v)
	}

	if err := e.execNodes(nodes); err != nil {
		return "", err
	}

	return e.output.String(), nil
}
