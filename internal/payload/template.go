package payload

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Named templates, as AIPerf ships them.
var named = map[string]string{
	"nv-embedqa": `{"text": {{ texts|tojson }}}`,
}

// Vars are the values a template may use. Text is the prompt (texts is
// [Text], or the batch); Query and Passages are a rankings request's.
type Vars struct {
	Model     string
	Texts     []string
	MaxTokens int // 0: None
	Stream    bool
	Role      string
	Query     string
	Passages  []string
}

// promptVars are the variables that carry the prompt: a template must use
// one of them, or it would send the same body every time.
var promptVars = []string{"text", "texts", "query", "queries", "passage", "passages"}

// Template is a parsed body template.
type Template struct {
	parts []part
}

type part struct {
	lit    string
	name   string // a variable, when lit is ""
	filter []string
}

// Load resolves a payload_template value (a named template, a file, or the
// template itself), parses it and renders it once with sample values to
// check that it gives a JSON object.
func Load(value string) (*Template, error) {
	src := value
	if t, ok := named[value]; ok {
		src = t
	} else if looksLikePath(value) {
		b, err := os.ReadFile(value)
		if err != nil {
			return nil, fmt.Errorf("read the template file: %w", err)
		}
		src = string(b)
	}
	t, err := Parse(src)
	if err != nil {
		return nil, err
	}
	if !t.uses(promptVars...) {
		return nil, fmt.Errorf("never uses the prompt: reference {{ text|tojson }} (or texts, query, passages) where the input goes")
	}
	sample := Vars{Model: "m", Texts: []string{"a \"quoted\" prompt"}, MaxTokens: 8, Role: "user", Query: "q", Passages: []string{"p"}}
	if _, err := t.Render(sample); err != nil {
		return nil, err
	}
	return t, nil
}

// looksLikePath tells a file name from an inline template: inline ones
// hold braces.
func looksLikePath(s string) bool { return !strings.ContainsAny(s, "{}") && strings.TrimSpace(s) != "" }

// Parse parses a template: literal text and {{ name|filter|… }} holes.
// Statements ({% … %}) and comments ({# … #}) are refused.
func Parse(src string) (*Template, error) {
	if i := strings.Index(src, "{%"); i >= 0 {
		return nil, fmt.Errorf("uses a {%% … %%} statement at byte %d: only {{ name|filter }} expressions are supported", i)
	}
	if i := strings.Index(src, "{#"); i >= 0 {
		return nil, fmt.Errorf("uses a {# … #} comment at byte %d: only {{ name|filter }} expressions are supported", i)
	}
	t := &Template{}
	for rest := src; rest != ""; {
		i := strings.Index(rest, "{{")
		if i < 0 {
			t.parts = append(t.parts, part{lit: rest})
			break
		}
		if i > 0 {
			t.parts = append(t.parts, part{lit: rest[:i]})
		}
		j := strings.Index(rest[i:], "}}")
		if j < 0 {
			return nil, errors.New("has a {{ without its }}")
		}
		expr := strings.TrimSpace(rest[i+2 : i+j])
		fields := strings.Split(expr, "|")
		p := part{name: strings.TrimSpace(fields[0])}
		if _, ok := lookup(Vars{}, p.name); !ok {
			return nil, fmt.Errorf("uses {{ %s }}: the variables are text, texts, query, queries, passage, passages, model, max_tokens, stream and role", expr)
		}
		for _, f := range fields[1:] {
			f = strings.TrimSpace(f)
			switch f {
			case "tojson", "lower", "upper", "string":
			default:
				return nil, fmt.Errorf("uses the filter %q in {{ %s }}: the filters are tojson, lower, upper and string", f, expr)
			}
			p.filter = append(p.filter, f)
		}
		t.parts = append(t.parts, p)
		rest = rest[i+j+2:]
	}
	return t, nil
}

// uses reports whether the template references any of names.
func (t *Template) uses(names ...string) bool {
	for _, p := range t.parts {
		for _, n := range names {
			if p.lit == "" && p.name == n {
				return true
			}
		}
	}
	return false
}

// Render fills the template and checks that the result is a JSON object.
func (t *Template) Render(v Vars) ([]byte, error) {
	var b bytes.Buffer
	for _, p := range t.parts {
		if p.lit != "" || p.name == "" {
			b.WriteString(p.lit)
			continue
		}
		val, _ := lookup(v, p.name)
		s, err := apply(val, p.filter)
		if err != nil {
			return nil, err
		}
		b.WriteString(s)
	}
	out := bytes.TrimSpace(b.Bytes())
	var obj map[string]any
	if err := json.Unmarshal(out, &obj); err != nil {
		return nil, fmt.Errorf("does not render a JSON object (%w): %q", err, cut(string(out)))
	}
	return out, nil
}

// lookup is the value of a variable, as Jinja sees it.
func lookup(v Vars, name string) (any, bool) {
	first := func(s []string) any {
		if len(s) == 0 {
			return nil
		}
		return s[0]
	}
	orEmpty := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	switch name {
	case "text":
		return first(v.Texts), true
	case "texts":
		return orEmpty(v.Texts), true
	case "query":
		if v.Query == "" {
			return nil, true
		}
		return v.Query, true
	case "queries":
		if v.Query == "" {
			return []string{}, true
		}
		return []string{v.Query}, true
	case "passage":
		return first(v.Passages), true
	case "passages":
		return orEmpty(v.Passages), true
	case "model":
		return v.Model, true
	case "max_tokens":
		if v.MaxTokens == 0 {
			return nil, true
		}
		return v.MaxTokens, true
	case "stream":
		return v.Stream, true
	case "role":
		return v.Role, true
	}
	return nil, false
}

// apply runs the filters over a value and prints it as Jinja would.
func apply(val any, filters []string) (string, error) {
	for _, f := range filters {
		switch f {
		case "tojson":
			b, err := json.Marshal(val)
			if err != nil {
				return "", fmt.Errorf("tojson: %w", err)
			}
			val = rawText(b)
		case "lower":
			val = strings.ToLower(pyStr(val))
		case "upper":
			val = strings.ToUpper(pyStr(val))
		case "string":
			val = pyStr(val)
		}
	}
	return pyStr(val), nil
}

// rawText is already-printed JSON.
type rawText []byte

// pyStr prints a value the way Python's str() does.
func pyStr(val any) string {
	switch x := val.(type) {
	case nil:
		return "None"
	case rawText:
		return string(x)
	case string:
		return x
	case bool:
		if x {
			return "True"
		}
		return "False"
	case int:
		return strconv.Itoa(x)
	case []string:
		q := make([]string, len(x))
		for i, s := range x {
			q[i] = "'" + strings.ReplaceAll(s, "'", `\'`) + "'"
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	return fmt.Sprint(val)
}

func cut(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
