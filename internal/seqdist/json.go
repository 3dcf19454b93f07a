package seqdist

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// pairKeys are the keys of a JSON pair, required ones first.
var pairKeys = []string{"isl", "osl", "prob", "isl_stddev", "osl_stddev"}

// parseJSON reads AIPerf's JSON form: {"pairs": [{"isl": 256,
// "isl_stddev": 10, "osl": 128, "osl_stddev": 5, "prob": 40}, ...]}. A
// syntax error names its character; a bad pair names pairs[i].key.
func parseJSON(text string) ([]Bucket, error) {
	var doc map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(text))
	if err := dec.Decode(&doc); err != nil {
		return nil, jsonError(text, err)
	}
	if dec.More() {
		return nil, &Error{Pos: utf8.RuneCountInString(text[:dec.InputOffset()]) + 1, Msg: "expected the end after the JSON object"}
	}
	for k := range doc {
		if k != "pairs" {
			return nil, &Error{Msg: fmt.Sprintf("JSON key %q is not known: expected {\"pairs\": [...]}", k)}
		}
	}
	var pairs []map[string]json.RawMessage
	if err := json.Unmarshal(doc["pairs"], &pairs); err != nil || pairs == nil {
		return nil, &Error{Msg: `JSON "pairs" must be a list of {"isl", "osl", "prob"} objects`}
	}
	if len(pairs) == 0 || len(pairs) > maxBuckets {
		return nil, &Error{Msg: fmt.Sprintf(`JSON "pairs" must hold 1 to %d pairs, got %d`, maxBuckets, len(pairs))}
	}
	out := make([]Bucket, len(pairs))
	for i, p := range pairs {
		b, err := jsonPair(p)
		if err != nil {
			return nil, &Error{Msg: fmt.Sprintf("pairs[%d].%v", i, err)}
		}
		out[i] = b
	}
	return out, nil
}

// jsonPair reads one pair; its error starts with the key at fault.
func jsonPair(p map[string]json.RawMessage) (Bucket, error) {
	for k := range p {
		if !slices.Contains(pairKeys, k) {
			return Bucket{}, fmt.Errorf("%s is not a known key: expected %s", k, strings.Join(pairKeys, ", "))
		}
	}
	num := func(key string, required, whole bool, lo float64) (float64, error) {
		raw, ok := p[key]
		if !ok {
			if required {
				return 0, fmt.Errorf("%s is required", key)
			}
			return 0, nil
		}
		var x float64
		if err := json.Unmarshal(raw, &x); err != nil {
			return 0, fmt.Errorf("%s must be a number, got %s", key, raw)
		}
		switch {
		case whole && x != math.Trunc(x):
			return 0, fmt.Errorf("%s must be a whole number of tokens, got %s", key, raw)
		case key == "prob" && x <= 0:
			return 0, fmt.Errorf("prob must be positive, got %s", raw)
		case x < lo:
			return 0, fmt.Errorf("%s must be at least %g, got %s", key, lo, raw)
		case key != "prob" && x > MaxTokens:
			return 0, fmt.Errorf("%s must be at most %d tokens, got %s", key, MaxTokens, raw)
		}
		return x, nil
	}
	var b Bucket
	var errs []error
	set := func(dst *float64, key string, required, whole bool, lo float64) {
		x, err := num(key, required, whole, lo)
		errs = append(errs, err)
		*dst = x
	}
	var isl, osl float64
	set(&isl, "isl", true, true, 1)
	set(&osl, "osl", true, true, 1)
	set(&b.Weight, "prob", true, false, 0)
	set(&b.ISLStddev, "isl_stddev", false, false, 0)
	set(&b.OSLStddev, "osl_stddev", false, false, 0)
	if err := cmp.Or(errs...); err != nil { // the first problem, with its key
		return b, err
	}
	b.ISL, b.OSL = int(isl), int(osl)
	return b, nil
}

// jsonError places a JSON decoding error at its character when it can.
func jsonError(text string, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		at := min(int(syn.Offset), len(text))
		return &Error{Pos: utf8.RuneCountInString(text[:at]), Msg: "invalid JSON: " + syn.Error()}
	case errors.As(err, &typ):
		return &Error{Msg: `expected a JSON object {"pairs": [...]}`}
	}
	return &Error{Msg: "invalid JSON: " + err.Error()}
}
