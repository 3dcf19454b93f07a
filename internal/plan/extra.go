package plan

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// ParseExtraInput parses one --extra-inputs value as AIPerf does
// (parse_str_or_dict_as_tuple_list):
//
//   - a value starting with '{' is a JSON object, its values sent as they are;
//   - otherwise it is key:value (split on the first ':', both trimmed) with
//     the value coerced by CoerceValue, or several key:value items joined by
//     commas (temperature:0.7,top_p:0.9).
//
// Commas split the value only when every comma-separated piece is a
// key:value item whose key is a plain name (a letter, then letters, digits,
// '_', '-' or '.'); otherwise the value is taken whole, so a comma inside a
// value (stop:a,b) keeps working where AIPerf would refuse it.
func ParseExtraInput(s string) (map[string]any, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "{") {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			return nil, fmt.Errorf("is not a valid JSON object: %w", err)
		}
		return m, nil
	}
	if pairs, ok := splitPairs(s, isExtraKey); ok {
		m := make(map[string]any, len(pairs))
		for _, kv := range pairs {
			m[kv[0]] = CoerceValue(kv[1])
		}
		return m, nil
	}
	k, val, ok := strings.Cut(s, ":")
	if !ok || strings.TrimSpace(k) == "" {
		return nil, fmt.Errorf("must be key:value or a JSON object, got %q", s)
	}
	return map[string]any{strings.TrimSpace(k): CoerceValue(strings.TrimSpace(val))}, nil
}

// splitPairs splits s on ',' into key:value items, each split on its first
// ':' and trimmed, when there are several and every key passes validKey;
// otherwise it reports false (take s whole).
func splitPairs(s string, validKey func(string) bool) ([][2]string, bool) {
	pieces := strings.Split(s, ",")
	if len(pieces) < 2 {
		return nil, false
	}
	out := make([][2]string, 0, len(pieces))
	for _, piece := range pieces {
		k, v, ok := strings.Cut(piece, ":")
		k = strings.TrimSpace(k)
		if !ok || !validKey(k) {
			return nil, false
		}
		out = append(out, [2]string{k, strings.TrimSpace(v)})
	}
	return out, true
}

// isExtraKey reports whether k is a plain body-field name: a letter, then
// letters, digits, '_', '-' or '.'.
func isExtraKey(k string) bool {
	if k == "" || !isLetter(k[0]) {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !isLetter(c) && !isDigit(c) && c != '_' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// CoerceValue types a key:value value as AIPerf's coerce_value does:
// true/false (any case) a bool, none/null (any case) JSON null, digits
// without a leading zero ("0" itself included) an integer, the same after
// '-' ("-0" included) a negative one, digits with exactly one '.' (and an
// optional leading '-': "1.", ".5", "-.5") a float; anything else ("007",
// "1e3", "+1", "[1,2]") stays a string. An integer too large for int64 is
// kept exact as a JSON number.
func CoerceValue(v string) any {
	switch strings.ToLower(v) {
	case "true":
		return true
	case "false":
		return false
	case "none", "null":
		return nil
	}
	if allDigits(v) && (v[0] != '0' || v == "0") {
		return integer(v)
	}
	if rest, ok := strings.CutPrefix(v, "-"); ok && allDigits(rest) && (rest[0] != '0' || rest == "0") {
		return integer(v)
	}
	if strings.Count(v, ".") == 1 {
		digits := strings.Replace(strings.TrimPrefix(v, "-"), ".", "", 1)
		if allDigits(digits) {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				return f
			}
		}
	}
	return v
}

// integer is the digits s as an int64, or as an exact JSON number beyond it.
func integer(s string) any {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n
	}
	return json.Number(s)
}

// isOne reports whether an --extra-inputs value is the number 1.
func isOne(v any) bool {
	switch n := v.(type) {
	case int64:
		return n == 1
	case float64:
		return n == 1
	case json.Number:
		return n.String() == "1"
	}
	return false
}
