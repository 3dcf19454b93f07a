package seqdist

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxTokens bounds a bucket's lengths and standard deviations, as every
// token length of a profile (plan.MaxTokens).
const MaxTokens = 1 << 24

// maxBuckets bounds the buckets of one distribution.
const maxBuckets = 10_000

// Bucket is one (ISL, OSL) pair of a mixture: the means and standard
// deviations of its lengths in tokens, and its relative weight.
type Bucket struct {
	ISL       int     `json:"isl"`
	ISLStddev float64 `json:"isl_stddev,omitempty"`
	OSL       int     `json:"osl"`
	OSLStddev float64 `json:"osl_stddev,omitempty"`
	Weight    float64 `json:"prob"`
}

// Error is a distribution that does not parse: Pos is the 1-based
// character (not byte) of the text where it went wrong, 0 when the
// problem is not at one place.
type Error struct {
	Pos int
	Msg string
}

func (e *Error) Error() string {
	if e.Pos == 0 {
		return e.Msg
	}
	return fmt.Sprintf("at character %d: %s", e.Pos, e.Msg)
}

// Parse reads a distribution in any of AIPerf's three forms: JSON when
// the text starts with '{', the bracket form when it starts with '[' and
// ends with ']', else the semicolon form. Surrounding spaces are ignored,
// and so are empty entries of the semicolon form ("64,32:1;").
func Parse(text string) (*Dist, error) {
	trimmed := strings.TrimSpace(text)
	sc := &scanner{s: text, i: strings.Index(text, trimmed), end: strings.Index(text, trimmed) + len(trimmed)}
	var buckets []Bucket
	var err error
	switch {
	case trimmed == "":
		return nil, &Error{Msg: "is empty: expected entries such as 64,32:70;256,128:30"}
	case strings.HasPrefix(trimmed, "{"):
		buckets, err = parseJSON(trimmed)
	case strings.HasPrefix(trimmed, "[") && strings.HasSuffix(trimmed, "]"):
		sc.i++
		sc.end--
		buckets, err = sc.entries(',', true)
	default:
		buckets, err = sc.entries(';', false)
	}
	if err != nil {
		return nil, err
	}
	return newDist(buckets), nil
}

// scanner reads s[i:end].
type scanner struct {
	s      string
	i, end int
}

// entries reads entries separated by sep until the end; each is in
// parentheses when paren. Empty entries of the semicolon form are skipped.
func (sc *scanner) entries(sep byte, paren bool) ([]Bucket, error) {
	var out []Bucket
	for {
		sc.space()
		if !paren {
			for sc.peek() == sep {
				sc.i++
				sc.space()
			}
		}
		if sc.i >= sc.end {
			break
		}
		if len(out) == maxBuckets {
			return nil, sc.errorf("more than %d entries", maxBuckets)
		}
		b, err := sc.entry(len(out)+1, paren)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
		sc.space()
		if sc.i >= sc.end {
			break
		}
		if sc.peek() != sep {
			return nil, sc.errorf("expected %q before the next entry, or the end, got %s", sep, sc.got())
		}
		sc.i++
		if paren {
			sc.space()
			if sc.i >= sc.end {
				return nil, sc.errorf("expected an entry (ISL,OSL):WEIGHT after %q, got the end", sep)
			}
		}
	}
	if len(out) == 0 {
		return nil, sc.errorf("expected an entry such as 64,32:70, got none")
	}
	return out, nil
}

// entry reads ISL[|SD],OSL[|SD]:WEIGHT, in parentheses when paren; n is its
// 1-based number, for messages.
func (sc *scanner) entry(n int, paren bool) (Bucket, error) {
	var b Bucket
	var err error
	if paren {
		if err := sc.expect('(', fmt.Sprintf("'(' opening entry %d, as (ISL,OSL):WEIGHT", n)); err != nil {
			return b, err
		}
	}
	if b.ISL, b.ISLStddev, err = sc.length(n, "ISL"); err != nil {
		return b, err
	}
	if err := sc.expect(',', fmt.Sprintf("',' then the OSL of entry %d", n)); err != nil {
		return b, err
	}
	if b.OSL, b.OSLStddev, err = sc.length(n, "OSL"); err != nil {
		return b, err
	}
	if paren {
		if err := sc.expect(')', fmt.Sprintf("')' closing entry %d", n)); err != nil {
			return b, err
		}
	}
	if err := sc.expect(':', fmt.Sprintf("':' then the weight of entry %d", n)); err != nil {
		return b, err
	}
	sc.space()
	at := sc.i
	w, ok := sc.number()
	if !ok {
		return b, sc.errorf("expected the weight of entry %d (a positive number such as 70 or 0.7), got %s", n, sc.got())
	}
	if b.Weight = w; w <= 0 {
		return b, sc.errorAt(at, "the weight of entry %d must be positive, got %s", n, sc.s[at:sc.i])
	}
	return b, nil
}

// length reads MEAN[|STDDEV]: a whole number of tokens (at least 1) and an
// optional standard deviation.
func (sc *scanner) length(n int, what string) (int, float64, error) {
	sc.space()
	at := sc.i
	digits := sc.digits()
	if digits == "" {
		return 0, 0, sc.errorf("expected the %s of entry %d (a whole number of tokens), got %s", what, n, sc.got())
	}
	mean, err := strconv.Atoi(digits)
	if err != nil || mean > MaxTokens {
		return 0, 0, sc.errorAt(at, "the %s of entry %d must be at most %d tokens, got %s", what, n, MaxTokens, digits)
	}
	if mean < 1 {
		return 0, 0, sc.errorAt(at, "the %s of entry %d must be at least 1 token, got %s", what, n, digits)
	}
	if sc.peek() != '|' {
		return mean, 0, nil
	}
	sc.i++
	at = sc.i
	sd, ok := sc.number()
	if !ok {
		return 0, 0, sc.errorf("expected the %s standard deviation of entry %d after '|' (a number ≥ 0), got %s", what, n, sc.got())
	}
	if sd > MaxTokens {
		return 0, 0, sc.errorAt(at, "the %s standard deviation of entry %d must be at most %d tokens, got %s", what, n, MaxTokens, sc.s[at:sc.i])
	}
	return mean, sd, nil
}

// number reads AIPerf's number: digits with an optional fraction, or a
// fraction alone (12, 0.5, .5); no sign, no exponent.
func (sc *scanner) number() (float64, bool) {
	start := sc.i
	whole := sc.digits()
	if sc.peek() == '.' {
		sc.i++
		if sc.digits() == "" {
			sc.i = start
			return 0, false
		}
	} else if whole == "" {
		return 0, false
	}
	x, err := strconv.ParseFloat(sc.s[start:sc.i], 64)
	if err != nil || math.IsInf(x, 0) {
		sc.i = start
		return 0, false
	}
	return x, true
}

func (sc *scanner) digits() string {
	start := sc.i
	for sc.i < sc.end && sc.s[sc.i] >= '0' && sc.s[sc.i] <= '9' {
		sc.i++
	}
	return sc.s[start:sc.i]
}

func (sc *scanner) expect(c byte, what string) error {
	sc.space()
	if sc.peek() != c {
		return sc.errorf("expected %s, got %s", what, sc.got())
	}
	sc.i++
	return nil
}

func (sc *scanner) space() {
	for sc.i < sc.end && strings.IndexByte(" \t\r\n", sc.s[sc.i]) >= 0 {
		sc.i++
	}
}

func (sc *scanner) peek() byte {
	if sc.i >= sc.end {
		return 0
	}
	return sc.s[sc.i]
}

// got quotes what is at the scanner's position: a few characters, or "the
// end".
func (sc *scanner) got() string {
	if sc.i >= sc.end {
		return "the end"
	}
	rest := sc.s[sc.i:sc.end]
	if utf8.RuneCountInString(rest) > 12 {
		rest = string([]rune(rest)[:12]) + "…"
	}
	return strconv.Quote(rest)
}

func (sc *scanner) errorf(format string, args ...any) error {
	return sc.errorAt(sc.i, format, args...)
}

// errorAt is an error at byte offset at, reported as a character number.
func (sc *scanner) errorAt(at int, format string, args ...any) error {
	return &Error{Pos: utf8.RuneCountInString(sc.s[:at]) + 1, Msg: fmt.Sprintf(format, args...)}
}
