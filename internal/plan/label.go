package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// MaxNameBytes is the longest directory name aiperf writes: most file
// systems refuse a path segment of more than 255 bytes.
const MaxNameBytes = 255

// CellLabel names a cell on its own: its parameters as name_value pairs
// joined with "__", in declaration order, as AIPerf names sweep cell
// directories (concurrency_4__synthetic_input_tokens_mean_128); "base" when
// there are none. See CellLabels for the labels of a whole sweep.
func CellLabel(params []Param) string { return CellLabels([][]Param{params})[0] }

// CellLabels labels the cells of one sweep, each a single directory name of
// at most MaxNameBytes bytes. A label is CellLabel's, except that values of
// one option that would read alike (they differ only in characters a
// directory name cannot hold, or only in letter case) each get a short hash
// of their raw value appended ("model_org-m-3f9c01ab"), so distinct cells
// get distinct labels on every file system.
func CellLabels(cells [][]Param) []string {
	type text struct{ name, folded string }
	rendered := make([][]rendering, len(cells))
	raws := map[text]map[string]bool{} // the raw values behind each text
	memo := map[any]rendering{}
	for i, params := range cells {
		rendered[i] = make([]rendering, len(params))
		for j, p := range params {
			r := render(p.Value, memo)
			rendered[i][j] = r
			k := text{p.Name, strings.ToLower(r.text)}
			if raws[k] == nil {
				raws[k] = map[string]bool{}
			}
			raws[k][r.raw] = true
		}
	}
	out := make([]string, len(cells))
	for i, params := range cells {
		if len(params) == 0 {
			out[i] = "base"
			continue
		}
		parts := make([]string, len(params))
		for j, p := range params {
			r := rendered[i][j]
			v := r.text
			if len(raws[text{p.Name, strings.ToLower(v)}]) > 1 {
				v += "-" + shortHash(r.raw, 8)
			}
			parts[j] = p.Name + "_" + v
		}
		out[i] = DirName(strings.Join(parts, "__"))
	}
	return out
}

// rendering is a value as a label shows it and its raw identity.
type rendering struct{ text, raw string }

// render renders v, remembering the values a sweep repeats in memo.
func render(v any, memo map[any]rendering) rendering {
	key := v
	switch x := v.(type) {
	case float64:
		key = math.Float64bits(x) // as keys, -0 would equal 0 and NaN nothing
	case nil, bool, int, int64, string: // comparable: a map key as it is
	default:
		return rendering{valueText(v), canonical(v)}
	}
	if r, ok := memo[key]; ok {
		return r
	}
	r := rendering{valueText(v), canonical(v)}
	memo[key] = r
	return r
}

// DirName makes name a single directory name: characters other than
// letters, digits, '.', '_' and '-' become '-', and a name longer than
// MaxNameBytes keeps its start and ends with a hash of the whole name.
func DirName(name string) string {
	s := sanitize(name)
	switch {
	case s == "":
		return "unnamed"
	case s == "." || s == "..":
		return strings.Repeat("-", len(s))
	case len(s) <= MaxNameBytes:
		return s
	}
	const hashLen = 12
	return s[:MaxNameBytes-hashLen-1] + "-" + shortHash(name, hashLen)
}

// valueText renders a parameter value for a label: readable, made of
// directory-name characters, and never containing "__" or starting or
// ending with '_', so the "__" between pairs stays unambiguous.
func valueText(v any) string {
	b := []byte(sanitize(formatValue(v)))
	for i, c := range b {
		if c == '_' && (i == 0 || i == len(b)-1 || b[i-1] == '_' || b[i+1] == '_') {
			b[i] = '-'
		}
	}
	return string(b)
}

// formatValue renders a value as text: floats in their shortest form with a
// bare exponent (1e9, 1e-9, inf, -inf, nan), lists joined with '+'.
func formatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "none"
	case string:
		return x
	case float64:
		switch {
		case math.IsInf(x, 1):
			return "inf"
		case math.IsInf(x, -1):
			return "-inf"
		case math.IsNaN(x):
			return "nan"
		}
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if m, e, ok := strings.Cut(s, "e"); ok { // 1e+09 → 1e9: '+' is no directory-name character
			exp, _ := strconv.Atoi(e) // FormatFloat writes a valid exponent
			s = m + "e" + strconv.Itoa(exp)
		}
		return s
	case []string:
		return strings.Join(x, "+")
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = formatValue(e)
		}
		return strings.Join(parts, "+")
	}
	return fmt.Sprint(v)
}

// sanitize replaces every character but letters, digits and ._- with '-'.
func sanitize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

// canonical is a value's raw identity: its JSON, or for what JSON cannot
// spell (NaN, ±Inf) its Go syntax.
func canonical(v any) string {
	if b, err := json.Marshal(v); err == nil {
		return string(b)
	}
	return fmt.Sprintf("%#v", v)
}

// shortHash is the first n hex digits of s's SHA-256.
func shortHash(s string, n int) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:n]
}
