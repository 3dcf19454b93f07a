package plot

import (
	"strings"

	"github.com/aiperf-go/aiperf/internal/termsafe"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
)

// Label is s as a figure shows it: every control character and invalid
// UTF-8 byte escaped as termsafe.Text does (ESC as \x1b), and the two
// noncharacters XML 1.0 does not allow either (U+FFFE, U+FFFF) escaped in
// the same style. A model, sweep or cell name from a stored run or a
// profile export written elsewhere may hold any of them; escaped, an SVG
// holding it is well-formed XML and a PNG shows it.
func Label(s string) string { return xmlSafe(termsafe.Text(s)) }

// Markup is Label with newlines and tabs kept, for a page of markup (the
// HTML report) whose text may hold the same characters: markup of ours
// holds none, so escaping the whole page escapes only the text.
func Markup(s string) string { return xmlSafe(termsafe.Lines(s)) }

// xmlSafe escapes U+FFFE and U+FFFF, which termsafe leaves as they are.
func xmlSafe(s string) string {
	if strings.ContainsAny(s, "\ufffe\uffff") {
		s = nonXML.Replace(s)
	}
	return s
}

var nonXML = strings.NewReplacer("\ufffe", `\ufffe`, "\uffff", `\uffff`)

// labelCanvas passes every text drawn on it through Label: the one place
// text reaches the SVG or PNG, whatever drew it (title, axis, tick,
// legend, annotation).
type labelCanvas struct {
	vg.CanvasSizer
}

func (c labelCanvas) FillString(f font.Face, pt vg.Point, s string) {
	c.CanvasSizer.FillString(f, pt, Label(s))
}
