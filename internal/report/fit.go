package report

import (
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/aiperf-go/aiperf/internal/termsafe"
)

// MaxWidth is the terminal width the console fits its tables and lines
// to, unless the writer was made Wide.
const MaxWidth = 120

// wideWriter marks a writer whose tables keep their full width.
type wideWriter struct{ io.Writer }

// Wide returns w marked so that tables and lines written to it keep full
// names and labels on one line however wide they get (aiperf --wide).
func Wide(w io.Writer) io.Writer { return wideWriter{w} }

// Unwrap is the writer Wide marked (a terminal check looks through it).
func (w wideWriter) Unwrap() io.Writer { return w.Writer }

// isWide reports whether w was made with Wide, under the CLI's escaping
// writer (and the lock it adds) or not, and under writers that say what
// they wrap (Unwrap() io.Writer).
func isWide(w io.Writer) bool {
	for w = termsafe.Raw(w); ; {
		if _, ok := w.(wideWriter); ok {
			return true
		}
		u, ok := w.(interface{ Unwrap() io.Writer })
		if !ok {
			return false
		}
		w = termsafe.Raw(u.Unwrap())
	}
}

// Fit is s as a line of w: broken at spaces to fit MaxWidth columns, the
// continuation lines indented two spaces more than the first, unless w is
// Wide. It is how every console line longer than a terminal is printed.
func Fit(w io.Writer, s string) string {
	if isWide(w) {
		return s
	}
	return wrapLine(s)
}

// breaks is where a cell's text may break, each level allowing the
// breaks of those before it.
type breaks int

const (
	atSpaces breaks = iota
	// inWords: after the separators of labels, paths, addresses and keys
	// (pieces).
	inWords
	// anywhere: also inside a piece with a letter that is still too long (a
	// model directory's 40-character snapshot hash, a name with no
	// separator), cut into lines of the column's width; never a number.
	anywhere
	// marks: also before a best-cell mark "*", which then may take a line
	// of its own below its value (a sweep table of many metric columns
	// whose "± 0.0043 *" cells are wider than their room).
	marks
)

// fitRows returns rows (and the header) with the text of the widest
// breakable columns wrapped onto several lines, until a box table of them
// fits MaxWidth columns or no column can narrow further. Cells break at
// spaces first; only when that is not enough, also inside labels, paths,
// addresses and keys (pieces), and then up to last, anywhere inside a word
// with a letter, then before a best-cell mark; never inside a number nor
// between a '±' and its value.
// pad is the columns a cell takes beyond its text (its border and
// padding); fits reports whether the table now fits.
func fitRows(header []string, rows [][]string, pad int, last breaks) (_ []string, _ [][]string, fits bool) {
	all := append([][]string{header}, rows...)
	orig := make([][]string, len(all))
	for i, r := range all {
		orig[i] = slices.Clone(r)
	}
	for level := atSpaces; level <= last; level++ {
		for i, r := range orig { // each pass wraps the cells as given, afresh
			copy(all[i], r)
		}
		if fits = narrow(orig, all, len(header), level, pad); fits {
			break
		}
	}
	return all[0], all[1:], fits
}

// narrow wraps the widest columns of orig into all until the table fits,
// each time from the cell as given (so that no earlier, wider break stays),
// breaking where level allows. It reports whether the table fits.
func narrow(orig, all [][]string, cols int, level breaks, pad int) bool {
	widths := make([]int, cols)
	// floor is the longest piece of each column, cut is its narrowest once
	// words are cut (anywhere): the columns narrow to their pieces first,
	// and words are cut only where that is not enough.
	floor, cut := make([]int, cols), make([]int, cols)
	for _, r := range all {
		for i, c := range r {
			if i >= cols {
				break
			}
			for line := range strings.SplitSeq(c, "\n") {
				widths[i] = max(widths[i], utf8.RuneCountInString(line))
				for _, word := range words(line, level) {
					for _, p := range pieces(word, level) {
						floor[i] = max(floor[i], utf8.RuneCountInString(p))
						cut[i] = max(cut[i], pieceFloor(p, level))
					}
				}
			}
		}
	}
	total := 1
	for _, w := range widths {
		total += w + pad // "│ " + cell + " "
	}
	for total > MaxWidth {
		col := -1
		for i, w := range widths { // the widest column that can still narrow
			if w > floor[i] && (col < 0 || w > widths[col]) {
				col = i
			}
		}
		if col < 0 && !slices.Equal(floor, cut) {
			floor = cut
			continue
		}
		if col < 0 {
			return false
		}
		// Shave it down to the next widest first, so that the columns
		// narrow together rather than one to its bones.
		next := 0
		for i, w := range widths {
			if i != col && w > floor[i] && w < widths[col] {
				next = max(next, w)
			}
		}
		target := max(floor[col], widths[col]-(total-MaxWidth), next)
		if target >= widths[col] {
			target = widths[col] - 1
		}
		got := 0
		for i, r := range all {
			if col < len(r) {
				r[col] = wrapText(orig[i][col], target, level)
				for line := range strings.SplitSeq(r[col], "\n") {
					got = max(got, utf8.RuneCountInString(line))
				}
			}
		}
		total -= widths[col] - got
		widths[col] = got
		if got > target { // cannot narrow more than its pieces allow
			floor[col] = got
		}
	}
	return true
}

// words splits a line at spaces, keeping "±" with the value after it and,
// below level marks, a lone "*" (a best-cell mark) with the word before it.
func words(line string, level breaks) []string {
	fields := strings.Fields(line)
	var out []string
	for i := 0; i < len(fields); i++ {
		switch {
		case fields[i] == "±" && i+1 < len(fields):
			out = append(out, "± "+fields[i+1])
			i++
		case fields[i] == "*" && len(out) > 0 && level < marks:
			out[len(out)-1] += " *"
		default:
			out = append(out, fields[i])
		}
	}
	return out
}

// pieces splits a word after each '/', '|', '_' and ':', and after a '.'
// or '-' between letters: the places a label, path, address or key may wrap
// (from level inWords; else the word is one piece).
func pieces(word string, level breaks) []string {
	if level < inWords || strings.Contains(word, " ") {
		return []string{word}
	}
	var out []string
	start := 0
	rs := []rune(word)
	for i, r := range rs {
		brk := r == '/' || r == '|' || r == '_' || r == ':'
		if (r == '.' || r == '-') && i > 0 && i+1 < len(rs) && unicode.IsLetter(rs[i-1]) && unicode.IsLetter(rs[i+1]) {
			brk = true
		}
		if brk && i+1 < len(rs) {
			out = append(out, string(rs[start:i+1]))
			start = i + 1
		}
	}
	return append(out, string(rs[start:]))
}

// minCut is the narrowest a piece cut anywhere is left (pieceFloor).
const minCut = 8

// cuttable reports whether a piece may be cut anywhere: it has a letter,
// is no number (1e300, 12.5%, 1,024) and holds no space ('± 0.2').
func cuttable(p string) bool {
	if strings.Contains(p, " ") || !strings.ContainsFunc(p, unicode.IsLetter) {
		return false
	}
	_, err := strconv.ParseFloat(strings.NewReplacer(",", "", "%", "").Replace(p), 64)
	return err != nil
}

// pieceFloor is the narrowest column that holds p at level.
func pieceFloor(p string, level breaks) int {
	n := utf8.RuneCountInString(p)
	if level >= anywhere && cuttable(p) {
		return min(n, minCut)
	}
	return n
}

// cutPiece is p in lines of width runes when level allows cutting it
// anywhere and it is longer, else p.
func cutPiece(p string, width int, level breaks) []string {
	rs := []rune(p)
	if level < anywhere || len(rs) <= width || width < 1 || !cuttable(p) {
		return []string{p}
	}
	var out []string
	for len(rs) > width {
		out, rs = append(out, string(rs[:width])), rs[width:]
	}
	return append(out, string(rs))
}

// wrapText breaks s into lines of at most width runes where pieces allow
// (a piece longer than width stands alone, unless level cuts it).
func wrapText(s string, width int, level breaks) string {
	var out []string
	for para := range strings.SplitSeq(s, "\n") {
		line, n := "", 0
		for _, word := range words(para, level) {
			var ps []string
			for _, p := range pieces(word, level) {
				ps = append(ps, cutPiece(p, width, level)...)
			}
			for j, p := range ps {
				sep := ""
				if j == 0 && n > 0 {
					sep = " "
				}
				pn := utf8.RuneCountInString(p)
				if n > 0 && n+len(sep)+pn > width {
					out = append(out, line)
					line, n, sep = "", 0, ""
				}
				line += sep + p
				n += len(sep) + pn
			}
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// wrapLine breaks a line longer than MaxWidth at spaces, the continuation
// lines indented two spaces more than the first.
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
