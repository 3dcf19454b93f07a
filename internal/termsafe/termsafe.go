// Package termsafe keeps text that came from elsewhere (a server's reply or
// error body, a stored run, sweep or cell name, a label) from driving the
// terminal it is printed on. Text shows every control character as a
// visible escape (ESC as \x1b, CR as \r, a C1 control as \u009b, a
// bidirectional override as \u202e), so a server cannot clear the screen,
// move the cursor, rewrite a line already printed, set the window title or
// reorder what is shown. Writer applies it to everything written through
// it, lines kept. The CLI wraps its stdout and stderr in a Writer once;
// only the output that draws on the terminal on purpose (the dashboard,
// the self-overwriting progress line) or is data for a program (a worker's
// protocol, result frames, a raw export) takes Raw.
package termsafe

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"unicode/utf8"
)

// Text returns s with every control character escaped, newline and tab
// included: one table cell or one field stays on one line. Text already
// escaped is left as it is (a backslash is not escaped).
func Text(s string) string { return escape(s, false) }

// Lines is Text with newlines and tabs kept: a block of lines (a view the
// program laid out) whose parts may carry control characters.
func Lines(s string) string { return escape(s, true) }

// escape is Text; with lines, newline and tab are kept.
func escape(s string, lines bool) string {
	i := firstUnsafe(s, lines)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case !unsafe(r, lines):
			b.WriteString(s[i : i+size])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += size
	}
	return b.String()
}

// firstUnsafe is the index of the first byte of s to escape, -1 if none.
func firstUnsafe(s string, lines bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if unsafe(rune(c), lines) {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || unsafe(r, lines) {
			return i
		}
		i += size
	}
	return -1
}

// unsafe reports a rune a terminal acts on instead of showing: a C0
// control (ESC, CR, BEL, BS, ...), DEL, a C1 control (CSI, OSC, NEL, ...),
// a bidirectional embedding, override, isolate or mark, or a line or
// paragraph separator. With lines, newline and tab are safe.
func unsafe(r rune, lines bool) bool {
	switch {
	case r == '\n' || r == '\t':
		return !lines
	case r < 0x20 || r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x061c || r == 0x200e || r == 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x2028 || r == 0x2029:
		return true
	}
	return false
}

// Writer returns a writer that escapes what is written as Text does, but
// keeps newlines and tabs. It is safe for concurrent use; each Write
// reaches w in one Write. A character split across two writes is held back
// until it is whole.
func Writer(w io.Writer) io.Writer {
	if _, ok := w.(*writer); ok {
		return w
	}
	if _, ok := w.(*os.File); !ok {
		// Raw hands w out beside the Writer: a buffer or pipe writer must
		// take both's writes one at a time (a file does already).
		w = &locked{w: w}
	}
	return &writer{w: w}
}

// locked serialises the writes of a writer that is not safe for
// concurrent use.
type locked struct {
	mu sync.Mutex
	w  io.Writer
}

// Unwrap is the writer l serialises, for a check of what lies under it (is
// it a terminal; is it marked wide).
func (l *locked) Unwrap() io.Writer { return l.w }

func (l *locked) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Raw returns the writer under a Writer (w itself otherwise), for output
// that must reach the terminal or a reading program unchanged. It is safe
// for concurrent use with the Writer: a file as it is, anything else
// behind the Writer's lock on it.
func Raw(w io.Writer) io.Writer {
	if tw, ok := w.(*writer); ok {
		return tw.w
	}
	return w
}

// File is the file under w and the writers around it that say what they
// wrap (Unwrap() io.Writer: a lock, a redaction, a width mark), nil when
// none is a file: whether output goes to a terminal is its question.
func File(w io.Writer) *os.File {
	for {
		w = Raw(w)
		if f, ok := w.(*os.File); ok {
			return f
		}
		u, ok := w.(interface{ Unwrap() io.Writer })
		if !ok {
			return nil
		}
		w = u.Unwrap()
	}
}

type writer struct {
	mu      sync.Mutex
	w       io.Writer
	pending []byte // the start of a character cut by the end of a write
}

func (t *writer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := string(p)
	if len(t.pending) > 0 {
		s = string(t.pending) + s
		t.pending = t.pending[:0]
	}
	if cut := partialRune(s); cut > 0 {
		t.pending = append(t.pending, s[len(s)-cut:]...)
		s = s[:len(s)-cut]
	}
	if _, err := io.WriteString(t.w, Lines(s)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// partialRune is the length of an incomplete but valid start of a UTF-8
// character that ends s (0: none).
func partialRune(s string) int {
	for k := 1; k < utf8.UTFMax && k <= len(s); k++ {
		c := s[len(s)-k]
		if c < utf8.RuneSelf {
			return 0
		}
		if utf8.RuneStart(c) {
			if utf8.FullRuneInString(s[len(s)-k:]) {
				return 0
			}
			return k
		}
	}
	return 0
}
