// Package starter holds the commented starter config files of `aiperf
// config init`, in AIPerf's current YAML format: each a template with a
// title, a category and tags in its "# @template" header (AIPerf's
// metadata block), listed, searched, and written with the model and URL
// replaced.
package starter

import (
	"bytes"
	"embed"
	"fmt"
	"path"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

//go:embed templates/*.yaml
var files embed.FS

// Categories are AIPerf's template categories, in its order.
var Categories = []string{"Getting Started", "Load Testing", "Datasets", "Sweep & Multi-Run", "Advanced", "Multimodal",
	"Specialized Endpoints"}

// Template is one starter file.
type Template struct {
	Name        string // the file name without .yaml
	Title       string
	Description string
	Category    string
	Tags        []string
	Difficulty  string
	Features    []string
	Text        string
}

// List is every template, by category (in Categories' order), then name.
func List() []Template {
	entries, err := files.ReadDir("templates")
	if err != nil {
		panic("starter: " + err.Error()) // embedded at build time
	}
	var out []Template
	for _, e := range entries {
		b, err := files.ReadFile(path.Join("templates", e.Name()))
		if err != nil {
			panic("starter: " + err.Error())
		}
		out = append(out, parse(strings.TrimSuffix(e.Name(), ".yaml"), string(b)))
	}
	slices.SortStableFunc(out, func(a, b Template) int {
		return slices.Index(Categories, a.Category) - slices.Index(Categories, b.Category)
	})
	return out
}

// parse reads a template's "# @template" header.
func parse(name, text string) Template {
	t := Template{Name: name, Text: text}
	in := false
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if line == "# @template" {
			in = true
			continue
		}
		if !in || !strings.HasPrefix(line, "# ") {
			break
		}
		key, val, ok := strings.Cut(strings.TrimPrefix(line, "# "), ": ")
		if !ok {
			break
		}
		switch key {
		case "title":
			t.Title = val
		case "description":
			t.Description = val
		case "category":
			t.Category = val
		case "tags":
			t.Tags = splitList(val)
		case "difficulty":
			t.Difficulty = val
		case "features":
			t.Features = splitList(val)
		}
	}
	return t
}

func splitList(s string) []string {
	var out []string
	for part := range strings.SplitSeq(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// Get is the template of that name.
func Get(name string) (Template, error) {
	var names []string
	for _, t := range List() {
		if t.Name == name {
			return t, nil
		}
		names = append(names, t.Name)
	}
	return Template{}, fmt.Errorf("no template %q: the templates are %s (aiperf config init --list)", name, strings.Join(names, ", "))
}

// Matches reports whether keyword (any case) is in the template's name,
// title, description, tags or features.
func (t Template) Matches(keyword string) bool {
	k := strings.ToLower(keyword)
	hay := strings.ToLower(strings.Join(append(append([]string{t.Name, t.Title, t.Description}, t.Tags...), t.Features...), " "))
	return strings.Contains(hay, k)
}

// With is the template's text with the model and the URL replaced (each
// when not ""): benchmark.model (or models) and benchmark.endpoint.url
// (or urls) become the one given. Comments are kept.
func (t Template) With(model, url string) (string, error) {
	if model == "" && url == "" {
		return t.Text, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(t.Text), &doc); err != nil {
		return "", fmt.Errorf("template %s: %w", t.Name, err)
	}
	body := value(doc.Content[0], "benchmark")
	if body == nil {
		return "", fmt.Errorf("template %s has no benchmark:", t.Name)
	}
	if model != "" {
		replace(body, model, "model", "models")
	}
	if url != "" {
		ep := value(body, "endpoint")
		if ep == nil {
			return "", fmt.Errorf("template %s has no endpoint:", t.Name)
		}
		replace(ep, url, "url", "urls")
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return "", fmt.Errorf("template %s: %w", t.Name, err)
	}
	return b.String(), enc.Close()
}

// value is the value of key in mapping n, or nil.
func value(n *yaml.Node, key string) *yaml.Node {
	for i := 0; n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// replace sets the singular key of mapping n to v, in place of the
// singular or plural key it has (a list keeps its key: [v]).
func replace(n *yaml.Node, v, singular, plural string) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		switch n.Content[i].Value {
		case singular:
			n.Content[i+1] = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v, LineComment: n.Content[i+1].LineComment}
			return
		case plural:
			n.Content[i+1] = &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}}}
			return
		}
	}
	n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: singular}, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v})
}

// FilePlaceholder stands for the file a template is written to in its
// comments ("aiperf profile --config this.yaml").
const FilePlaceholder = "this.yaml"

// Named is a template's text with FilePlaceholder in its comment lines
// replaced by file, quoted for a POSIX shell when it needs to be.
func Named(text, file string) string {
	var b strings.Builder
	for line := range strings.Lines(text) {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			line = strings.ReplaceAll(line, FilePlaceholder, ShellQuote(file))
		}
		b.WriteString(line)
	}
	return b.String()
}

// ShellQuote is s as one word for a POSIX shell: as it is when every
// character is safe, else in single quotes.
func ShellQuote(s string) string {
	safe := s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-/+=:,@%", r))
	}) < 0
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
