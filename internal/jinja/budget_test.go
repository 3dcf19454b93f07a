package jinja_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/jinja"
)

// small are limits a test can exhaust in milliseconds.
var small = jinja.Limits{Steps: 200_000, Bytes: 4 << 20, Depth: 64}

// render compiles and renders src with a conversation within lim.
func render(t *testing.T, src string, lim jinja.Limits) (string, error) {
	t.Helper()
	tmpl, err := jinja.Compile(src)
	require.NoError(t, err)
	return tmpl.RenderContext(context.Background(), map[string]any{
		"messages": []any{map[string]any{"role": "user", "content": "What is the capital of France?"}},
	}, lim)
}

// limitOf is the limit err went over ("" when it is no *LimitError).
func limitOf(err error) string {
	var le *jinja.LimitError
	if errors.As(err, &le) {
		return le.What
	}
	return ""
}

// TestLimits: every way a template can run away — loops without end,
// repetitions and doublings, a list as long as the int64 range, recursion,
// a value that contains itself — fails with the limit it went over, in a
// bounded number of steps and bytes: no endless render, no memory taken
// until the process dies, no Go stack overflow. On upstream ardanlabs/jinja
// the first ones run for hours, the repetitions are fatal out-of-memory
// errors and the recursions overflow the stack.
func TestLimits(t *testing.T) {
	tests := []struct{ name, src, limit string }{
		{"nested loops", `{% set r = range(1000) %}{% for i in r %}{% for j in r %}{% for k in r %}{{ i }}{% endfor %}{% endfor %}{% endfor %}`, "steps"},
		{"loops with empty bodies", `{% set r = range(1000) %}{% for i in r %}{% for j in r %}{% for k in r %}{% endfor %}{% endfor %}{% endfor %}`, "steps"},
		{"a range of 10^12 items", `{% for i in range(1000000000000) %}{% endfor %}`, "bytes"},
		{"a range across int64", `{{ range(-9223372036854775807, 9223372036854775807)|length }}`, "bytes"},
		{"a string repeated 10^12 times", `{{ 'x' * 1000000000000 }}`, "bytes"},
		{"a doubling", `{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}`, "bytes"},
		{"a doubling with +", `{% set ns = namespace(s=['x']) %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}{% endfor %}`, "bytes"},
		{"output without end", `{% for i in range(100000) %}{{ messages[0].content * 1000 }}{% endfor %}`, "bytes"},
		{"a join of a repeated list", `{% set l = ['y' * 100000] %}{% for i in range(20) %}{% set l = l + l %}{% endfor %}{{ l|join }}`, "bytes"},
		{"a replace that explodes", `{{ ('x' * 100000).replace('', 'y' * 100000) }}`, "bytes"},
		{"an indent of 10^12", `{{ 'a\nb'|indent(1000000000000) }}`, "bytes"},
		{"tojson indented by 10^12", `{{ [[1, 2], [3]]|tojson(indent=1000000000000) }}`, "bytes"},
		{"a format that repeats", `{{ ('{0}' * 100000).format('z' * 1000) }}`, "bytes"},
		{"a recursive macro", `{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}`, "call depth"},
		{"a macro recursing through caller", `{% macro f() %}{% call f() %}x{% endcall %}{{ caller() }}{% endmacro %}{{ f() }}`, "call depth"},
		{"a list that contains itself, printed", `{% set l = [1] %}{% set _ = l.append(l) %}{{ l }}`, "value nesting"},
		{"a list that contains itself, compared", `{% set l = [1] %}{% set _ = l.append(l) %}{{ l == l }}`, "value nesting"},
		{"a dict that contains itself, as JSON", `{% set d = {} %}{% set _ = d.update({'d': d}) %}{{ d|tojson }}`, "value nesting"},
		{"a namespace that contains itself, in a list", `{% set ns = namespace() %}{% set ns.me = ns %}{{ ns in [ns] }}`, "value nesting"},
		{"a chain as deep as it is long", "{{ " + strings.Repeat("1 + ", 10000) + "1 }}", "expression nesting"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := render(t, tt.src, small)
			require.Error(t, err)
			assert.Equal(t, tt.limit, limitOf(err), "%v", err)
		})
	}
}

// TestWithinLimits: what the limits let through renders as before — a
// negative repetition is empty (it used to panic), huge slice bounds are
// clamped (they used to loop over every index up to the bound), and a
// template of ordinary size renders within the default limits.
func TestWithinLimits(t *testing.T) {
	tests := []struct{ src, want string }{
		{`{{ 'x' * -1 }}|{{ 'ab' * 3 }}`, "|ababab"},
		{`{{ messages[0].content[0:1000000000000000000:2] }}`, "Wa stecptlo rne"},
		{`{{ messages[0].content[-1000000000000000000:4] }}`, "What"},
		{`{{ messages[0].content[::-1000000000000000000] }}`, "?"},
		{`{{ [1, 2, 3][::-9223372036854775807] }}|{{ [1, 2, 3][9223372036854775807:] }}`, "[3]|[]"},
		{`{{ 'é'[0] }}{{ 'aé'[-1] }}`, "éé"},
		{`{{ range(9223372036854775806, 9223372036854775807, 10)|list }}`, "[9223372036854775806]"},
		{`{{ 'a\nb'|indent(-3) }}`, "a\nb"},
		{`{{ {'a': '<b>'}|tojson(indent=-2) }}`, "{\n\"a\": \"\\u003cb\\u003e\"\n}"},
	}
	for _, tt := range tests {
		out, err := render(t, tt.src, small)
		require.NoError(t, err, tt.src)
		assert.Equal(t, tt.want, out, tt.src)
	}
	out, err := render(t, `{% for m in messages %}<|{{ m.role }}|>{{ m.content|trim }}{% endfor %}`, jinja.DefaultLimits)
	require.NoError(t, err)
	assert.Equal(t, "<|user|>What is the capital of France?", out)
}

// TestNestingRefusedAtCompile: expressions and blocks nested deeper than
// the engine goes are a compile error, not a Go stack overflow.
func TestNestingRefusedAtCompile(t *testing.T) {
	for name, src := range map[string]string{
		"parentheses": "{{ " + strings.Repeat("(", 100000) + "1" + strings.Repeat(")", 100000) + " }}",
		"lists":       "{{ " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + " }}",
		"nots":        "{{ " + strings.Repeat("not ", 100000) + "x }}",
		"minuses":     "{{ " + strings.Repeat("- ", 100000) + "1 }}",
		"blocks":      strings.Repeat("{% if true %}", 100000) + strings.Repeat("{% endif %}", 100000),
	} {
		_, err := jinja.Compile(src)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "nested more than 256 deep", name)
	}
}

// TestRenderInterrupted: a render that would not end stops with the
// context's error once the context is cancelled. The template tells the
// test it is running (a callable it calls first), so the cancellation
// lands inside the loop.
func TestRenderInterrupted(t *testing.T) {
	tmpl, err := jinja.Compile(`{{ started() }}{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}`)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	running := make(chan struct{})
	started := jinja.NewCallable("started", func([]jinja.Value, map[string]jinja.Value) (jinja.Value, error) {
		close(running)
		return jinja.NewString(""), nil
	})
	done := make(chan error, 1)
	go func() {
		_, err := tmpl.RenderContext(ctx, map[string]any{"started": started},
			jinja.Limits{Steps: math.MaxInt64, Bytes: 1 << 30, Depth: 64})
		done <- err
	}()
	<-running
	cancel()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
		assert.Contains(t, err.Error(), "render interrupted")
	case <-time.After(time.Minute): // a hang guard, not a timing assertion
		t.Fatal("the render went on after its context was cancelled")
	}
}

// TestPanicIsAnError: what panics inside the engine ends the render with
// an error; Value.String and Value.Equals stay bounded on a value that
// contains itself.
func TestPanicIsAnError(t *testing.T) {
	tmpl, err := jinja.Compile(`{{ boom() }}`)
	require.NoError(t, err)
	boom := jinja.NewCallable("boom", func([]jinja.Value, map[string]jinja.Value) (jinja.Value, error) { panic("kaput") })
	_, err = tmpl.RenderContext(context.Background(), map[string]any{"boom": boom}, small)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the template engine failed: kaput")

	l := jinja.NewList([]jinja.Value{jinja.NewInt(1)})
	l.AsList().Append(l)
	assert.Equal(t, "<value too large>", l.String())
	assert.False(t, l.Equals(l))
}
