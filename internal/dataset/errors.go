package dataset

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// LineError is one problem with one record of an input file: where it is,
// which field is at fault and what was expected. Open reports every problem
// it finds in a file (up to maxProblems) joined with errors.Join, so a
// caller can list them all; errors.As finds the first.
type LineError struct {
	// Path is the input file.
	Path string
	// Line is the 1-based line the record starts on; 0 for a problem with
	// the file as a whole.
	Line int
	// Col is the 1-based column (in characters) of a JSON syntax or type
	// error; 0 when the problem is with a field's value or the record.
	Col int
	// Field names the field at fault, as a path ("hash_ids",
	// "turns[2].text"); "" for the record as a whole.
	Field string
	// Msg says what is wrong and what was expected.
	Msg string
}

func (e *LineError) Error() string {
	var b strings.Builder
	b.WriteString(e.Path)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
		if e.Col > 0 {
			b.WriteString(":" + strconv.Itoa(e.Col))
		}
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// maxProblems caps the problems listed for one file; the rest are counted.
const maxProblems = 50

// problem is a LineError before it is placed in a file. at is 1 + the
// byte offset of a JSON error in the text decoded (0: none).
type problem struct {
	Col   int
	Field string
	Msg   string
	at    int
}

func problemf(field, format string, args ...any) problem {
	return problem{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// problems collects the problems of one file.
type problems struct {
	path string
	list []error
	more int
}

// add records p at line.
func (ps *problems) add(line int, p problem) {
	if len(ps.list) >= maxProblems {
		ps.more++
		return
	}
	ps.list = append(ps.list, &LineError{Path: ps.path, Line: line, Col: p.Col, Field: p.Field, Msg: p.Msg})
}

// addAll records every one of ps at line.
func (ps *problems) addAll(line int, list []problem) {
	for _, p := range list {
		ps.add(line, p)
	}
}

func (ps *problems) empty() bool { return len(ps.list) == 0 }

// sortByLine orders the problems by their line, those of a line in the
// order they were found.
func (ps *problems) sortByLine() {
	slices.SortStableFunc(ps.list, func(a, b error) int {
		return cmp.Compare(lineOf(a), lineOf(b))
	})
}

// lineOf is err's line (0: none).
func lineOf(err error) int {
	var le *LineError
	if errors.As(err, &le) {
		return le.Line
	}
	return 0
}

// err joins the problems (nil for none), saying how many were not listed.
func (ps *problems) err() error {
	if len(ps.list) == 0 {
		return nil
	}
	list := ps.list
	if ps.more > 0 {
		list = append(list[:len(list):len(list)], fmt.Errorf("and %d more problems", ps.more))
	}
	if n := len(ps.list) + ps.more; n > 1 {
		return fmt.Errorf("%d problems:\n%w", n, errors.Join(list...))
	}
	return list[0]
}

// excerpt quotes at most 24 characters of line around byte offset off, so
// that an error can show where it is without echoing a long line: in
// backquotes, or, when it holds a control character or a backquote, as a Go
// string with them escaped.
func excerpt(line []byte, off int) string {
	const half = 12
	off = max(0, min(off, len(line)))
	start, end := max(0, off-half), min(len(line), off+half)
	for k := 0; k < utf8.UTFMax-1 && start > 0 && !utf8.RuneStart(line[start]); k++ {
		start--
	}
	for k := 0; k < utf8.UTFMax-1 && end < len(line) && !utf8.RuneStart(line[end]); k++ {
		end++
	}
	s := string(line[start:end])
	if strconv.CanBackquote(s) { // JSON's own quotes shown as they are
		s = "`" + s + "`"
	} else { // control characters escaped
		s = strconv.Quote(s)
	}
	if start > 0 {
		s = "…" + s
	}
	if end < len(line) {
		s += "…"
	}
	return s
}

// column is the 1-based character column of byte offset off in line.
func column(line []byte, off int) int {
	off = max(0, min(off, len(line)))
	return utf8.RuneCount(line[:off]) + 1
}

// brief quotes a string from an input file for an error message, cut to 40
// characters.
func brief(s string) string {
	if utf8.RuneCountInString(s) <= 40 {
		return strconv.Quote(s)
	}
	return strconv.Quote(string([]rune(s)[:40])) + "…"
}
