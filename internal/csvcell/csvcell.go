// Package csvcell makes text that a server or a file wrote safe as a cell
// of a CSV export: a spreadsheet runs a cell that begins with = + - @, a
// tab or a carriage return as a formula (OWASP's CSV injection), so such a
// cell is written with a single quote in front and shown as text.
package csvcell

import "strings"

// Text is s as a CSV cell: prefixed with a single quote when it begins
// with = + - @, a tab or a carriage return. Numbers an export formats itself
// do not pass through it: -0.5 stays a number.
func Text(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
