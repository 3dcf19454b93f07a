package turnview

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/aiperf-go/aiperf/internal/ctxio"
)

// maxDepth bounds the nesting of a JSON value, as encoding/json does: a
// deeper one is refused rather than recursed into.
const maxDepth = 10000

// readBuffer is the scanner's buffer: the most of a line held at once.
const readBuffer = 64 << 10

// sink receives the decoded bytes of a string (or the text of a value)
// the scanner reads; nil discards them.
type sink interface{ write(p []byte) }

// scanner reads a JSON Lines file, one object a line, as a stream: a
// string's bytes go to a sink as they are read, never gathered whole, so a
// line of any length is read through the fixed buffer. Values are read
// strictly (JSON's grammar); a line's end inside a value is an error.
type scanner struct {
	r     *bufio.Reader
	name  string // the file, for errors
	line  int    // the line being read, from 1
	depth int
	one   [utf8.UTFMax]byte // scratch for a decoded escape
}

func newScanner(ctx context.Context, r io.Reader, name string) *scanner {
	// Ctrl-C stops a long line too.
	return &scanner{r: bufio.NewReaderSize(ctxio.Reader(ctx, r), readBuffer), name: name, line: 1}
}

// errorf is an error at the line being read.
func (s *scanner) errorf(format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", s.name, s.line, fmt.Sprintf(format, args...))
}

// readErr is an error reading inside a value: the end of the file, or the
// reader's (an interruption stays one).
func (s *scanner) readErr(err error) error {
	if errors.Is(err, io.EOF) {
		return s.errorf("the file ends inside a JSON value")
	}
	return fmt.Errorf("%s:%d: %w", s.name, s.line, err)
}

// byte reads the next byte of a value.
func (s *scanner) byte() (byte, error) {
	c, err := s.r.ReadByte()
	if err != nil {
		return 0, s.readErr(err)
	}
	return c, nil
}

// next returns the next byte that is not whitespace, consumed.
func (s *scanner) next() (byte, error) {
	for {
		c, err := s.byte()
		if err != nil {
			return 0, err
		}
		switch c {
		case ' ', '\t', '\r':
			continue
		case '\n':
			_ = s.r.UnreadByte()
			return 0, s.errorf("the line ends inside a JSON value (one JSON object a line)")
		}
		return c, nil
	}
}

// peek returns the next byte that is not whitespace, left unread: what
// kind of value comes.
func (s *scanner) peek() (byte, error) {
	c, err := s.next()
	if err == nil {
		_ = s.r.UnreadByte()
	}
	return c, err
}

// expect reads the byte want.
func (s *scanner) expect(want byte, what string) error {
	c, err := s.next()
	if err != nil {
		return err
	}
	if c != want {
		return s.errorf("want %s, got %s", what, show(c))
	}
	return nil
}

// show names a byte in an error.
func show(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return fmt.Sprintf("%q", rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

func (s *scanner) enter() error {
	if s.depth++; s.depth > maxDepth {
		return s.errorf("JSON nested deeper than %d levels", maxDepth)
	}
	return nil
}

// object reads an object, calling fn with each key; fn reads its value.
// A key longer than keyLimit is passed as "" (no field of ours).
func (s *scanner) object(fn func(key string) error) error {
	if err := s.expect('{', "a JSON object"); err != nil {
		return err
	}
	if err := s.enter(); err != nil {
		return err
	}
	defer func() { s.depth-- }()
	c, err := s.next()
	if err != nil || c == '}' {
		return err
	}
	for key := (keyBuf{}); ; {
		if c != '"' {
			return s.errorf("want an object key, got %s", show(c))
		}
		key.n, key.long = 0, false
		if err := s.strBody(&key); err != nil {
			return err
		}
		if err := s.expect(':', "':' after an object key"); err != nil {
			return err
		}
		if err := fn(key.String()); err != nil {
			return err
		}
		if c, err = s.next(); err != nil {
			return err
		}
		switch c {
		case '}':
			return nil
		case ',':
			if c, err = s.next(); err != nil {
				return err
			}
		default:
			return s.errorf("want ',' or '}' in an object, got %s", show(c))
		}
	}
}

// array reads an array, calling fn to read each element.
func (s *scanner) array(fn func() error) error {
	if err := s.expect('[', "a JSON array"); err != nil {
		return err
	}
	if err := s.enter(); err != nil {
		return err
	}
	defer func() { s.depth-- }()
	c, err := s.peek()
	if err != nil {
		return err
	}
	if c == ']' {
		_, err = s.next()
		return err
	}
	for {
		if err := fn(); err != nil {
			return err
		}
		c, err := s.next()
		if err != nil {
			return err
		}
		switch c {
		case ']':
			return nil
		case ',':
		default:
			return s.errorf("want ',' or ']' in an array, got %s", show(c))
		}
	}
}

// keyLimit is the longest object key told apart: ours are short.
const keyLimit = 64

// keyBuf holds an object key.
type keyBuf struct {
	b    [keyLimit]byte
	n    int
	long bool
}

func (k *keyBuf) write(p []byte) {
	if k.n+len(p) > len(k.b) {
		k.long = true
		return
	}
	k.n += copy(k.b[k.n:], p)
}

func (k *keyBuf) String() string {
	if k.long {
		return ""
	}
	return string(k.b[:k.n])
}

// str reads a string into out (nil: discarded).
func (s *scanner) str(out sink) error {
	if err := s.expect('"', "a JSON string"); err != nil {
		return err
	}
	return s.strBody(out)
}

// strBody reads a string after its opening quote: runs of plain bytes go
// to out straight from the buffer, escapes decoded.
func (s *scanner) strBody(out sink) error {
	for {
		if s.r.Buffered() == 0 {
			if _, err := s.r.Peek(1); err != nil {
				return s.readErr(err)
			}
		}
		buf, _ := s.r.Peek(s.r.Buffered())
		i := 0
		for i < len(buf) && buf[i] != '"' && buf[i] != '\\' && buf[i] >= 0x20 {
			i++
		}
		if out != nil && i > 0 {
			out.write(buf[:i])
		}
		_, _ = s.r.Discard(i)
		if i == len(buf) {
			continue
		}
		c, _ := s.r.ReadByte()
		switch {
		case c == '"':
			return nil
		case c == '\\':
			if err := s.escape(out); err != nil {
				return err
			}
		case c == '\n':
			_ = s.r.UnreadByte()
			return s.errorf("the line ends inside a JSON string")
		default:
			return s.errorf("control character %s inside a JSON string", show(c))
		}
	}
}

// escape decodes an escape after its backslash; a lone UTF-16 surrogate
// becomes U+FFFD, as encoding/json decodes it.
func (s *scanner) escape(out sink) error {
	c, err := s.byte()
	if err != nil {
		return err
	}
	var r rune
	switch c {
	case '"', '\\', '/':
		r = rune(c)
	case 'b':
		r = '\b'
	case 'f':
		r = '\f'
	case 'n':
		r = '\n'
	case 'r':
		r = '\r'
	case 't':
		r = '\t'
	case 'u':
		if r, err = s.hex4(); err != nil {
			return err
		}
		if utf16.IsSurrogate(r) {
			r = s.lowSurrogate(r)
		}
	default:
		return s.errorf("invalid escape \\%c in a JSON string", c)
	}
	if out != nil {
		out.write(utf8.AppendRune(s.one[:0], r))
	}
	return nil
}

// lowSurrogate completes the high surrogate hi with the \uXXXX after it,
// when that is its low half; otherwise hi is U+FFFD and what follows is
// read as itself.
func (s *scanner) lowSurrogate(hi rune) rune {
	if b, err := s.r.Peek(6); err == nil && b[0] == '\\' && b[1] == 'u' {
		if lo, ok := parseHex4(b[2:6]); ok {
			if r := utf16.DecodeRune(hi, lo); r != utf8.RuneError {
				_, _ = s.r.Discard(6)
				return r
			}
		}
	}
	return utf8.RuneError
}

// hex4 reads the four hex digits of a \u escape.
func (s *scanner) hex4() (rune, error) {
	var b [4]byte
	for i := range b {
		c, err := s.byte()
		if err != nil {
			return 0, err
		}
		b[i] = c
	}
	r, ok := parseHex4(b[:])
	if !ok {
		return 0, s.errorf("invalid \\u escape %q in a JSON string", b[:])
	}
	return r, nil
}

func parseHex4(b []byte) (rune, bool) {
	var r rune
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
