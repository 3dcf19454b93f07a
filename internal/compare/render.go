package compare

import (
	"encoding/csv"
	"fmt"
	"io"
	"strings"

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
// style of package report), "markdown", "csv" (the table rows only) or
// "json" (the report itself).
func Render(w io.Writer, r Report, format string) error {
	switch format {
	case FormatJSON:
		if err := report.JSON(w, r); err != nil {
			return fmt.Errorf("render json: %w", err)
		}
		return nil
	case FormatCSV:
		t := r.Table()
		cw := csv.NewWriter(w)
		cw.Write(t.Header)
		cw.WriteAll(t.Rows) // flushes
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
