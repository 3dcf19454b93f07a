package endpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// The read loop decodes every streamed chunk, so it uses this scanner instead
// of encoding/json, which costs ~5 µs and 11 allocations per vLLM-sized
// chunk. It reads only the fields of wireChunk and skips everything else
// without validating it. Where the input is valid JSON that encoding/json
// accepts, the result is the same as json.Unmarshal into wireChunk (key
// case-folding, escapes, invalid UTF-8 and null handling included); this is
// checked by FuzzDecodeChunk. The rare usage object is handed to
// encoding/json.

var errSyntax = errors.New("decode response chunk: invalid JSON")

// decodeChunk decodes one JSON response object into w, which must be zero or
// reset.
func decodeChunk(data []byte, w *wireChunk) error {
	s := scanner{b: data}
	return s.chunk(w)
}

// decodeTransient is decodeChunk without allocating the strings it reads:
// w's strings alias data or *scratch (reused: emptied first), so they are
// valid only while data is unchanged and until the next decodeTransient
// with the same scratch. The read loop decodes every streamed chunk this
// way and copies the text it keeps (Response.appendChunk).
func decodeTransient(data []byte, w *wireChunk, scratch *[]byte) error {
	*scratch = (*scratch)[:0]
	s := scanner{b: data, scratch: scratch}
	return s.chunk(w)
}

// chunk reads a response object into w.
func (s *scanner) chunk(w *wireChunk) error {
	err := s.object(func(key []byte) error {
		switch {
		case keyIs(key, "choices"):
			return s.choices(w)
		case keyIs(key, "usage"):
			return s.usage(w)
		case keyIs(key, "metrics"):
			return s.metrics(w)
		case keyIs(key, "error"):
			raw, err := s.skip()
			w.Error = append(w.Error[:0], raw...)
			return err
		}
		_, err := s.skip()
		return err
	})
	if err != nil {
		return err
	}
	if s.ws(); s.i != len(s.b) {
		return errSyntax
	}
	return nil
}

type scanner struct {
	b []byte
	i int
	// scratch, when set, receives the decoded strings that hold escapes;
	// text then returns strings aliasing b or *scratch (decodeTransient).
	scratch *[]byte
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

// choices reads the choices array into w.Choices, reusing its backing
// array the way encoding/json does: an element already there (from an
// earlier "choices" key of the same object) is decoded into, not cleared.
func (s *scanner) choices(w *wireChunk) error {
	if s.null() {
		w.Choices, w.hasChoices = nil, false
		return nil
	}
	n, err := s.array(func(i int) error {
		if i >= cap(w.Choices) {
			w.Choices = append(w.Choices[:cap(w.Choices)], wireChoice{})
		}
		w.Choices = w.Choices[:i+1]
		return s.choice(&w.Choices[i])
	})
	if err != nil {
		return err
	}
	w.Choices, w.hasChoices = w.Choices[:n], true
	return nil
}

func (s *scanner) choice(c *wireChoice) error {
	if s.null() {
		return nil
	}
	return s.object(func(key []byte) error {
		switch {
		case keyIs(key, "index"):
			raw, err := s.skip()
			if err == nil {
				err = c.Index.UnmarshalJSON(raw)
			}
			return err
		case keyIs(key, "text"):
			return s.text(&c.Text)
		case keyIs(key, "delta"):
			return s.message(&c.Delta)
		case keyIs(key, "message"):
			return s.message(&c.Message)
		}
		_, err := s.skip()
		return err
	})
}

func (s *scanner) message(m *wireMessage) error {
	if s.null() {
		return nil
	}
	return s.object(func(key []byte) error {
		switch {
		case keyIs(key, "content"):
			return s.text(&m.Content)
		case keyIs(key, "reasoning_content"):
			return s.text(&m.ReasoningContent)
		case keyIs(key, "reasoning"):
			return s.text(&m.Reasoning)
		case keyIs(key, "tool_calls"):
			return s.toolCalls(m)
		}
		_, err := s.skip()
		return err
	})
}

func (s *scanner) toolCalls(m *wireMessage) error {
	if s.null() {
		m.ToolCalls = nil
		return nil
	}
	n, err := s.array(func(i int) error {
		if i >= cap(m.ToolCalls) {
			m.ToolCalls = append(m.ToolCalls[:cap(m.ToolCalls)], make([]toolCall, i+1-cap(m.ToolCalls))...)
		}
		m.ToolCalls = m.ToolCalls[:i+1]
		tc := &m.ToolCalls[i]
		if s.null() {
			return nil
		}
		return s.object(func(key []byte) error {
			if !keyIs(key, "function") {
				_, err := s.skip()
				return err
			}
			if s.null() {
				return nil
			}
			return s.object(func(key []byte) error {
				if keyIs(key, "arguments") {
					return s.text(&tc.Function.Arguments)
				}
				_, err := s.skip()
				return err
			})
		})
	})
	m.ToolCalls = m.ToolCalls[:min(n, len(m.ToolCalls))]
	return err
}

func (s *scanner) usage(w *wireChunk) error {
	if s.null() {
		w.Usage = nil
		return nil
	}
	raw, err := s.skip()
	if err != nil {
		return err
	}
	w.Usage = new(wireUsage)
	if json.Unmarshal(raw, w.Usage) != nil {
		// Counts of the wrong shape are described, not a reason to drop
		// the chunk: the response is still measured.
		*w.Usage = wireUsage{malformed: true}
	}
	return nil
}

// metrics reads the rare root "metrics" object (vLLM's per-request
// metrics) with encoding/json, as json.Unmarshal would into the chunk:
// null empties it, an object's members update it.
func (s *scanner) metrics(w *wireChunk) error {
	if s.null() {
		w.Metrics = nil
		return nil
	}
	raw, err := s.skip()
	if err != nil {
		return err
	}
	if w.Metrics == nil {
		w.Metrics = new(wireMetrics)
	}
	if json.Unmarshal(raw, w.Metrics) != nil {
		w.Metrics = nil // not an object: no acceptance (json.Unmarshal would refuse the chunk)
	}
	return nil
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
