package plan

import (
	"cmp"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// escapeLevels is how many levels of JSON string escaping a secret is
// looked for under: a server's JSON (PHP writes "/" as "\/", Python
// non-ASCII as "\u00e9", any encoder may escape any character), and that
// JSON quoted once more inside another's error message.
const escapeLevels = 2

// escaped replaces the secrets that s holds under JSON string escapes no
// variant spells out (a "\/", a "\u0041" for "A"): it reads s with its
// escapes decoded, up to escapeLevels deep, and replaces the source of
// every match in s. Short secrets, replaced only where they stand alone,
// are left to the plain forms.
func (r *Redactor) escaped(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	urls := r.urls && escapedURL(s)
	if len(r.long) == 0 && !urls {
		return s
	}
	// The views are made without their offsets first: most texts hold no
	// secret, and the offsets cost 4 bytes a byte. Only a match has them
	// made, down to its level.
	view := s
	for level := 1; level <= escapeLevels; level++ {
		next, _, ok := unescapeJSON(view, false)
		if !ok {
			break
		}
		view = next
		if r.matches(view, urls) != nil {
			return r.cutAt(s, level, urls)
		}
	}
	return s
}

// matches are the spans of view to replace: the long secrets', and with
// urls the values of secret query parameters.
func (r *Redactor) matches(view string, urls bool) [][2]int {
	spans := r.spans(view)
	if urls {
		spans = merge(append(spans, querySpans(view, r.params)...))
	}
	return spans
}

// cutAt replaces in s what matches its view level escapes deep, tracing
// each byte of the view back to s.
func (r *Redactor) cutAt(s string, level int, urls bool) string {
	view, at := s, []int32(nil) // at[i]: where view's byte i comes from in s; nil: itself
	for range level {
		next, nextAt, _ := unescapeJSON(view, true)
		if at != nil {
			for i, j := range nextAt {
				nextAt[i] = at[j]
			}
		}
		view, at = next, nextAt
	}
	return cut(s, r.matches(view, urls), at)
}

// spans are the byte ranges of view that the long secrets match, in order
// and apart (overlapping matches merged).
func (r *Redactor) spans(view string) [][2]int {
	var out [][2]int
	for _, v := range r.long {
		for from := 0; ; {
			i := strings.Index(view[from:], v)
			if i < 0 {
				break
			}
			out = append(out, [2]int{from + i, from + i + len(v)})
			from += i + 1
		}
	}
	return merge(out)
}

// escapedURL reports whether s may hold a URL whose query only escapes
// spell out: its slashes, '?', '&' or '=' escaped (\/, \u00XX).
func escapedURL(s string) bool {
	return strings.Contains(s, `\/`) || strings.Contains(s, `\u00`)
}

// querySpans are the byte ranges of the values of the secret query
// parameters (IsSecretParam with marked) of every URL in s.
func querySpans(s string, marked []string) [][2]int {
	var out [][2]int
	base := 0
	mapURLs(s, isURLByte, func(u string) string {
		at := base + strings.Index(s[base:], u)
		for _, v := range queryValues(u) {
			if v.end > v.start && IsSecretParam(v.name, marked) {
				out = append(out, [2]int{at + v.start, at + v.end})
			}
		}
		base = at + len(u)
		return u
	})
	return out
}

// merge sorts spans and merges those that overlap.
func merge(out [][2]int) [][2]int {
	if len(out) == 0 {
		return nil
	}
	slices.SortFunc(out, func(a, b [2]int) int { return cmp.Compare(a[0], b[0]) })
	merged := out[:1]
	for _, sp := range out[1:] {
		last := &merged[len(merged)-1]
		if sp[0] <= last[1] {
			last[1] = max(last[1], sp[1])
			continue
		}
		merged = append(merged, sp)
	}
	return merged
}

// cut replaces in s the sources of the view's spans: view byte i comes
// from s[at[i]:at[i+1]] (at has one entry more than the view, len(s)).
func cut(s string, spans [][2]int, at []int32) string {
	var b strings.Builder
	prev := 0
	for _, sp := range spans {
		from, to := int(at[sp[0]]), int(at[sp[1]])
		if from < prev {
			from = prev
		}
		b.WriteString(s[prev:from])
		b.WriteString(Redacted)
		prev = to
	}
	b.WriteString(s[prev:])
	return b.String()
}

// unescapeJSON decodes the JSON string escapes of s (\" \\ \/ \b \f \n \r
// \t \uXXXX, surrogate pairs joined); anything else is kept as written.
// at[i] is where byte i of the result starts in s, and at[len(result)] is
// len(s) (offsets of 32 bits: a text is at most --max-event-bytes, 1 GiB),
// when track; nil otherwise. ok is false when s has no escape to decode.
func unescapeJSON(s string, track bool) (out string, at []int32, ok bool) {
	b := make([]byte, 0, len(s))
	mark := func(i, n int) {
		for ; track && n > 0; n-- {
			at = append(at, int32(i))
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		r, n := rune(0), 0
		if c == '\\' && i+1 < len(s) {
			r, n = escapeAt(s[i:])
		}
		if n == 0 {
			b = append(b, c)
			mark(i, 1)
			i++
			continue
		}
		ok = true
		start := len(b)
		b = utf8.AppendRune(b, r)
		mark(i, len(b)-start)
		i += n
	}
	mark(len(s), 1)
	return string(b), at, ok
}

// escapeAt decodes the escape that s starts with: its rune and length
// (0: not an escape).
func escapeAt(s string) (rune, int) {
	switch s[1] {
	case '"', '\\', '/':
		return rune(s[1]), 2
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 't':
		return '\t', 2
	case 'u':
		r, ok := hex4(s[2:])
		if !ok {
			return 0, 0
		}
		if utf16.IsSurrogate(r) && len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
			if lo, ok := hex4(s[8:]); ok {
				if joined := utf16.DecodeRune(r, lo); joined != utf8.RuneError {
					return joined, 12
				}
			}
		}
		return r, 6
	}
	return 0, 0
}

// hex4 reads four hex digits.
func hex4(s string) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[:4]) {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
