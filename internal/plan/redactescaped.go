package plan

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// escapeLevels is how many levels of JSON string escaping a secret is
// looked for under: a server's JSON (PHP writes "/" as "\/", Python
// non-ASCII as "\u00e9", any encoder may escape any character), and that
// JSON quoted once more inside another's error message.
const escapeLevels = 2

// escaped replaces the secrets that s holds altered (alteredSpans: in
// another case, or their first characters only), then those it holds
// under JSON string escapes no variant spells out (a "\/", a "\u0041" for
// "A"), as written or altered: it reads s with its escapes decoded, up to
// escapeLevels deep, and replaces the source of every match in s. Short
// secrets, replaced only where they stand alone, are left to the plain
// forms.
func (r *Redactor) escaped(s string) string {
	// The escaped forms first: cut at its first escape, a prefix would
	// leave the rest of its run behind, escaped.
	s = r.unescaped(s)
	if spans := r.alteredSpans(s); spans != nil {
		s = cut(s, spans, nil)
	}
	return s
}

// unescaped replaces what s holds under JSON string escapes.
func (r *Redactor) unescaped(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	urls := r.urls && escapedURL(s)
	if len(r.long) == 0 && !urls {
		return s
	}
	// The views are made without their offsets first: most texts hold no
	// secret, and the offsets cost 4 bytes a byte. Only a match has them
	// made, down to its level. The deepest view is looked at first: an
	// altered secret's run is longest there (a prefix cut short at a
	// deeper escape would leave the rest of it; the Redact loop comes back
	// for what only a shallower view shows).
	var views []string
	for view := s; len(views) < escapeLevels; {
		next, _, ok := unescapeJSON(view, false)
		if !ok {
			break
		}
		views, view = append(views, next), next
	}
	for level := len(views); level >= 1; level-- {
		if r.matches(views[level-1], urls) != nil {
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

// spans are the byte ranges of view that the long secrets match, as
// written or altered, in order and apart (overlapping matches merged).
func (r *Redactor) spans(view string) [][2]int {
	out := r.alteredSpans(view)
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
// from s[at[i]:at[i+1]] (at has one entry more than the view, len(s));
// at nil: the view is s.
func cut(s string, spans [][2]int, at []int32) string {
	var b strings.Builder
	prev := 0
	for _, sp := range spans {
		from, to := sp[0], sp[1]
		if at != nil {
			from, to = int(at[from]), int(at[to])
		}
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

// A server may echo a secret altered: upper-cased in an error message, or
// cut to its first characters with the rest masked ("sk-ZZTOPSECR***").
// Both are looked for, in a single pass over the text per secret:
//
//   - a long secret of minFoldedSecret characters or more is found in any
//     case of its ASCII letters (an "Sk-Abc…" key in "SK-ABC…");
//   - a run of minPrefix characters or more that begins a secret of
//     minPrefixSecret characters or more, holding no white space, is
//     found in any case too: a key's echoed first characters.
//
// The minimums keep ordinary words whole: a secret shorter than
// minFoldedSecret is matched only as written, and a prefix must be
// minPrefix characters long, taken from a secret long enough that its
// prefix is no common word (a random key's first 12 characters are not
// text, even behind a vendor's "sk-proj-"; a dictionary-word password's
// may be, and that word is then redacted wherever it occurs, which hides
// nothing but the word). A secret with white space (a whole "Bearer …"
// header value, a Cookie header) or a user name (user:pass) has no prefix
// rule: its start is a scheme word or the user name, and its credential is
// a secret of its own.
const (
	minFoldedSecret = 8
	minPrefixSecret = 16
	minPrefix       = 12
)

// alteredSpans are the byte ranges of s that hold a long secret in another
// ASCII case, or a prefix of one (see above), in order and apart; nil when
// there are none. Runs inside a Redacted marker are left alone (a secret
// that starts with "redacted" would otherwise redact the marker forever).
// Linear in len(s) for each secret.
func (r *Redactor) alteredSpans(s string) [][2]int {
	if len(r.long) == 0 || len(s) < minPrefix {
		return nil
	}
	var out [][2]int
	for _, v := range r.long {
		if p := alteredMin(v); p > 0 {
			out = appendRuns(out, s, foldASCII(v), p)
		}
	}
	if len(out) == 0 {
		return nil
	}
	kept := out[:0]
	for _, sp := range out {
		for sp[1] < len(s) && !utf8.RuneStart(s[sp[1]]) {
			sp[1]++ // the whole of a character the run ends in
		}
		if !inMarker(s, sp) {
			kept = append(kept, sp)
		}
	}
	return merge(kept)
}

// alteredMin is how many bytes of v's start a run must match to count as
// an altered echo of v (len(v) when only the whole secret counts), 0 when
// v is looked for as written only.
func alteredMin(v string) int {
	n := utf8.RuneCountInString(v)
	if n < minFoldedSecret || !utf8.ValidString(v) {
		return 0
	}
	if n < minPrefixSecret || strings.ContainsFunc(v, unicode.IsSpace) || userInfo(v) {
		return len(v)
	}
	p := 0
	for range minPrefix {
		_, size := utf8.DecodeRuneInString(v[p:])
		p += size
	}
	return p
}

// userInfo reports whether v holds a user name before its password (a URL's
// user:pass, Basic auth's), as written or URL-escaped: its start is the
// user name, which is no secret and must not be redacted wherever it occurs.
func userInfo(v string) bool {
	return strings.Contains(v, ":") || strings.Contains(v, "%3A") || strings.Contains(v, "%3a")
}

// appendRuns appends the byte ranges of text where a prefix of pat (ASCII
// lower-case) of p bytes or more ends, text's ASCII letters in any case,
// merged where they overlap. Candidates are found by indexFold of pat's
// first p bytes; from each, a Knuth-Morris-Pratt automaton runs until no
// prefix of p bytes or more is open, and the search resumes where one could
// start: no byte is read more than twice, and text is not copied.
func appendRuns(out [][2]int, text, pat string, p int) [][2]int {
	head := pat[:p]
	var fail []int
	for from := 0; from+p <= len(text); {
		i := indexFold(text[from:], head)
		if i < 0 {
			break
		}
		i += from
		if fail == nil {
			fail = failure(pat)
		}
		from = len(text)
		for j, state := i, 0; j < len(text); j++ {
			c := lowerASCII(text[j])
			for state > 0 && (state == len(pat) || c != pat[state]) {
				state = fail[state-1]
			}
			if c == pat[state] {
				state++
			}
			if state >= p {
				start, end := j+1-state, j+1
				if n := len(out); n > 0 && start <= out[n-1][1] && out[n-1][0] <= start {
					out[n-1][1] = max(out[n-1][1], end)
				} else {
					out = append(out, [2]int{start, end})
				}
			} else if j+1-i > p {
				// No run of p bytes is open: one starts at j+1-state or later.
				from = j + 1 - state
				break
			}
		}
	}
	return out
}

// indexFold is the index of the first instance of head (ASCII lower-case)
// in text, text's ASCII letters in any case; -1 if none. The next instance
// of each case of head's first byte is kept, not searched for again, so
// the scan is linear for a short head.
func indexFold(text, head string) int {
	lo, up := head[0], head[0]
	if 'a' <= lo && lo <= 'z' {
		up = lo - 'a' + 'A'
	}
	nextLo, nextUp := -1, -1 // the next instance of each at or after i (-2: none left)
	for i := 0; i+len(head) <= len(text); {
		if nextLo != -2 && nextLo < i {
			if nextLo = strings.IndexByte(text[i:], lo); nextLo < 0 {
				nextLo = -2
			} else {
				nextLo += i
			}
		}
		if up == lo {
			nextUp = nextLo
		} else if nextUp != -2 && nextUp < i {
			if nextUp = strings.IndexByte(text[i:], up); nextUp < 0 {
				nextUp = -2
			} else {
				nextUp += i
			}
		}
		switch {
		case nextLo == -2 && nextUp == -2:
			return -1
		case nextLo == -2:
			i = nextUp
		case nextUp == -2:
			i = nextLo
		default:
			i = min(nextLo, nextUp)
		}
		if i+len(head) > len(text) {
			return -1
		}
		if equalFoldASCII(text[i:i+len(head)], head) {
			return i
		}
		i++
	}
	return -1
}

// equalFoldASCII reports whether s, its ASCII letters in any case, is lower
// (ASCII lower-case).
func equalFoldASCII(s, lower string) bool {
	for k := range len(s) {
		if lowerASCII(s[k]) != lower[k] {
			return false
		}
	}
	return true
}

// lowerASCII is c lower-cased when it is an ASCII capital.
func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// failure is the Knuth-Morris-Pratt failure function of pat: fail[k] is
// the length of the longest proper prefix of pat[:k+1] that is also its
// suffix.
func failure(pat string) []int {
	fail := make([]int, len(pat))
	for k, n := 1, 0; k < len(pat); k++ {
		for n > 0 && pat[k] != pat[n] {
			n = fail[n-1]
		}
		if pat[k] == pat[n] {
			n++
		}
		fail[k] = n
	}
	return fail
}

// foldASCII is s with its ASCII capitals lower-cased (s itself when it has
// none): byte offsets are kept.
func foldASCII(s string) string {
	i := strings.IndexFunc(s, func(c rune) bool { return 'A' <= c && c <= 'Z' })
	if i < 0 {
		return s
	}
	b := []byte(s)
	for k := i; k < len(b); k++ {
		b[k] = lowerASCII(b[k])
	}
	return string(b)
}

// inMarker reports whether span sp of s lies within a Redacted marker.
func inMarker(s string, sp [2]int) bool {
	for st := max(0, sp[1]-len(Redacted)); st <= sp[0]; st++ {
		if strings.HasPrefix(s[st:], Redacted) {
			return true
		}
	}
	return false
}
