package tracesynth

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// rewrite re-writes a JSON object line with the values of the members
// set names (matched as encoding/json matches fields, case aside) replaced,
// every member in its place, as Python's json.dumps lays out an object.
func rewrite(raw []byte, set map[string]func([]byte) []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil { // {
		return nil, err
	}
	out := append(make([]byte, 0, len(raw)+64), '{')
	for first := true; dec.More(); first = false {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if !first {
			out = append(out, ", "...)
		}
		out = appendString(out, key)
		out = append(out, ": "...)
		if f := setter(set, key); f != nil {
			out = f(out)
		} else {
			out = append(out, bytes.TrimSpace(v)...)
		}
	}
	return append(out, "}\n"...), nil
}

// setter is the function of set for key, matched exactly, else without
// regard to case.
func setter(set map[string]func([]byte) []byte, key string) func([]byte) []byte {
	if f, ok := set[key]; ok {
		return f
	}
	for k, f := range set {
		if strings.EqualFold(k, key) {
			return f
		}
	}
	return nil
}

func appendInt(b []byte, n int64) []byte { return strconv.AppendInt(b, n, 10) }

// appendString writes s as a JSON string.
func appendString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, q...)
}
