package payload

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Field is a parsed response_field: a path of object keys and array
// indices (data[0].embedding, choices[0].message.content).
type Field struct {
	src   string
	steps []step
}

type step struct {
	key   string
	index int
	isIdx bool
}

// ParseField parses a response_field path.
func ParseField(src string) (*Field, error) {
	f := &Field{src: src}
	for _, seg := range strings.Split(src, ".") {
		key, rest, _ := strings.Cut(seg, "[")
		if key == "" && len(f.steps) > 0 || !isIdent(key) && key != "" {
			return nil, fmt.Errorf("%q is not a path of fields and [n] indices (e.g. data[0].embedding)", src)
		}
		if key != "" {
			f.steps = append(f.steps, step{key: key})
		}
		for rest != "" {
			num, after, ok := strings.Cut(rest, "]")
			n, err := strconv.Atoi(num)
			if !ok || err != nil || (after != "" && after[0] != '[') {
				return nil, fmt.Errorf("%q is not a path of fields and [n] indices (e.g. data[0].embedding)", src)
			}
			f.steps = append(f.steps, step{index: n, isIdx: true})
			rest = strings.TrimPrefix(after, "[")
		}
	}
	if len(f.steps) == 0 {
		return nil, fmt.Errorf("%q is empty", src)
	}
	return f, nil
}

func isIdent(s string) bool {
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// String is the path as given.
func (f *Field) String() string { return f.src }

// Find returns the value at the path, false when it is absent or null.
// A negative index counts from the end, as in JMESPath.
func (f *Field) Find(v any) (any, bool) {
	for _, s := range f.steps {
		switch {
		case s.isIdx:
			a, ok := v.([]any)
			i := s.index
			if i < 0 {
				i += len(a)
			}
			if !ok || i < 0 || i >= len(a) {
				return nil, false
			}
			v = a[i]
		default:
			m, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			if v, ok = m[s.key]; !ok {
				return nil, false
			}
		}
	}
	return v, v != nil
}

// Decode parses a JSON reply for Find (numbers kept as json.Number).
func Decode(b []byte) (any, error) {
	var v any
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	err := d.Decode(&v)
	return v, err
}
