// Package numfmt formats numbers for the console tables and the export
// files: fixed decimals for ordinary magnitudes, scientific notation for
// huge ones, so that a server's absurd 1e300 takes nine characters, not
// three hundred, and a table still fits its terminal.
package numfmt

import (
	"math"
	"strconv"
	"strings"
)

// Huge is the magnitude from which a number is written in scientific
// notation: 1e15 has 16 digits before the point, the most a float64
// carries exactly.
const Huge = 1e15

// NA stands in the tables and the CSV exports for a value that is not a
// finite number (NaN, ±Inf), as compare shows a missing one.
const NA = "n/a"

// Fixed is v with prec decimals (1234.50), or, when |v| ≥ Huge, in
// scientific notation with prec decimals of the mantissa (1.00e+300): a
// CSV reader parses both. NaN and ±Inf are written as strconv writes them
// (NaN, +Inf, -Inf); Text writes them as NA.
func Fixed(v float64, prec int) string {
	if math.Abs(v) >= Huge && !math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'e', prec, 64)
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// Whole is v without decimals when it is a whole number below Huge (a
// count: 1234), and whether it is one.
func Whole(v float64) (string, bool) {
	if v != math.Trunc(v) || math.Abs(v) >= Huge {
		return "", false
	}
	return strconv.FormatFloat(v, 'f', 0, 64), true
}

// Text is Fixed for a table or a CSV cell: NA for a value that is not a
// finite number.
func Text(v float64, prec int) string {
	if !finite(v) {
		return NA
	}
	return Fixed(v, prec)
}

// Grouped is Text with the whole part's digits in groups of three
// (1,234.50), as the console tables show values; a huge value is in
// scientific notation, ungrouped.
func Grouped(v float64, prec int) string {
	s := Text(v, prec)
	if s == NA || strings.ContainsRune(s, 'e') {
		return s
	}
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	whole, frac, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if hasFrac {
		return sign + b.String() + "." + frac
	}
	return sign + b.String()
}

// Null is v for a JSON document: nil (null) when it is not a finite
// number, which no JSON number can carry.
func Null(v float64) any {
	if !finite(v) {
		return nil
	}
	return v
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
