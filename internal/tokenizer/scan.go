package tokenizer

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Character classes of the split patterns, as bits. Membership follows
// regexp2: \p{…} is Go's unicode table of that name and \s is
// unicode.IsSpace.
const (
	classL     = 1 << iota // \p{L}
	classN                 // \p{N}
	classSpace             // \s
	classUpper             // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	classLower             // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
	classPunct             // [^\s\p{L}\p{N}]
	classLead              // [^\r\n\p{L}\p{N}]
)

var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for r := range t {
		t[r] = slowClass(rune(r))
	}
	return t
}()

func classOf(r rune) uint8 {
	if r < utf8.RuneSelf {
		return asciiClass[r]
	}
	return slowClass(r)
}

func slowClass(r rune) uint8 {
	var c uint8
	switch {
	case unicode.Is(unicode.L, r):
		c = classL
		switch {
		case unicode.Is(unicode.Ll, r):
			c |= classLower
		case unicode.Is(unicode.Lm, r), unicode.Is(unicode.Lo, r):
			c |= classUpper | classLower
		default: // Lu, Lt
			c |= classUpper
		}
	case unicode.Is(unicode.N, r):
		c = classN
	case unicode.IsSpace(r):
		c = classSpace
	default:
		c = classPunct
		if unicode.Is(unicode.M, r) {
			c |= classUpper | classLower
		}
	}
	if c&(classL|classN) == 0 && r != '\r' && r != '\n' {
		c |= classLead
	}
	return c
}

// at returns the class and size of the rune at s[i:], or 0, 0 at the end.
func at(s string, i int) (uint8, int) {
	if i >= len(s) {
		return 0, 0
	}
	if s[i] < utf8.RuneSelf {
		return asciiClass[s[i]], 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	return slowClass(r), n
}

// run returns the end of the longest run of runes in class from s[i:].
func run(s string, i int, class uint8) int {
	for {
		c, n := at(s, i)
		if c&class == 0 {
			return i
		}
		i += n
	}
}

// runMax is run limited to max runes.
func runMax(s string, i int, class uint8, max int) int {
	for ; max > 0; max-- {
		c, n := at(s, i)
		if c&class == 0 {
			break
		}
		i += n
	}
	return i
}

// contraction returns the length of the 's, 't, 're, 've, 'm, 'll or 'd that
// s starts with, or 0. Without case it compares unicode.ToLower of each rune,
// as regexp2 does under (?i).
func contraction(s string, caseless bool) int {
	if len(s) < 2 || s[0] != '\'' {
		return 0
	}
	lower := func(i int) (rune, int) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if caseless {
			r = unicode.ToLower(r)
		}
		return r, n
	}
	r, n := lower(1)
	switch r {
	case 's', 't', 'm', 'd':
		return 1 + n
	case 'r', 'v', 'l':
		want := 'e'
		if r == 'l' {
			want = 'l'
		}
		if 1+n < len(s) {
			if r2, n2 := lower(1 + n); r2 == want {
				return 1 + n + n2
			}
		}
	}
	return 0
}

// punct matches ` ?[^\s\p{L}\p{N}]+` followed by any run of bytes in trail.
func punct(s string, trail string) int {
	i := 0
	if s[0] == ' ' {
		i = 1
	}
	e := run(s, i, classPunct)
	if e == i { // a space is not in the class, so dropping it cannot help
		return 0
	}
	for e < len(s) && strings.IndexByte(trail, s[e]) >= 0 {
		e++
	}
	return e
}

// spaces matches `\s*[\r\n]+|\s+(?!\S)|\s+` (newlines if withNewline is
// set, else only the last two alternatives) at a whitespace rune.
func spaces(s string, withNewline bool) int {
	e := run(s, 0, classSpace)
	if e == 0 { // cannot happen: every other rune matched earlier
		_, n := utf8.DecodeRuneInString(s)
		return n
	}
	if withNewline {
		// \s* backtracks to the last \r or \n of the run; [\r\n]+
		// then takes just that byte.
		if j := strings.LastIndexAny(s[:e], "\r\n"); j >= 0 {
			return j + 1
		}
	}
	if e == len(s) {
		return e // \s+(?!\S) at the end of the text
	}
	// \s+ gives back its last rune so that a space follows.
	if _, n := utf8.DecodeLastRuneInString(s[:e]); e-n > 0 {
		return e - n
	}
	return e // \s+
}

// o200kPiece scans one piece of o200kPattern, or of tekkenPattern when
// tekken is set (no contractions, single digits).
func o200kPiece(s string, tekken bool) int {
	c0, n0 := at(s, 0)
	if c0&classLead != 0 {
		if e := o200kLower(s, n0, !tekken); e > 0 {
			return e
		}
	}
	if e := o200kLower(s, 0, !tekken); e > 0 {
		return e
	}
	if c0&classLead != 0 {
		if e := o200kUpper(s, n0, !tekken); e > 0 {
			return e
		}
	}
	if e := o200kUpper(s, 0, !tekken); e > 0 {
		return e
	}
	switch {
	case c0&classN != 0 && tekken:
		return runMax(s, 0, classN, 1)
	case c0&classN != 0:
		return runMax(s, 0, classN, 3)
	case c0&classSpace == 0 || s[0] == ' ':
		if e := punct(s, "\r\n/"); e > 0 {
			return e
		}
	}
	return spaces(s, true)
}

// o200kLower matches `U*L+C?` from s[q:], where U and L are the upper and
// lower classes and C the contractions (if withC), returning its end or 0.
// U* backtracks to the last position from which L+ can start.
func o200kLower(s string, q int, withC bool) int {
	k := -1
	i := q
	for {
		c, n := at(s, i)
		if c&classLower != 0 {
			k = i
		}
		if c&classUpper == 0 {
			break
		}
		i += n
	}
	if k < 0 {
		return 0
	}
	return suffix(s, run(s, k, classLower), withC)
}

// o200kUpper matches `U+L*C?` from s[q:], returning its end or 0.
func o200kUpper(s string, q int, withC bool) int {
	u := run(s, q, classUpper)
	if u == q {
		return 0
	}
	return suffix(s, run(s, u, classLower), withC)
}

// suffix extends a word ending at e by a following contraction, if withC.
func suffix(s string, e int, withC bool) int {
	if withC {
		e += contraction(s[e:], true)
	}
	return e
}

// cl100kPiece scans one piece of cl100kPattern, or of qwen2Pattern when
// digits is 1.
func cl100kPiece(s string, digits int) int {
	if e := contraction(s, true); e > 0 {
		return e
	}
	c0, n0 := at(s, 0)
	if c0&classLead != 0 {
		if e := run(s, n0, classL); e > n0 {
			return e
		}
	}
	switch {
	case c0&classL != 0:
		return run(s, 0, classL)
	case c0&classN != 0:
		return runMax(s, 0, classN, digits)
	case c0&classSpace == 0 || s[0] == ' ':
		if e := punct(s, "\r\n"); e > 0 {
			return e
		}
	}
	return spaces(s, true)
}

// gpt2Piece scans one piece of gpt2Pattern.
func gpt2Piece(s string) int {
	if e := contraction(s, false); e > 0 {
		return e
	}
	i := 0
	if s[0] == ' ' {
		i = 1
	}
	for _, class := range [...]uint8{classL, classN, classPunct} {
		if e := run(s, i, class); e > i {
			return e
		}
	}
	return spaces(s, false)
}
