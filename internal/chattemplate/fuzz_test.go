package chattemplate

import (
	"context"
	"strings"
	"testing"
)

// FuzzMessages feeds arbitrary bytes as a request body (a trace's payload
// or messages reach it unchecked) to Messages and renders what it finds
// through Qwen 2.5's and Llama 3's templates: nothing may panic, and a
// render fails only as a template does (an error it raises, a budget), not
// as the engine fails. The seeds are bodies of each API the finisher reads.
func FuzzMessages(f *testing.F) {
	for _, body := range []string{
		`{"model": "m", "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]}`,
		`{"messages": [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image_url", "image_url": {"url": "x"}}]}]}`,
		`{"messages": [{"role": "assistant", "content": null, "tool_calls": [{"id": "1", "type": "function", "function": {"name": "f", "arguments": "{\"a\": 1}"}}]}, {"role": "tool", "content": "2"}]}`,
		`{"input": [{"role": "user", "content": "x"}, {"type": "function_call", "name": "f", "arguments": "{}"}, {"type": "function_call_output", "output": "y"}]}`,
		`{"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function", "function": {"name": "f", "description": "d", "parameters": {"type": "object"}}}]}`,
		`{"input": ["a", "b"]}`, `{"prompt": "x"}`, `[1, 2]`, `{"messages": [{"role": 1}]}`,
		`{"messages": [{"role": "assistant", "tool_calls": [[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]}]}`,
	} {
		f.Add([]byte(body))
	}
	var templates []*Template
	for _, family := range []string{"qwen2_5", "llama3"} {
		tmpl, err := Load("testdata/" + family)
		if err != nil {
			f.Fatal(err)
		}
		templates = append(templates, tmpl)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		chat, ok, err := Messages(body)
		if err != nil || !ok {
			return
		}
		for _, tmpl := range templates {
			if _, err := tmpl.Render(context.Background(), chat.Messages); err != nil && strings.Contains(err.Error(), "the template engine failed") {
				t.Fatalf("the engine failed on %q: %v", body, err)
			}
		}
	})
}
