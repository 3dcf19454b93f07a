package compare

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/aiperf-go/aiperf/internal/csvcell"
	"github.com/aiperf-go/aiperf/internal/report"
	"github.com/aiperf-go/aiperf/internal/termsafe"
)

// Formats Render accepts.
const (
	FormatTable    = "table"
	FormatMarkdown = "markdown"
	FormatCSV      = "csv"
	FormatJSON     = "json"
)

// Table is a report laid out for text output.
type Table struct {
	Title  string
	Header []string
	Rows   [][]string
	// Align has one letter per column: 'l' left-aligns text, anything else
	// right-aligns values.
	Align string
	Notes []string // printed under the table (not in CSV)
	// Group blanks the first Group cells of a row in the table and markdown
	// formats when they repeat the row above (CSV keeps every cell).
	Group int
}

// Report is anything Render can show: it lays itself out as a Table, and
// marshals itself as the JSON format.
type Report interface {
	Table() Table
}

// Render writes r in the given format: "table" (a box table, the console
// style of package report), "markdown", "csv" (the table rows only, a
// "mean ± half width" column as two columns of numbers) or "json" (the
// report itself).
func Render(w io.Writer, r Report, format string) error {
	switch format {
	case FormatJSON:
		if err := report.JSON(w, r); err != nil {
			return fmt.Errorf("render json: %w", err)
		}
		return nil
	case FormatCSV:
		header, rows := r.Table().csv()
		cw := csvcell.NewWriter(w)
		cw.Write(header)
		cw.WriteAll(rows) // flushes
		if err := cw.Error(); err != nil {
			return fmt.Errorf("render csv: %w", err)
		}
		return nil
	case FormatTable, "":
		t := r.Table()
		fmt.Fprintln(w, report.Fit(w, t.Title))
		report.Table(w, t.Header, t.groupedRows(), t.Align)
		if len(t.Notes) > 0 {
			fmt.Fprintln(w)
		}
		for _, n := range t.Notes {
			fmt.Fprintln(w, report.Fit(w, n))
		}
		return nil
	case FormatMarkdown:
		writeMarkdown(w, r.Table())
		return nil
	}
	return fmt.Errorf("unknown format %q (want table, markdown, csv or json)", format)
}

// csv is t's header and rows for CSV: a column holding "mean ± half width"
// cells is written as two, the mean under its header and the half width
// under "HEADER ±" (empty where a cell has none), and a cell marked best
// ("20.07 ± 0.63 *") loses its mark to a last column, "best", naming the
// marked cells' columns, so that a spreadsheet reads numbers.
func (t Table) csv() ([]string, [][]string) {
	header, rows, best := t.Header, make([][]string, len(t.Rows)), make([]string, len(t.Rows))
	for i, row := range t.Rows {
		rows[i] = slices.Clone(row)
		var marked []string
		for j, c := range row {
			if v, ok := strings.CutSuffix(c, " *"); ok && j < len(header) && number(v) {
				rows[i][j], marked = v, append(marked, header[j])
			}
		}
		best[i] = strings.Join(marked, ";")
	}
	header, rows = splitPlusMinus(header, rows)
	if slices.ContainsFunc(best, func(b string) bool { return b != "" }) {
		header = append(slices.Clone(header), "best")
		for i := range rows {
			rows[i] = append(rows[i], best[i])
		}
	}
	return header, rows
}

// splitPlusMinus writes each column holding "mean ± half width" cells as
// two (csv).
func splitPlusMinus(header []string, rows [][]string) ([]string, [][]string) {
	split := make([]bool, len(header))
	for _, row := range rows {
		for j, c := range row {
			if _, _, ok := plusMinus(c); ok && j < len(split) {
				split[j] = true
			}
		}
	}
	if !slices.Contains(split, true) {
		return header, rows
	}
	widen := func(cells []string, second func(string) (string, string)) []string {
		out := make([]string, 0, len(cells)+len(split))
		for j, c := range cells {
			if j < len(split) && split[j] {
				a, b := second(c)
				out = append(out, a, b)
				continue
			}
			out = append(out, c)
		}
		return out
	}
	wide := make([][]string, len(rows))
	for i, row := range rows {
		wide[i] = widen(row, func(c string) (string, string) {
			if m, hw, ok := plusMinus(c); ok {
				return m, hw
			}
			return c, ""
		})
	}
	return widen(header, func(h string) (string, string) { return h, h + " ±" }), wide
}

// number reports whether c is a number or "mean ± half width".
func number(c string) bool {
	_, err := strconv.ParseFloat(c, 64)
	_, _, ok := plusMinus(c)
	return err == nil || ok
}

// plusMinus splits "20.07 ± 0.63" into its two numbers.
func plusMinus(c string) (mean, halfWidth string, ok bool) {
	mean, halfWidth, ok = strings.Cut(c, " ± ")
	if !ok {
		return "", "", false
	}
	_, e1 := strconv.ParseFloat(mean, 64)
	_, e2 := strconv.ParseFloat(halfWidth, 64)
	return mean, halfWidth, e1 == nil && e2 == nil
}

// groupedRows blanks the leading Group cells that repeat the row above.
func (t Table) groupedRows() [][]string {
	out := make([][]string, len(t.Rows))
	for i, row := range t.Rows {
		out[i] = append([]string(nil), row...)
		for j := 0; i > 0 && j < t.Group && j < len(row) && row[j] == t.Rows[i-1][j]; j++ {
			out[i][j] = ""
		}
	}
	return out
}

func writeMarkdown(w io.Writer, t Table) {
	fmt.Fprintf(w, "### %s\n\n", t.Title)
	line := func(cells []string) {
		esc := make([]string, len(cells))
		for i, c := range cells {
			esc[i] = strings.ReplaceAll(termsafe.Text(c), "|", `\|`)
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(esc, " | "))
	}
	line(t.Header)
	sep := make([]string, len(t.Header))
	for i := range sep {
		sep[i] = "---:"
		if i < len(t.Align) && t.Align[i] == 'l' {
			sep[i] = ":---"
		}
	}
	line(sep)
	for _, row := range t.groupedRows() {
		line(row)
	}
	if len(t.Notes) > 0 {
		fmt.Fprintln(w)
	}
	for _, n := range t.Notes {
		fmt.Fprintf(w, "- %s\n", n)
	}
}
