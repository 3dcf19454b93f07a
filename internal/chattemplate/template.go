package chattemplate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"strings"

	"github.com/aiperf-go/aiperf/internal/inputfile"
	"github.com/aiperf-go/aiperf/internal/jinja"
)

// ConfigFile is the file beside tokenizer.json that holds the template and
// the special tokens; TemplateFile, when present, holds the template
// instead, as transformers has saved it since 2025 (and reads it first, over
// tokenizer_config.json's).
const (
	ConfigFile   = "tokenizer_config.json"
	TemplateFile = "chat_template.jinja"
)

// ErrNoTemplate is wrapped by Load's error when the tokenizer has no chat
// template: no tokenizer_config.json, or one without "chat_template" (a base
// model), or a list of named templates none of which is "default".
var ErrNoTemplate = errors.New("no chat template")

// Template is a model's compiled chat template and the special tokens it
// reads. It is safe for concurrent use.
type Template struct {
	file  string // the file it was read from
	tmpl  *jinja.Template
	vars  map[string]any // the special tokens, by name
	steps int64          // the step budget of a render, before the conversation's share
}

// Bounds of a template and of its renders. A render may take DefaultSteps
// steps of the template engine (about a second of work), plus one for
// every 16 bytes of the conversation, and build BaseBytes plus 16 bytes for
// each byte of the conversation; macro calls nest at most MaxDepth deep. A
// chat template needs a few thousand steps a message; one that goes over a
// bound (an endless loop, a runaway recursion or repetition) fails with a
// *jinja.LimitError.
const (
	DefaultSteps = 10_000_000
	BaseBytes    = 128 << 20
	MaxDepth     = 256
	// maxSource bounds a template's text (real ones are tens of KiB) and
	// maxConfig the tokenizer_config.json it may be read from (its added
	// tokens can take megabytes).
	maxSource = 1 << 20
	maxConfig = 64 << 20
)

// Message is one message of a conversation to render.
type Message struct {
	Role    string
	Content string
	// ToolCalls are an assistant message's replayed tool calls, as decoded
	// from JSON (nil: none); templates render them.
	ToolCalls []any
}

// specialTokens are the tokenizer_config.json keys passed to the template,
// as transformers passes its special tokens map.
var specialTokens = []string{"bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"}

// Load reads and compiles the chat template of the tokenizer in dir (the
// directory of its tokenizer.json): chat_template.jinja if there is one,
// else tokenizer_config.json's chat_template.
func Load(dir string) (*Template, error) {
	file := filepath.Join(dir, ConfigFile)
	data, err := inputfile.ReadFileMax(file, maxConfig)
	var cfg map[string]json.RawMessage // nil: no tokenizer_config.json
	switch {
	case errors.Is(err, fs.ErrNotExist): // a chat_template.jinja may still be there
	case err != nil:
		return nil, fmt.Errorf("load chat template: %w", err)
	default:
		if err := json.Unmarshal(data, &cfg); err != nil {
			return nil, fmt.Errorf("load chat template: %s is not a JSON object: %w", file, err)
		}
		if cfg == nil {
			return nil, fmt.Errorf("load chat template: %s is not a JSON object", file)
		}
	}
	src, from, err := templateSource(dir, cfg)
	if err != nil {
		return nil, err
	}
	tmpl, err := jinja.Compile(src)
	if err != nil {
		return nil, fmt.Errorf("load chat template: compile the chat template of %s: %w", from, err)
	}
	t := &Template{file: from, tmpl: tmpl, vars: map[string]any{}, steps: DefaultSteps}
	for _, key := range specialTokens {
		tok, err := tokenText(cfg[key])
		if err != nil {
			return nil, fmt.Errorf("load chat template: %s: %s: %w", file, key, err)
		}
		if tok != "" {
			t.vars[key] = tok
		}
	}
	return t, nil
}

// templateSource is the template of the tokenizer in dir and the file it
// is in: chat_template.jinja, else the config's chat_template.
func templateSource(dir string, cfg map[string]json.RawMessage) (src, file string, err error) {
	jinjaFile := filepath.Join(dir, TemplateFile)
	b, err := inputfile.ReadFileMax(jinjaFile, maxSource)
	switch {
	case err == nil:
		if strings.TrimSpace(string(b)) == "" {
			return "", "", fmt.Errorf("load chat template: %s is empty: %w", jinjaFile, ErrNoTemplate)
		}
		return string(b), jinjaFile, nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", "", fmt.Errorf("load chat template: %w", err)
	}
	configFile := filepath.Join(dir, ConfigFile)
	if cfg == nil {
		return "", "", fmt.Errorf("load chat template: neither %s nor %s exists: %w", jinjaFile, configFile, ErrNoTemplate)
	}
	if src, err = source(cfg["chat_template"]); err != nil {
		return "", "", fmt.Errorf("load chat template: %s (and no %s): %w", configFile, TemplateFile, err)
	}
	if len(src) > maxSource {
		return "", "", fmt.Errorf("load chat template: the chat_template of %s is %d bytes, more than a template's %d", configFile, len(src), maxSource)
	}
	return src, configFile, nil
}

// source is the template text of a chat_template value: a string, or a
// list of {name, template} of which "default" is the one applied.
func source(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", fmt.Errorf("no chat_template (a base model's tokenizer has none): %w", ErrNoTemplate)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		if strings.TrimSpace(s) == "" {
			return "", fmt.Errorf("chat_template is empty: %w", ErrNoTemplate)
		}
		return s, nil
	}
	var named []struct{ Name, Template string }
	if err := json.Unmarshal(raw, &named); err != nil {
		return "", fmt.Errorf("chat_template is neither a string nor a list of {name, template}: %w", err)
	}
	var names []string
	for _, n := range named {
		if n.Name == "default" {
			return n.Template, nil
		}
		names = append(names, n.Name)
	}
	return "", fmt.Errorf("chat_template lists templates named %s but none named default: %w", strings.Join(names, ", "), ErrNoTemplate)
}

// tokenText is a special token's text: a string, or an AddedToken's
// content ("" when unset).
func tokenText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var added struct{ Content string }
	if err := json.Unmarshal(raw, &added); err != nil {
		return "", fmt.Errorf("neither a string nor an AddedToken with content: %w", err)
	}
	return added.Content, nil
}

// File is the file the template was read from: chat_template.jinja or
// tokenizer_config.json.
func (t *Template) File() string { return t.file }

// WithSteps is t with a step budget of steps (before the conversation's
// share) instead of DefaultSteps.
func (t *Template) WithSteps(steps int64) *Template {
	c := *t
	c.steps = steps
	return &c
}

// Render renders msgs with add_generation_prompt=true, as AIPerf counts a
// request's ISL: the conversation as the server's model reads it, its
// special tokens written out, to encode without adding any. The render is
// bounded (see DefaultSteps) and stops with ctx's error when ctx ends.
func (t *Template) Render(ctx context.Context, msgs []Message) (string, error) {
	return t.render(ctx, msgs, true)
}

// limits are the bounds of a render of msgs: the base budget plus the
// conversation's share.
func (t *Template) limits(msgs []Message) jinja.Limits {
	size := int64(0)
	for _, m := range msgs {
		size += int64(len(m.Role) + len(m.Content) + 64*len(m.ToolCalls))
	}
	return jinja.Limits{Steps: t.steps + size/16, Bytes: BaseBytes + 16*size, Depth: MaxDepth}
}

func (t *Template) render(ctx context.Context, msgs []Message, addGenerationPrompt bool) (string, error) {
	data := make(map[string]any, len(t.vars)+4)
	maps.Copy(data, t.vars)
	list := make([]any, len(msgs))
	for i, m := range msgs {
		d := map[string]any{"role": m.Role, "content": m.Content}
		if m.ToolCalls != nil {
			d["tool_calls"] = m.ToolCalls
		}
		list[i] = d
	}
	data["messages"] = list
	data["add_generation_prompt"] = addGenerationPrompt
	data["tools"], data["documents"] = nil, nil
	out, err := t.tmpl.RenderContext(ctx, data, t.limits(msgs))
	if err != nil {
		return "", fmt.Errorf("render the chat_template of %s: %w", t.file, err)
	}
	return out, nil
}
