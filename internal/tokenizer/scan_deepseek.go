package tokenizer

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The split patterns of DeepSeek V3 (and R1), a Sequence of three Isolated
// Splits before a ByteLevel without its own regex. Unlike the patterns of
// scan.go they do not match everywhere: the text between matches is kept
// as pieces too, so their scanners return the length of such a gap when no
// match starts the text.
const (
	deepseekDigits = `\p{N}{1,3}`
	deepseekCJK    = "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+"
	deepseekWords  = "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+" +
		`|[^` + "\r\n" + `\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[` + "\r\n" + `]*|\s*[` + "\r\n" + `]+|\s+(?!\S)|\s+`
)

// gapScanners are the scanners of patterns that keep gaps.
var gapScanners = map[string]scanner{
	deepseekDigits: withGaps(func(s string) int { return runMax(s, 0, classN, 3) }),
	deepseekCJK:    withGaps(func(s string) int { return runOf(s, isDeepseekCJK) }),
	deepseekWords:  withGaps(deepseekWord),
}

func init() {
	for p, s := range gapScanners {
		scanners[p] = s
	}
}

// withGaps turns match, which returns the length of the match that starts
// s or 0, into a scanner that also returns the gaps between matches.
func withGaps(match func(s string) int) scanner {
	return func(s string) int {
		if n := match(s); n > 0 {
			return n
		}
		i := 0
		for i < len(s) {
			_, n := utf8.DecodeRuneInString(s[i:])
			i += n
			if i < len(s) && match(s[i:]) > 0 {
				break
			}
		}
		return i
	}
}

// runOf returns the length of the run of runes in class that starts s.
func runOf(s string, in func(rune) bool) int {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !in(r) {
			break
		}
		i += n
	}
	return i
}

func isDeepseekCJK(r rune) bool {
	return 0x4e00 <= r && r <= 0x9fa5 || 0x3040 <= r && r <= 0x309f || 0x30a0 <= r && r <= 0x30ff
}

func isLetterOrMark(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
	}
	return unicode.In(r, unicode.L, unicode.M)
}

func isPunctOrSymbol(r rune) bool {
	if r < utf8.RuneSelf {
		return strings.ContainsRune("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", r)
	}
	return unicode.In(r, unicode.P, unicode.S)
}

// deepseekWord matches deepseekWords at the start of s, returning its
// length or 0.
func deepseekWord(s string) int {
	r0, n0 := utf8.DecodeRuneInString(s)
	// [ASCII punctuation][A-Za-z]+
	if r0 < utf8.RuneSelf && isPunctOrSymbol(r0) {
		i := 1
		for i < len(s) && ('a' <= s[i] && s[i] <= 'z' || 'A' <= s[i] && s[i] <= 'Z') {
			i++
		}
		if i > 1 {
			return i
		}
	}
	// [^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+: with the leading rune if it
	// may lead, else (or if no letter follows) without.
	if r0 != '\r' && r0 != '\n' && !unicode.IsLetter(r0) && !isPunctOrSymbol(r0) {
		if e := runOf(s[n0:], isLetterOrMark); e > 0 {
			return n0 + e
		}
	}
	if e := runOf(s, isLetterOrMark); e > 0 {
		return e
	}
	// ' ?[\p{P}\p{S}]+[\r\n]*'
	i := 0
	if r0 == ' ' {
		i = 1
	}
	if e := runOf(s[i:], isPunctOrSymbol); e > 0 {
		i += e
		for i < len(s) && (s[i] == '\r' || s[i] == '\n') {
			i++
		}
		return i
	}
	if unicode.IsSpace(r0) {
		return spaces(s, true)
	}
	return 0
}
