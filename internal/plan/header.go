package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// HeaderFields parses one --header value, as AIPerf does for -H:
//
//   - a value starting with '{' is a JSON object of headers; a value must be
//     a string, a number or a boolean (sent as written), never null, an
//     object or an array;
//   - otherwise it is Name:Value (split on the first ':', both trimmed), or
//     several Name:Value items joined by commas (X-A:1,X-B:2).
//
// Commas split the value only when every comma-separated piece is a
// Name:Value item whose Name is an HTTP header name starting with a letter;
// otherwise the value is one header, so a comma inside a value
// (Accept: text/html, application/json) keeps working. Every Name must be
// an HTTP header name (an RFC 9110 token) and no value may hold a control
// character. The error never shows the value of a header whose name looks
// secret.
func HeaderFields(h string) ([][2]string, error) {
	if strings.HasPrefix(strings.TrimSpace(h), "{") {
		return jsonHeaders(h)
	}
	if pairs, ok := splitPairs(h, isSplitHeaderName); ok {
		for _, kv := range pairs {
			if strings.ContainsFunc(kv[1], isControl) {
				return nil, headerErr(h)
			}
		}
		return pairs, nil
	}
	k, val, ok := strings.Cut(h, ":")
	if ok && isHeaderName(k) && !strings.ContainsFunc(val, isControl) {
		return [][2]string{{k, strings.TrimSpace(val)}}, nil
	}
	return nil, headerErr(h)
}

func headerErr(h string) error {
	return fmt.Errorf("must be Key:Value with Key an HTTP header name and no control characters, got %q", redactHeaderArg(h))
}

// isSplitHeaderName reports whether k may name a header of a
// comma-separated list: a header name starting with a letter (so that the
// "11:00" of "X-Time: 10:00, 11:00" is not taken for a header).
func isSplitHeaderName(k string) bool { return k != "" && isLetter(k[0]) && isHeaderName(k) }

// jsonHeaders reads a JSON object of headers, keeping its order.
func jsonHeaders(h string) ([][2]string, error) {
	dec := json.NewDecoder(strings.NewReader(h))
	dec.UseNumber()
	bad := func(format string, a ...any) ([][2]string, error) {
		return nil, fmt.Errorf("is a JSON object of headers, but "+format, a...)
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return bad("is not valid JSON: %v", errOr(err, "not an object"))
	}
	var out [][2]string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return bad("is not valid JSON: %v", err)
		}
		name := t.(string)
		if !isHeaderName(name) {
			return bad("key %q is not an HTTP header name (letters, digits and !#$%%&'*+-.^_`|~)", redactHeaderArg(name))
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return bad("is not valid JSON: %v", err)
		}
		var val string
		switch raw = bytes.TrimSpace(raw); {
		case raw[0] == '"':
			_ = json.Unmarshal(raw, &val)
		case raw[0] == '{' || raw[0] == '[':
			return bad("header %s has a nested object or array: give each header a string value", name)
		case string(raw) == "null":
			return bad("header %s is null: give each header a string value", name)
		default: // a number or a boolean, as written
			val = string(raw)
		}
		if strings.ContainsFunc(val, isControl) {
			return bad("header %s holds a control character", name)
		}
		out = append(out, [2]string{name, strings.TrimSpace(val)})
	}
	if _, err := dec.Token(); err != nil {
		return bad("is not valid JSON: %v", err)
	}
	if dec.More() {
		return bad("has something after the object")
	}
	if _, err := dec.Token(); err == nil {
		return bad("has something after the object")
	}
	return out, nil
}

func errOr(err error, msg string) any {
	if err != nil {
		return err
	}
	return msg
}

// CheckHeader checks one --header value (see HeaderFields).
func CheckHeader(h string) error {
	_, err := HeaderFields(h)
	return err
}

// ExpandHeaders is the --header values as one Name:Value entry per header
// (comma-separated lists and JSON objects expanded; values refused by
// Check dropped), in order.
func ExpandHeaders(hs []string) []string {
	var out []string
	for _, h := range hs {
		fields, err := HeaderFields(h)
		if err != nil {
			continue
		}
		for _, kv := range fields {
			out = append(out, kv[0]+":"+kv[1])
		}
	}
	return out
}
