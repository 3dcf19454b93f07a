package endpoint

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// An embeddings reply is valid only when it holds one non-empty numeric
// vector per input sent, all of one length, their indices covering the
// inputs exactly once. The checks here read each vector once, without
// decoding it into floats: their cost is bounded by the body's size.

// vectorDims is the length of a JSON array of numbers, or why raw is not
// one (empty, a null, a string, a nested value, a number beyond float64).
// raw is a valid JSON value (json.Unmarshal checked it).
func vectorDims(raw []byte) (int, string) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return 0, "is not a list of numbers"
	}
	n := 0
	for i = skipSpace(raw, i+1); i < len(raw) && raw[i] != ']'; i = skipSpace(raw, i) {
		if raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
		start := i
		for i < len(raw) && isNumberByte(raw[i]) {
			i++
		}
		if start == i || (raw[start] != '-' && (raw[start] < '0' || raw[start] > '9')) {
			return 0, fmt.Sprintf("element %d is not a number (%s)", n, shortValue(elementText(raw, start)))
		}
		if !finiteLiteral(raw[start:i]) {
			return 0, fmt.Sprintf("element %d is out of range (%s)", n, shortValue(string(raw[start:i])))
		}
		n++
	}
	if n == 0 {
		return 0, "is empty"
	}
	return n, ""
}

// skipSpace is the index of the first non-space byte of b at or after i.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// elementText is the start of the element at b[i:], for a message.
func elementText(b []byte, i int) string {
	end := min(len(b), i+25)
	for j := i; j < end; j++ {
		if b[j] == ',' || b[j] == ']' {
			return string(b[i:j])
		}
	}
	return string(b[i:end])
}

// finiteLiteral reports whether a JSON number is finite as a float64: a
// literal without an exponent and under 300 digits always is, others are
// parsed.
func finiteLiteral(lit []byte) bool {
	if len(lit) < 300 {
		plain := true
		for _, c := range lit {
			if c == 'e' || c == 'E' {
				plain = false
				break
			}
		}
		if plain {
			return true
		}
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	return err == nil && !math.IsInf(f, 0)
}

// base64Dims is the length of an embedding sent as base64 (the request's
// encoding_format base64): little-endian float32s, a whole, non-zero
// number of them, none NaN nor infinite.
func base64Dims(raw []byte) (int, string) {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return 0, "is not a string"
	}
	return base64StringDims(s)
}

// base64StringDims is the length of a base64 float32 vector, or why it is
// not one.
func base64StringDims(s string) (int, string) {
	b, err := base64.StdEncoding.DecodeString(s)
	switch {
	case err != nil:
		return 0, "is not valid base64"
	case len(b) == 0:
		return 0, "is empty"
	case len(b)%4 != 0:
		return 0, fmt.Sprintf("decodes to %d bytes, not a whole number of float32s", len(b))
	}
	for k := 0; k < len(b); k += 4 {
		f := math.Float32frombits(binary.LittleEndian.Uint32(b[k:]))
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return 0, fmt.Sprintf("float32 %d is not finite", k/4)
		}
	}
	return len(b) / 4, ""
}

// embeddingDims is the length of one embedding: a list of numbers, or a
// base64 string when the request asked for base64.
func embeddingDims(raw json.RawMessage, b64 bool) (int, string) {
	i := skipSpace(raw, 0)
	if i < len(raw) && raw[i] == '"' {
		if !b64 {
			return 0, "is a string, and the request did not ask for encoding_format base64"
		}
		return base64Dims(raw)
	}
	if i < len(raw) && raw[i] == 'n' {
		return 0, "is null"
	}
	return vectorDims(raw)
}

// indexSet records the indices of an embeddings or rankings reply: each
// must be an integer below n (n < 0: no bound known) and come once.
type indexSet struct {
	n    int
	what string // what the indices count: "inputs", "passages", ...
	seen map[int]bool
}

// add checks one entry's index, or says why it is not valid.
func (s *indexSet) add(raw json.RawMessage) string {
	if len(raw) == 0 || isNull(raw) {
		return "has no index"
	}
	i, err := strconv.Atoi(string(raw))
	switch {
	case err != nil:
		return fmt.Sprintf("index %s is not an integer", shortValue(string(raw)))
	case i < 0:
		return fmt.Sprintf("index %d is negative", i)
	case s.n >= 0 && i >= s.n:
		return fmt.Sprintf("index %d is outside the %d %s sent", i, s.n, s.what)
	case s.seen[i]:
		return fmt.Sprintf("index %d came twice", i)
	}
	if s.seen == nil {
		s.seen = make(map[int]bool)
	}
	s.seen[i] = true
	return ""
}
