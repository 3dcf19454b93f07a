package swimlane

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// A profile_export.jsonl line is mostly metrics the view does not read
// (inter-chunk latencies, dozens of tags). encoding/json validates and
// scans every byte of it twice and allocates every string; decodeRecord
// instead walks the line's structure once, skipping what it does not read
// (strings, brackets and literals checked as it goes), and takes the
// metadata, four metrics and the error in place: several times faster on
// a million lines. Its strings point into the line.

// record is what the view takes of a profile_export.jsonl line.
type record struct {
	correlation, conversation, phase, parent, root []byte
	start, end, turn                               int64
	hasStart, hasEnd, hasTurn, cancelled           bool
	depth                                          float64
	ttft, latency, isl, osl                        metric
	err                                            []byte // the raw error value
}

// metric is a {"value": v, "unit": u} block.
type metric struct {
	value float64
	ok    bool
	unit  string
}

// ms is a time metric in milliseconds (NaN when absent or in an unknown
// unit).
func (m metric) ms() float32 {
	if !m.ok {
		return float32(math.NaN())
	}
	switch m.unit {
	case "ms", "":
		return float32(m.value)
	case "ns":
		return float32(m.value / 1e6)
	case "us":
		return float32(m.value / 1e3)
	case "s", "sec":
		return float32(m.value * 1e3)
	}
	return float32(math.NaN())
}

// count is a token count (-1 when absent).
func (m metric) count() int32 {
	if !m.ok || !(m.value >= 0 && m.value < math.MaxInt32) {
		return -1
	}
	return int32(math.Round(m.value))
}

// decodeRecord decodes a profile_export.jsonl line into rec.
func decodeRecord(line []byte, rec *record) error {
	end, err := eachField(line, 0, func(key, val []byte) error {
		switch string(key) {
		case "metadata":
			return decodeMetadata(val, rec)
		case "metrics":
			return decodeMetrics(val, rec)
		case "error":
			rec.err = val
		}
		return nil
	})
	if err != nil {
		return err
	}
	if i := skipSpace(line, end); i < len(line) {
		return fmt.Errorf("unexpected %q after the record's end (offset %d)", line[i], i)
	}
	return nil
}

// decodeMetadata takes the metadata fields the view reads.
func decodeMetadata(val []byte, rec *record) error {
	if isNull(val) {
		return nil
	}
	_, err := eachField(val, 0, func(key, v []byte) error {
		var err error
		switch string(key) {
		case "x_correlation_id":
			rec.correlation, err = str(v)
		case "conversation_id":
			rec.conversation, err = str(v)
		case "benchmark_phase":
			rec.phase, err = str(v)
		case "parent_correlation_id":
			rec.parent, err = str(v)
		case "root_correlation_id":
			rec.root, err = str(v)
		case "request_start_ns":
			rec.start, rec.hasStart, err = integer(v)
		case "request_end_ns":
			rec.end, rec.hasEnd, err = integer(v)
		case "turn_index":
			rec.turn, rec.hasTurn, err = integer(v)
		case "was_cancelled":
			rec.cancelled = string(v) == "true"
		case "agent_depth":
			rec.depth, _, err = number(v)
		}
		if err != nil {
			return fmt.Errorf("metadata.%s: %w", key, err)
		}
		return nil
	})
	return err
}

// decodeMetrics takes the four metrics the view shows.
func decodeMetrics(val []byte, rec *record) error {
	if isNull(val) {
		return nil
	}
	_, err := eachField(val, 0, func(key, v []byte) error {
		var dst *metric
		switch string(key) {
		case "time_to_first_token":
			dst = &rec.ttft
		case "request_latency":
			dst = &rec.latency
		case "input_sequence_length":
			dst = &rec.isl
		case "output_sequence_length":
			dst = &rec.osl
		default:
			return nil
		}
		if isNull(v) {
			return nil
		}
		_, err := eachField(v, 0, func(k, x []byte) error {
			var err error
			switch string(k) {
			case "value":
				dst.value, dst.ok, err = number(x)
			case "unit":
				var u []byte
				u, err = str(x)
				dst.unit = string(u)
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("metrics.%s: %w", key, err)
		}
		return nil
	})
	return err
}

func isNull(v []byte) bool { return string(v) == "null" }

// str is a JSON string's text (nil for null), unquoted in place when it
// holds no escape.
func str(v []byte) ([]byte, error) {
	switch {
	case isNull(v):
		return nil, nil
	case len(v) < 2 || v[0] != '"':
		return nil, fmt.Errorf("want a string, got %.40s", v)
	case bytes.IndexByte(v, '\\') < 0:
		return v[1 : len(v)-1], nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return nil, err
	}
	return []byte(s), nil
}

// integer is a JSON integer (absent for null).
func integer(v []byte) (int64, bool, error) {
	if isNull(v) {
		return 0, false, nil
	}
	if !jsonNumber(v) {
		return 0, false, fmt.Errorf("want an integer, got %.40s", v)
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(string(v), 64)
		if ferr != nil || f != math.Trunc(f) || math.Abs(f) > 1<<62 {
			return 0, false, fmt.Errorf("want an integer, got %.40s", v)
		}
		n = int64(f)
	}
	return n, true, nil
}

// number is a JSON number (absent for null): strconv.ParseFloat's other
// forms (Inf, infinity, NaN, hex, underscores) are not JSON.
func number(v []byte) (float64, bool, error) {
	if isNull(v) {
		return 0, false, nil
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || !jsonNumber(v) {
		return 0, false, fmt.Errorf("want a number, got %.40s", v)
	}
	return f, true, nil
}

// eachField calls f with the key and the raw value of each member of the
// object starting at b[i] (after blanks), and returns the offset after it.
// A key holding an escape is unquoted first.
func eachField(b []byte, i int, f func(key, val []byte) error) (int, error) {
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != '{' {
		return i, errors.New("not a JSON object")
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return i, fmt.Errorf("want a key at offset %d", i)
		}
		kend, err := skipString(b, i)
		if err != nil {
			return i, err
		}
		key := b[i+1 : kend-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			var s string
			if err := json.Unmarshal(b[i:kend], &s); err != nil {
				return i, err
			}
			key = []byte(s)
		}
		i = skipSpace(b, kend)
		if i >= len(b) || b[i] != ':' {
			return i, fmt.Errorf("want ':' after key %q at offset %d", key, i)
		}
		start := skipSpace(b, i+1)
		vend, err := skipValue(b, start)
		if err != nil {
			return start, err
		}
		if err := f(key, b[start:vend]); err != nil {
			return start, err
		}
		i = skipSpace(b, vend)
		switch {
		case i < len(b) && b[i] == ',':
			i = skipSpace(b, i+1)
		case i < len(b) && b[i] == '}':
			return i + 1, nil
		default:
			return i, fmt.Errorf("want ',' or '}' at offset %d", i)
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the offset after the string starting at b[i].
func skipString(b []byte, i int) (int, error) {
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '\\':
			n := escapeLen(b[j+1:])
			if n == 0 {
				return j, fmt.Errorf("invalid escape in a string at offset %d", j)
			}
			j += n
		case c == '"':
			return j + 1, nil
		case c < 0x20:
			return j, fmt.Errorf("control character in a string at offset %d", j)
		}
	}
	return len(b), fmt.Errorf("unterminated string at offset %d", i)
}

// escapeLen is the length of the JSON escape after a backslash at the
// start of b (\n, \uABCD), 0 when it is not one.
func escapeLen(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	switch b[0] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 1
	case 'u':
		if len(b) < 5 {
			return 0
		}
		for _, h := range b[1:5] {
			if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
				return 0
			}
		}
		return 5
	}
	return 0
}

// skipValue returns the offset after the value starting at b[i]: a
// string, an object or array (checked as JSON: keys, colons, commas and
// brackets in their places, every value in it a JSON value), or a literal
// (a JSON number, true, false, null).
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return i, errors.New("a value is missing at the line's end")
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		return skipNested(b, i)
	}
	return skipLiteral(b, i)
}

// skipLiteral returns the offset after the literal starting at b[i].
func skipLiteral(b []byte, i int) (int, error) {
	j := i
	for j < len(b) && (b[j] == '-' || b[j] == '+' || b[j] == '.' || (b[j] >= '0' && b[j] <= '9') || (b[j] >= 'a' && b[j] <= 'z') || (b[j] >= 'A' && b[j] <= 'Z')) {
		j++
	}
	if j == i || !literal(b[i:j]) {
		return j, fmt.Errorf("invalid value %q at offset %d", b[i:max(j, i+1)], i)
	}
	return j, nil
}

// skipNested returns the offset after the object or array starting at
// b[i], its nesting kept on a stack of its own (no recursion).
func skipNested(b []byte, i int) (int, error) {
	var open [32]byte
	stack := open[:0] // the open brackets (on the stack unless deep)
	j := i
	for { // a value starts at j
		j = skipSpace(b, j)
		if j >= len(b) {
			return j, fmt.Errorf("unterminated %q at offset %d", b[i], i)
		}
		var err error
		switch c := b[j]; c {
		case '{', '[':
			stack = append(stack, c)
			j = skipSpace(b, j+1)
			if j < len(b) && b[j] == closer(c) { // empty
				stack, j = stack[:len(stack)-1], j+1
				break
			}
			if c == '{' {
				if j, err = skipKey(b, j); err != nil {
					return j, err
				}
			}
			continue
		case '"':
			j, err = skipString(b, j)
		default:
			j, err = skipLiteral(b, j)
		}
		if err != nil {
			return j, err
		}
		if j, err = afterValue(b, i, j, &stack); err != nil || len(stack) == 0 {
			return j, err
		}
	}
}

// afterValue reads what follows a value at b[j] inside the nesting of
// stack (started at b[i]): the brackets it closes, then the comma (and
// key) before the next value, if any.
func afterValue(b []byte, i, j int, stack *[]byte) (int, error) {
	for len(*stack) > 0 {
		j = skipSpace(b, j)
		top := (*stack)[len(*stack)-1]
		switch {
		case j >= len(b):
			return j, fmt.Errorf("unterminated %q at offset %d", b[i], i)
		case b[j] == closer(top):
			*stack, j = (*stack)[:len(*stack)-1], j+1
		case b[j] == ',' && top == '{':
			return skipKey(b, j+1)
		case b[j] == ',':
			return j + 1, nil
		case b[j] == '}' || b[j] == ']':
			return j, fmt.Errorf("unbalanced %q at offset %d", b[j], j)
		default:
			return j, fmt.Errorf("want ',' or %q at offset %d", closer(top), j)
		}
	}
	return j, nil
}

// skipKey returns the offset after an object's key and its colon, at b[j]
// after blanks.
func skipKey(b []byte, j int) (int, error) {
	j = skipSpace(b, j)
	if j >= len(b) || b[j] != '"' {
		return j, fmt.Errorf("want a key at offset %d", j)
	}
	j, err := skipString(b, j)
	if err != nil {
		return j, err
	}
	j = skipSpace(b, j)
	if j >= len(b) || b[j] != ':' {
		return j, fmt.Errorf("want ':' after a key at offset %d", j)
	}
	return j + 1, nil
}

// closer is the bracket that closes open.
func closer(open byte) byte {
	if open == '{' {
		return '}'
	}
	return ']'
}

// literal reports whether s is true, false, null or a JSON number.
func literal(s []byte) bool {
	switch string(s) {
	case "true", "false", "null":
		return true
	}
	return jsonNumber(s)
}

// jsonNumber reports whether s is a number as JSON writes one:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func jsonNumber(s []byte) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = digits(s, i)
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		if j := digits(s, i+1); j > i+1 {
			i = j
		} else {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digits(s, i)
		if j == i {
			return false
		}
		i = j
	}
	return i == len(s)
}

// digits is the offset after the run of digits at s[i].
func digits(s []byte, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}
