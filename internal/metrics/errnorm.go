package metrics

import "strings"

// NormalizeMessage replaces the parts of an error message that differ
// between otherwise identical failures: IP addresses (with their port)
// become <addr>, a host's port <port>, ids that mix letters with three
// digits or more (UUIDs, request ids) <id>, other numbers N. "read tcp
// 127.0.0.1:50412->127.0.0.1:8000: read: connection reset by peer" becomes
// "read tcp <addr>-><addr>: read: connection reset by peer". It is one pass
// over the message: error summaries of millions of failures stay cheap.
func NormalizeMessage(msg string) string {
	if !strings.ContainsAny(msg, "0123456789") {
		return msg
	}
	var b strings.Builder
	b.Grow(len(msg))
	afterName := false // the last thing written was a word holding a letter
	for i := 0; i < len(msg); {
		c := msg[i]
		switch {
		case isDigit(c):
			if n := ipv4Len(msg[i:]); n > 0 {
				b.WriteString("<addr>")
				i += n + portLen(msg[i+n:])
				afterName = false
				continue
			}
			fallthrough
		case isWordByte(c):
			j := i
			for j < len(msg) && (isWordByte(msg[j]) || msg[j] == '.' && j > i && isDigit(msg[j-1]) && j+1 < len(msg) && isDigit(msg[j+1])) {
				j++
			}
			word := msg[i:j]
			letters := strings.ContainsFunc(word, isLetter)
			if len(word) >= 8 && letters && digits(word) >= 3 {
				b.WriteString("<id>")
			} else {
				writeNumbersAsN(&b, word)
			}
			i, afterName = j, letters
		case c == '[':
			if n := ipv6Len(msg[i:]); n > 0 {
				b.WriteString("<addr>")
				i += n + portLen(msg[i+n:])
				afterName = false
				continue
			}
			b.WriteByte(c)
			i, afterName = i+1, false
		case c == ':' && afterName && portLen(msg[i:]) > 0:
			b.WriteString(":<port>")
			i, afterName = i+portLen(msg[i:]), false
		default:
			b.WriteByte(c)
			i, afterName = i+1, false
		}
	}
	return b.String()
}

// writeNumbersAsN writes word with every run of digits (and decimal point)
// replaced by N.
func writeNumbersAsN(b *strings.Builder, word string) {
	for i := 0; i < len(word); {
		if !isDigit(word[i]) {
			b.WriteByte(word[i])
			i++
			continue
		}
		for i < len(word) && (isDigit(word[i]) || word[i] == '.') {
			i++
		}
		b.WriteByte('N')
	}
}

// ipv4Len is the length of the dotted quad at the start of s (not followed
// by another word character), 0 if there is none.
func ipv4Len(s string) int {
	i := 0
	for part := range 4 {
		if part > 0 {
			if i >= len(s) || s[i] != '.' {
				return 0
			}
			i++
		}
		n := 0
		for i < len(s) && isDigit(s[i]) && n < 3 {
			i, n = i+1, n+1
		}
		if n == 0 {
			return 0
		}
	}
	if i < len(s) && (isWordByte(s[i]) || s[i] == '.' && i+1 < len(s) && isDigit(s[i+1])) {
		return 0
	}
	return i
}

// ipv6Len is the length of a bracketed IPv6 address at the start of s
// ("[::1]"), 0 if there is none.
func ipv6Len(s string) int {
	colon := false
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == ']':
			if colon {
				return i + 1
			}
			return 0
		case c == ':':
			colon = true
		case c == '.' || isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F':
		default:
			return 0
		}
	}
	return 0
}

// portLen is the length of ":<1-5 digits>" at the start of s when no letter,
// digit or underscore follows ("->" may), 0 otherwise.
func portLen(s string) int {
	if len(s) < 2 || s[0] != ':' {
		return 0
	}
	i := 1
	for i < len(s) && isDigit(s[i]) && i <= 5 {
		i++
	}
	if i == 1 || i < len(s) && (isDigit(s[i]) || isLetter(rune(s[i])) || s[i] == '_') {
		return 0
	}
	return i
}

func digits(s string) int {
	n := 0
	for i := range len(s) {
		if isDigit(s[i]) {
			n++
		}
	}
	return n
}

func isDigit(c byte) bool    { return '0' <= c && c <= '9' }
func isLetter(r rune) bool   { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }
func isWordByte(c byte) bool { return isDigit(c) || isLetter(rune(c)) || c == '_' || c == '-' }
