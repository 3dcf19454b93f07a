package chattemplate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"

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
	file string // the file it was read from
	tmpl *jinja.Template
	vars map[string]any // the special tokens, by name
}

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
	data, err := os.ReadFile(file)
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
	t := &Template{file: from, tmpl: tmpl, vars: map[string]any{}}
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
	b, err := os.ReadFile(jinjaFile)
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

// Render renders msgs with add_generation_prompt=true, as AIPerf counts a
// request's ISL: the conversation as the server's model reads it, its
// special tokens written out, to encode without adding any.
func (t *Template) Render(msgs []Message) (string, error) { return t.render(msgs, true) }

func (t *Template) render(msgs []Message, addGenerationPrompt bool) (string, error) {
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
	out, err := t.tmpl.Render(data)
	if err != nil {
		return "", fmt.Errorf("render the chat_template of %s: %w", t.file, err)
	}
	return out, nil
}
