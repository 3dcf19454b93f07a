package report

import (
	"io"
	"strings"
	"unicode/utf8"
)

// MaxWidth is the terminal width the console fits its tables and lines
// to, unless the writer was made Wide.
const MaxWidth = 120

// wideWriter marks a writer whose tables keep their full width.
type wideWriter struct{ io.Writer }

// Wide returns w marked so that tables written to it keep full names and
// labels on one line however wide they get (aiperf --wide).
func Wide(w io.Writer) io.Writer { return wideWriter{w} }

// Unwrap is the writer Wide marked (a terminal check looks through it).
func (w wideWriter) Unwrap() io.Writer { return w.Writer }

// isWide reports whether w was made with Wide.
func isWide(w io.Writer) bool {
	_, ok := w.(wideWriter)
	return ok
}

// fitRows returns rows (and the header) with the text of the widest
// wrappable columns broken at spaces onto several lines, until a box table
// of them fits MaxWidth columns or no column can narrow further. Numbers
// never break: a cell without a space keeps its width.
func fitRows(header []string, rows [][]string) ([]string, [][]string) {
	all := append([][]string{header}, rows...)
	widths := make([]int, len(header))
	floor := make([]int, len(header)) // the longest word of each column
	for _, r := range all {
		for i, c := range r {
			if i >= len(widths) {
				break
			}
			for line := range strings.SplitSeq(c, "\n") {
				widths[i] = max(widths[i], utf8.RuneCountInString(line))
				for word := range strings.FieldsSeq(line) {
					floor[i] = max(floor[i], utf8.RuneCountInString(word))
				}
			}
		}
	}
	total := 1
	for _, w := range widths {
		total += w + 3 // "│ " + cell + " "
	}
	for total > MaxWidth {
		col := -1
		for i, w := range widths { // the widest column that can still narrow
			if w > floor[i] && (col < 0 || w > widths[col]) {
				col = i
			}
		}
		if col < 0 {
			break
		}
		target := max(floor[col], widths[col]-(total-MaxWidth))
		for _, r := range all {
			if col < len(r) {
				r[col] = wrapText(r[col], target)
			}
		}
		total -= widths[col] - target
		widths[col] = target
	}
	return all[0], all[1:]
}

// wrapText breaks s at spaces into lines of at most width runes (a word
// longer than width stands alone).
func wrapText(s string, width int) string {
	var out []string
	for para := range strings.SplitSeq(s, "\n") {
		line := ""
		for word := range strings.FieldsSeq(para) {
			switch {
			case line == "":
				line = word
			case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= width:
				line += " " + word
			default:
				out = append(out, line)
				line = word
			}
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// wrapLine breaks a console line longer than MaxWidth at spaces, the
// continuation lines indented two spaces more than the first.
func wrapLine(s string) string {
	if utf8.RuneCountInString(s) <= MaxWidth || strings.Contains(s, "\n") {
		return s
	}
	lead := s[:len(s)-len(strings.TrimLeft(s, " "))]
	var lines []string
	line, empty := lead, true
	for word := range strings.FieldsSeq(s) {
		if !empty && utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) > MaxWidth {
			lines = append(lines, line)
			line, empty = lead+"  ", true
		}
		if !empty {
			line += " "
		}
		line, empty = line+word, false
	}
	return strings.Join(append(lines, line), "\n")
}
