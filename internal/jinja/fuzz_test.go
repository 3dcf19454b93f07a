package jinja_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiperf-go/aiperf/internal/jinja"
)

// fuzzLimits keep each input of the fuzzer to milliseconds.
var fuzzLimits = jinja.Limits{Steps: 100_000, Bytes: 1 << 20, Depth: 32}

// FuzzRender: any text is a chat template that either does not compile or
// renders a conversation (with a tool call, as the finisher renders them)
// within small limits, to an error or an output no larger than the byte
// budget. The engine never panics (a panic is recovered as "the template
// engine failed", which fails the target), never overflows its stack and
// never runs on. The seed corpus is every template of testdata/templates
// and a few hostile ones.
func FuzzRender(f *testing.F) {
	files, err := filepath.Glob("testdata/templates/*.jinja")
	if err != nil || len(files) == 0 {
		f.Fatal("no templates in testdata/templates", err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	for _, src := range []string{
		endlessSeed, "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}",
		"{% set l = [1] %}{% set _ = l.append(l) %}{{ l|tojson }}{{ l == l }}{{ l|string }}",
		"{{ messages[0].content[::-3] }}{{ messages|selectattr('role', 'eq', 'user')|list|length }}{{ 'a' * 3 }}",
		"{{ messages[1].tool_calls[0].function.arguments|tojson(indent=2) }}{{ (messages|last).content|indent(2, true) }}",
	} {
		f.Add(src)
	}
	data := func() map[string]any {
		return map[string]any{
			"bos_token": "<s>", "eos_token": "</s>", "add_generation_prompt": true, "tools": nil,
			"messages": []any{
				map[string]any{"role": "user", "content": "What is the weather in Paris?"},
				map[string]any{"role": "assistant", "content": "", "tool_calls": []any{map[string]any{"type": "function",
					"function": map[string]any{"name": "weather", "arguments": map[string]any{"city": "Paris", "days": 3}}}}},
				map[string]any{"role": "tool", "content": "{\"temp\": 21}"},
			},
		}
	}
	f.Fuzz(func(t *testing.T, src string) {
		tmpl, err := jinja.Compile(src)
		if err != nil {
			return
		}
		out, err := tmpl.RenderContext(context.Background(), data(), fuzzLimits)
		if err != nil {
			if strings.Contains(err.Error(), "the template engine failed") {
				t.Fatalf("the engine panicked: %v", err)
			}
			return
		}
		if int64(len(out)) > fuzzLimits.Bytes {
			t.Fatalf("an output of %d bytes, over the budget of %d", len(out), fuzzLimits.Bytes)
		}
	})
}

const endlessSeed = `{% set r = range(1000) %}{% for i in r %}{% for j in r %}{% for k in r %}{{ k }}{% endfor %}{% endfor %}{% endfor %}`
