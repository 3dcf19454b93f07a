package chattemplate

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/jinja"
	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// reference is testdata/reference.json, written by testdata/chat.mjs.
type reference map[string]struct {
	Source    string
	Tokenizer *string
	Cases     []struct {
		Messages []struct {
			Role, Content string
		}
		AddGenerationPrompt bool `json:"add_generation_prompt"`
		Rendered            *string
		IDs                 []int
		Error               string
	}
}

func readReference(t *testing.T) reference {
	t.Helper()
	data, err := os.ReadFile("testdata/reference.json")
	require.NoError(t, err)
	var ref reference
	require.NoError(t, json.Unmarshal(data, &ref))
	return ref
}

// TestRenderMatchesReference renders every fixture template on every
// conversation of the reference and compares the string with what Hugging
// Face's JavaScript Jinja engine rendered, then its ids (where the family's
// tokenizer is committed) with those of Hugging Face's tokenizers.
func TestRenderMatchesReference(t *testing.T) {
	ref := readReference(t)
	require.Len(t, ref, 5)
	for family, r := range ref {
		t.Run(family, func(t *testing.T) {
			tmpl, err := Load(filepath.Join("testdata", family))
			require.NoError(t, err)
			var tok tokenizer.Tokenizer
			if r.Tokenizer != nil {
				tok, err = tokenizer.Load(filepath.Join("..", "tokenizer", "testdata", *r.Tokenizer))
				require.NoError(t, err)
			}
			ids, want := 0, 0
			for i, c := range r.Cases {
				msgs := make([]Message, len(c.Messages))
				for j, m := range c.Messages {
					msgs[j] = Message{Role: m.Role, Content: m.Content}
				}
				got, err := tmpl.render(context.Background(), msgs, c.AddGenerationPrompt)
				if c.IDs != nil {
					want++
				}
				if c.Error != "" {
					require.Error(t, err, "case %d", i)
					assert.Contains(t, err.Error(), c.Error, "case %d", i)
					continue
				}
				require.NoError(t, err, "case %d", i)
				require.Equal(t, *c.Rendered, got, "case %d: %v", i, c.Messages)
				if tok != nil {
					require.Equal(t, c.IDs, tok.Encode(got), "case %d", i)
					ids++
				}
			}
			if tok != nil {
				assert.Equal(t, want, ids)
				assert.Positive(t, ids)
			}
		})
	}
}

func writeConfig(t *testing.T, config string) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, ConfigFile), []byte(config), 0o644))
	return dir
}

func TestLoadNamedTemplates(t *testing.T) {
	dir := writeConfig(t, `{"bos_token":{"__type":"AddedToken","content":"<B>"},"eos_token":"<E>","chat_template":[
		{"name":"tool_use","template":"tools"},
		{"name":"default","template":"{{ bos_token }}{% for m in messages %}[{{ m.role }}]{{ m.content }}{{ eos_token }}{% endfor %}{% if add_generation_prompt %}[assistant]{% endif %}"}]}`)
	tmpl, err := Load(dir)
	require.NoError(t, err)
	got, err := tmpl.Render(context.Background(), []Message{{Role: "user", Content: "hi"}})
	require.NoError(t, err)
	assert.Equal(t, "<B>[user]hi<E>[assistant]", got, "the default template, an AddedToken's content, the generation prompt")
	assert.Equal(t, filepath.Join(dir, ConfigFile), tmpl.File())
}

func TestLoadWithoutTemplate(t *testing.T) {
	for name, dir := range map[string]string{
		"no config":        t.TempDir(),
		"base model":       writeConfig(t, `{"bos_token":"<s>","chat_template":null}`),
		"no chat_template": writeConfig(t, `{"bos_token":"<s>"}`),
		"no default":       writeConfig(t, `{"chat_template":[{"name":"rag","template":"x"}]}`),
	} {
		_, err := Load(dir)
		require.ErrorIs(t, err, ErrNoTemplate, name)
		assert.Contains(t, err.Error(), dir, name)
	}
	_, err := Load(t.TempDir())
	require.ErrorIs(t, err, ErrNoTemplate)
	assert.ErrorContains(t, err, "neither")
	_, err = Load(writeConfig(t, `[1]`))
	assert.ErrorContains(t, err, "is not a JSON object")
}

// A chat_template.jinja beside the config is the template, as transformers
// reads it first; the config still gives the special tokens.
func TestLoadTemplateFile(t *testing.T) {
	dir := writeConfig(t, `{"bos_token": "<B>", "chat_template": "ignored"}`)
	require.NoError(t, os.WriteFile(filepath.Join(dir, TemplateFile), []byte("{{ bos_token }}{{ messages[0].content }}\n"), 0o644))
	tmpl, err := Load(dir)
	require.NoError(t, err)
	got, err := tmpl.Render(context.Background(), []Message{{Role: "user", Content: "hi"}})
	require.NoError(t, err)
	assert.Equal(t, "<B>hi\n", got)
	assert.Equal(t, filepath.Join(dir, TemplateFile), tmpl.File())

	require.NoError(t, os.Remove(filepath.Join(dir, ConfigFile)))
	tmpl, err = Load(dir)
	require.NoError(t, err, "the file alone will do")
	got, err = tmpl.Render(context.Background(), []Message{{Role: "user", Content: "hi"}})
	require.NoError(t, err)
	assert.Equal(t, "hi\n", got)

	require.NoError(t, os.WriteFile(filepath.Join(dir, TemplateFile), []byte(" \n"), 0o644))
	_, err = Load(dir)
	require.ErrorIs(t, err, ErrNoTemplate)
}

func TestLoadAndRenderErrors(t *testing.T) {
	_, err := Load(writeConfig(t, `{"chat_template": "{% for m in messages %}\n{{ m.content }\n{% endfor %}"}`))
	require.Error(t, err)
	assert.NotErrorIs(t, err, ErrNoTemplate)
	assert.Contains(t, err.Error(), "line 2", "a compile error names the template's line")

	_, err = Load(writeConfig(t, `{"chat_template": 7}`))
	assert.ErrorContains(t, err, "neither a string nor a list")
	_, err = Load(writeConfig(t, `{"chat_template": "x", "bos_token": 3}`))
	assert.ErrorContains(t, err, "bos_token")

	tmpl, err := Load("testdata/gemma3")
	require.NoError(t, err)
	_, err = tmpl.Render(context.Background(), []Message{{Role: "user", Content: "a"}, {Role: "user", Content: "b"}})
	assert.ErrorContains(t, err, "testdata/gemma3/tokenizer_config.json")
	assert.ErrorContains(t, err, "Conversation roles must alternate")
}

// A hostile template is bounded: an endless loop goes over the step budget
// (raised by WithSteps, and by the conversation's size), a runaway
// repetition over the byte budget, a recursion over the call depth; a
// cancelled context stops the render; a template or config too large to be
// a real one is not read whole. On the engine as vendored (upstream
// ardanlabs/jinja) the first renders for hours, the second is a fatal
// out-of-memory error and the third overflows the Go stack.
func TestHostileTemplates(t *testing.T) {
	msgs := []Message{{Role: "user", Content: "hi"}}
	load := func(src string) *Template {
		t.Helper()
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, TemplateFile), []byte(src), 0o644))
		tmpl, err := Load(dir)
		require.NoError(t, err)
		return tmpl
	}
	var le *jinja.LimitError
	endless := load("{% set r = range(1000) %}{% for i in r %}{% for j in r %}{% for k in r %}{{ k }}{% endfor %}{% endfor %}{% endfor %}")
	_, err := endless.WithSteps(50_000).Render(context.Background(), msgs)
	require.ErrorAs(t, err, &le)
	assert.Equal(t, jinja.LimitError{What: "steps", Max: 50_000}, *le, "the conversation's 6 bytes add nothing")
	assert.ErrorContains(t, err, "render the chat_template of "+endless.File())
	_, err = endless.WithSteps(50_000).Render(context.Background(), []Message{{Role: "user", Content: strings.Repeat("x", 160_000)}})
	require.ErrorAs(t, err, &le)
	assert.Equal(t, int64(60_000), le.Max, "one step more for each 16 bytes of the conversation")

	_, err = load("{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}").Render(context.Background(), msgs)
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "bytes", le.What)
	assert.Equal(t, int64(BaseBytes+16*len("userhi")), le.Max)

	_, err = load("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}").Render(context.Background(), msgs)
	require.ErrorAs(t, err, &le)
	assert.Equal(t, jinja.LimitError{What: "call depth", Max: MaxDepth}, *le)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = endless.Render(ctx, msgs)
	require.ErrorIs(t, err, context.Canceled)

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, TemplateFile), []byte(strings.Repeat("x", maxSource+1)), 0o644))
	_, err = Load(dir)
	assert.ErrorContains(t, err, "is larger than 1 MiB")
	_, err = Load(writeConfig(t, `{"chat_template": "`+strings.Repeat("x", maxSource+1)+`"}`))
	assert.ErrorContains(t, err, "is 1048577 bytes, more than a template's 1048576")
}
