// Package csvcell makes text that a server or a file wrote safe as a cell
// of a CSV export: a spreadsheet runs a cell that begins with = + - @, a
// tab or a carriage return as a formula (OWASP's CSV injection), so such a
// cell is written with a single quote in front and shown as text.
package csvcell

import (
	"strconv"
	"strings"
)

// Text is s as a CSV cell: prefixed with a single quote when it begins
// with = + - @, a tab or a carriage return, unless it is a number or a
// percentage (a label value of -1 stays a number, as AIPerf's export has
// it; a change of +12.5% stays a change) or a lone dash.
func Text(s string) string {
	if s != "" && s != "-" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		if _, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64); err != nil {
			return "'" + s
		}
	}
	return s
}
