package endpoint

import (
	"bytes"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// scanner is the JSON reader decode.go's chunk decoder is written with:
// whitespace, literals, objects, arrays and strings, unescaped as
// encoding/json does, over a byte slice.
type scanner struct {
	b []byte
	i int
	// scratch, when set, receives the decoded strings that hold escapes;
	// text then returns strings aliasing b or *scratch (decodeTransient).
	scratch *[]byte
	// rawUsage leaves a chunk's usage object undecoded (decodeStreamed).
	rawUsage bool
}

// ws skips white space.
func (s *scanner) ws() {
	if s.i < len(s.b) && s.b[s.i] > ' ' {
		return // the usual case: no white space
	}
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// consume skips white space and then c, reporting whether c was there.
func (s *scanner) consume(c byte) bool {
	if s.ws(); s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// null consumes a null literal if one is next.
func (s *scanner) null() bool {
	if s.ws(); len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "null" {
		s.i += 4
		return true
	}
	return false
}

// object reads an object, calling field with each key positioned before its
// value; field must consume the value.
func (s *scanner) object(field func(key []byte) error) error {
	if !s.consume('{') {
		return errSyntax
	}
	if s.consume('}') {
		return nil
	}
	for {
		if s.ws(); s.i >= len(s.b) || s.b[s.i] != '"' {
			return errSyntax
		}
		raw, esc, err := s.str()
		if err != nil {
			return err
		}
		if esc != 0 {
			raw = []byte(unquote(raw))
		}
		if !s.consume(':') {
			return errSyntax
		}
		if err := field(raw); err != nil {
			return err
		}
		if s.consume(',') {
			continue
		}
		if s.consume('}') {
			return nil
		}
		return errSyntax
	}
}

// array reads an array, calling elem with the index of each element; elem
// must consume the element.
func (s *scanner) array(elem func(i int) error) (int, error) {
	if !s.consume('[') {
		return 0, errSyntax
	}
	if s.consume(']') {
		return 0, nil
	}
	for i := 0; ; i++ {
		if err := elem(i); err != nil {
			return 0, err
		}
		if s.consume(',') {
			continue
		}
		if s.consume(']') {
			return i + 1, nil
		}
		return 0, errSyntax
	}
}

// plain marks the bytes that str passes over: neither a quote, a
// backslash, a control character nor part of a multi-byte rune.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// Flags returned by str.
const (
	escaped  = 1 // the string holds a backslash escape
	nonASCII = 2 // the string holds a byte >= 0x80
)

// str reads a string token (s.b[s.i] is its quote) and returns its raw bytes
// without the quotes.
func (s *scanner) str() (raw []byte, flags int, err error) {
	start := s.i + 1
	for i := start; i < len(s.b); i++ {
		for i < len(s.b) && plain[s.b[i]] {
			i++
		}
		if i == len(s.b) {
			break
		}
		switch c := s.b[i]; {
		case c == '"':
			s.i = i + 1
			return s.b[start:i], flags, nil
		case c == '\\':
			flags |= escaped
			i++
		case c < 0x20:
			return nil, 0, errSyntax
		case c >= utf8.RuneSelf:
			flags |= nonASCII
		}
	}
	return nil, 0, errSyntax
}

// skipStr skips a string token (s.b[s.i] is its quote) without decoding or
// validating it.
func (s *scanner) skipStr() error {
	for i := s.i + 1; i < len(s.b); {
		j := bytes.IndexByte(s.b[i:], '"')
		if j < 0 {
			break
		}
		end := i + j
		bs := 0 // backslashes right before the quote: odd means it is escaped
		for k := end - 1; k > s.i && s.b[k] == '\\'; k-- {
			bs++
		}
		if bs%2 == 0 {
			s.i = end + 1
			return nil
		}
		i = end + 1
	}
	return errSyntax
}

// text reads a string or null into *dst (null leaves it unchanged).
func (s *scanner) text(dst *string) error {
	if s.null() {
		return nil
	}
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return errSyntax
	}
	raw, flags, err := s.str()
	switch {
	case err != nil:
		return err
	case len(raw) == 0:
		*dst = ""
	case s.scratch == nil && (flags == 0 || flags == nonASCII && utf8.Valid(raw)):
		*dst = string(raw)
	case s.scratch == nil:
		*dst = unquote(raw)
	case flags == 0 || flags == nonASCII && utf8.Valid(raw):
		*dst = unsafe.String(&raw[0], len(raw))
	default:
		start := len(*s.scratch)
		*s.scratch = appendUnquoted(*s.scratch, raw)
		*dst = unsafe.String(unsafe.SliceData((*s.scratch)[start:]), len(*s.scratch)-start)
	}
	return nil
}

// skip consumes one value of any kind and returns its bytes.
func (s *scanner) skip() ([]byte, error) {
	s.ws()
	start := s.i
	if s.i >= len(s.b) {
		return nil, errSyntax
	}
	switch s.b[s.i] {
	case '"':
		err := s.skipStr()
		return s.b[start:s.i], err
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				if err := s.skipStr(); err != nil {
					return nil, err
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					s.i++
					return s.b[start:s.i], nil
				}
			}
			s.i++
		}
		return nil, errSyntax
	}
	for s.i < len(s.b) && isScalarByte(s.b[s.i]) {
		s.i++
	}
	if s.i == start {
		return nil, errSyntax
	}
	return s.b[start:s.i], nil
}

func isScalarByte(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'E'
}

// keyIs matches a key the way encoding/json matches a field name: exactly,
// or else case-insensitively (small enough to be inlined: most keys are
// told apart by their length).
func keyIs(key []byte, name string) bool {
	return string(key) == name || len(key) >= len(name) && foldsTo(key, name)
}

// foldsTo reports whether key folds to name, which is lower-case ASCII: a
// key starting with an ASCII byte that is not name's first letter in
// either case never does (the non-ASCII runes that fold to ASCII letters,
// K and ſ, are longer than them, so a folding key is never shorter).
func foldsTo(key []byte, name string) bool {
	if key[0] < utf8.RuneSelf && key[0]|0x20 != name[0] {
		return false
	}
	return bytes.EqualFold(key, []byte(name))
}

// unquote decodes the raw bytes of a string token as encoding/json does:
// escapes resolved, invalid UTF-8 and unpaired surrogates replaced by U+FFFD.
// An invalid escape ends the string there (the input was not valid JSON).
func unquote(raw []byte) string {
	return string(appendUnquoted(make([]byte, 0, len(raw)+2*utf8.UTFMax), raw))
}

// appendUnquoted appends unquote(raw) to b.
func appendUnquoted(b, raw []byte) []byte {
	for r := 0; r < len(raw); {
		c := raw[r]
		switch {
		case c == '\\':
			if r+1 >= len(raw) {
				return b
			}
			switch e := raw[r+1]; e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				rr := hex4(raw[r:])
				if rr < 0 {
					return b
				}
				r += 6
				if utf16.IsSurrogate(rr) {
					if dec := utf16.DecodeRune(rr, hex4(raw[r:])); dec != unicode.ReplacementChar {
						r += 6
						b = utf8.AppendRune(b, dec)
						continue
					}
					rr = unicode.ReplacementChar
				}
				b = utf8.AppendRune(b, rr)
				continue
			default:
				return b
			}
			r += 2
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRune(raw[r:])
			b = utf8.AppendRune(b, rr)
			r += size
		}
	}
	return b
}

// hex4 decodes the \uXXXX escape at the start of s, -1 if there is none.
func hex4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}
