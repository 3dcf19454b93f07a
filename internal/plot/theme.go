package plot

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot/vg"
)

// Theme is a figure's look: Light (white background, the default) or
// Dark (AIPerf's --theme dark: a dark background for slides).
type Theme string

// The themes.
const (
	Light Theme = "light"
	Dark  Theme = "dark"
)

// Themes are the --theme values.
var Themes = []Theme{Light, Dark}

// ParseTheme reads a --theme value.
func ParseTheme(s string) (Theme, error) {
	switch Theme(s) {
	case "", Light:
		return Light, nil
	case Dark:
		return Dark, nil
	}
	return "", fmt.Errorf("--theme %q: want light or dark", s)
}

// AIPerf's dark theme: NVIDIA's dark background and light text.
var (
	darkBackground = color.RGBA{0x1a, 0x1a, 0x1a, 0xff}
	darkText       = color.RGBA{0xe0, 0xe0, 0xe0, 0xff}
)

// darkColor maps a colour drawn for the light theme to the dark one:
// neutral and pale colours (text, axes, grid, white background, phase
// shading) have their lightness turned over between the dark background
// and the light text, keeping their hue; the palette's saturated colours
// stay as they are, so series keep their colours in both themes.
func darkColor(c color.Color) color.Color {
	if c == nil { // the canvases draw nil as black
		c = color.Black
	}
	r, g, b, a := c.RGBA()
	if a == 0 {
		return c
	}
	// Un-premultiply to 0..1.
	rf, gf, bf := float64(r)/float64(a), float64(g)/float64(a), float64(b)/float64(a)
	h, s, l := toHSL(rf, gf, bf)
	if s >= 0.2 && l <= 0.85 && l >= 0.12 {
		return c
	}
	lo, hi := lightness(darkBackground), lightness(darkText)
	rf, gf, bf = fromHSL(h, s, lo+(hi-lo)*(1-l))
	af := float64(a) / 0xffff
	return color.NRGBA64{R: uint16(math.Round(rf * 0xffff)), G: uint16(math.Round(gf * 0xffff)),
		B: uint16(math.Round(bf * 0xffff)), A: uint16(math.Round(af * 0xffff))}
}

func lightness(c color.RGBA) float64 {
	_, _, l := toHSL(float64(c.R)/0xff, float64(c.G)/0xff, float64(c.B)/0xff)
	return l
}

// toHSL converts RGB in 0..1 to hue (0..1), saturation and lightness.
func toHSL(r, g, b float64) (h, s, l float64) {
	hi, lo := max(r, g, b), min(r, g, b)
	l = (hi + lo) / 2
	if hi == lo {
		return 0, 0, l
	}
	d := hi - lo
	if l > 0.5 {
		s = d / (2 - hi - lo)
	} else {
		s = d / (hi + lo)
	}
	switch hi {
	case r:
		h = (g - b) / d
		if g < b {
			h += 6
		}
	case g:
		h = (b-r)/d + 2
	default:
		h = (r-g)/d + 4
	}
	return h / 6, s, l
}

func fromHSL(h, s, l float64) (r, g, b float64) {
	if s == 0 {
		return l, l, l
	}
	q := l * (1 + s)
	if l >= 0.5 {
		q = l + s - l*s
	}
	p := 2*l - q
	return hue(p, q, h+1.0/3), hue(p, q, h), hue(p, q, h-1.0/3)
}

func hue(p, q, t float64) float64 {
	switch {
	case t < 0:
		t++
	case t > 1:
		t--
	}
	switch {
	case t < 1.0/6:
		return p + (q-p)*6*t
	case t < 0.5:
		return q
	case t < 2.0/3:
		return p + (q-p)*(2.0/3-t)*6
	}
	return p
}

// darkCanvas draws on a canvas with every colour passed through darkColor:
// one place themes every figure, whatever draws it.
type darkCanvas struct {
	vg.CanvasSizer
}

func (c darkCanvas) SetColor(col color.Color) { c.CanvasSizer.SetColor(darkColor(col)) }

// Themed sets every figure's theme.
func Themed(figs []Figure, t Theme) []Figure {
	for i := range figs {
		figs[i].Theme = t
	}
	return figs
}

// themed is the canvas a figure of theme t draws on.
func themed(c vg.CanvasSizer, t Theme) vg.CanvasSizer {
	if t == Dark {
		return darkCanvas{c}
	}
	return c
}
