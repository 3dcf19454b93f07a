package swimlane

import (
	"fmt"
	"image/color"
	"io"
	"strconv"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/aiperf-go/aiperf/internal/plot"
)

// The figure's size in pixels (at plot.DPI): Width wide; the swim panel
// rowPx per row, within its bounds; the concurrency panel concPx.
const (
	Width     = 1800
	concPx    = 250
	minRowPx  = 6
	maxRowPx  = 20
	swimMinPx = 160
	swimMaxPx = 1400
)

// px is n pixels as a length.
func px(n float64) vg.Length { return vg.Length(n) * vg.Inch / plot.DPI }

// Size is the figure's width and height in pixels.
func (v *View) Size() (int, int) {
	h := v.header() + v.swimPx() + 48 + concPx + 44 + 40
	return Width, int(h)
}

// header is the pixels above the panels: the title, the note (when the
// lanes are capped) and the legend.
func (v *View) header() float64 {
	h := 12 + 28 + 30.0
	if v.capNote != "" {
		h += 22
	}
	return h
}

// swimPx is the swim panel's data height in pixels.
func (v *View) swimPx() float64 {
	row := min(max(swimMaxPx/float64(max(v.Rows, 1)), minRowPx), maxRowPx)
	return min(max(row*float64(v.Rows), swimMinPx), swimMaxPx)
}

// Write draws the view as PNG or SVG.
func (v *View) Write(out io.Writer, format string) error {
	w, h := v.Size()
	wl, hl := px(float64(w)), px(float64(h))
	var c vg.CanvasWriterTo
	switch format {
	case "png":
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(wl, hl), vgimg.UseDPI(plot.DPI))}
	case "svg":
		c = vgsvg.New(wl, hl)
	default:
		return fmt.Errorf("unknown image format %q (want png or svg)", format)
	}
	dc := draw.New(c)
	dc.FillPolygon(color.White, []vg.Point{{X: dc.Min.X, Y: dc.Min.Y}, {X: dc.Max.X, Y: dc.Min.Y},
		{X: dc.Max.X, Y: dc.Max.Y}, {X: dc.Min.X, Y: dc.Max.Y}})
	v.draw(dc)
	if _, err := c.WriteTo(out); err != nil {
		return fmt.Errorf("write the swim lane as %s: %w", format, err)
	}
	return nil
}

// draw lays the figure out from the top: title, note, legend, the swim
// panel, the concurrency panel (their data areas aligned), its legend.
func (v *View) draw(dc draw.Canvas) {
	y := dc.Max.Y - px(12)
	title := textStyle(15, colText)
	dc.FillText(title, vg.Point{X: dc.Center().X, Y: y}, plot.Label(v.Title()))
	y -= px(28)
	if v.capNote != "" {
		note := textStyle(10, colNote)
		dc.FillText(note, vg.Point{X: dc.Center().X, Y: y}, plot.Label(v.capNote))
		y -= px(22)
	}
	drawLegend(dc, y-px(4), v.swimLegend())
	y -= px(30)
	swimTop, swimBottom := y, y-px(v.swimPx()+48)
	concTop, concBottom := swimBottom, swimBottom-px(concPx+44)
	margin := px(16)
	swimC := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{Min: vg.Point{X: dc.Min.X + margin, Y: swimBottom},
		Max: vg.Point{X: dc.Max.X - margin, Y: swimTop}}}
	concC := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{Min: vg.Point{X: dc.Min.X + margin, Y: concBottom},
		Max: vg.Point{X: dc.Max.X - margin, Y: concTop}}}
	ps, pc := v.swimPlot(), v.concPlot()
	alignX(ps, &swimC, pc, &concC)
	ps.Draw(swimC)
	pc.Draw(concC)
	drawLegend(dc, concBottom-px(10), v.concLegend())
}

// alignX crops the canvases so that both plots' data areas span the same
// x range (the time axes line up).
func alignX(a *gplot.Plot, ca *draw.Canvas, b *gplot.Plot, cb *draw.Canvas) {
	da, db := a.DataCanvas(*ca), b.DataCanvas(*cb)
	left := max(da.Min.X-ca.Min.X, db.Min.X-cb.Min.X)
	right := max(ca.Max.X-da.Max.X, cb.Max.X-db.Max.X)
	*ca = draw.Crop(*ca, left-(da.Min.X-ca.Min.X), -(right - (ca.Max.X - da.Max.X)), 0, 0)
	*cb = draw.Crop(*cb, left-(db.Min.X-cb.Min.X), -(right - (cb.Max.X - db.Max.X)), 0, 0)
}

// The figure's colours.
var (
	colText    = color.RGBA{0x20, 0x20, 0x20, 0xff}
	colNote    = color.RGBA{0x60, 0x60, 0x60, 0xff}
	colGap     = color.RGBA{0xf0, 0xf0, 0xf0, 0xff} // a slot without a session
	colFailed  = color.RGBA{0xd6, 0x27, 0x28, 0xff}
	colWarmup  = color.RGBA{0xa0, 0xa0, 0xa0, 0xff}
	colReuse   = color.RGBA{0x00, 0x00, 0x00, 0xff}
	colSep     = color.RGBA{0x99, 0x99, 0x99, 0xff}
	colActive  = color.RGBA{0x21, 0x96, 0xf3, 0xff}
	colIdle    = color.RGBA{0x99, 0x99, 0x99, 0xff}
	colSlots   = color.RGBA{0xe5, 0x39, 0x35, 0xff}
	colTarget  = color.RGBA{0x2e, 0x9d, 0x32, 0xff}
	colRamp    = color.RGBA{0xff, 0x98, 0x00, 0xff}
	colBenchEn = color.RGBA{0xd3, 0x2f, 0x2f, 0xff}
)

// laneColors are the lanes' colours, in turn: the house palette (package
// plot's Okabe and Ito) without vermillion and black, which stand for a
// failed request and a new session in a slot here.
var laneColors = func() []color.RGBA {
	var out []color.RGBA
	for _, i := range []int{0, 2, 3, 4, 5} {
		out = append(out, parseHex(plot.Color(i)))
	}
	return out
}()

func parseHex(s string) color.RGBA {
	n, _ := strconv.ParseUint(s[1:], 16, 32)
	return color.RGBA{uint8(n >> 16), uint8(n >> 8), uint8(n), 0xff}
}

// tint mixes c with white: f 0 is c, 1 white.
func tint(c color.RGBA, f float64) color.RGBA {
	mix := func(x uint8) uint8 { return uint8(float64(x) + (255-float64(x))*f + 0.5) }
	return color.RGBA{mix(c.R), mix(c.G), mix(c.B), 0xff}
}

// textStyle is the figure's sans-serif text at size points, centred
// horizontally and hanging from its point.
func textStyle(size float64, c color.Color) draw.TextStyle {
	return draw.TextStyle{Color: c, Font: font.Font{Typeface: "Liberation", Variant: "Sans", Size: vg.Points(size)},
		Handler: gplot.DefaultTextHandler, XAlign: draw.XCenter, YAlign: draw.YTop}
}

// newPlot is a panel with the house look (as package plot's): sans-serif
// text, a light grid.
func newPlot(x, y string) *gplot.Plot {
	p := gplot.New()
	for _, f := range []*font.Font{&p.X.Label.TextStyle.Font, &p.Y.Label.TextStyle.Font, &p.X.Tick.Label.Font,
		&p.Y.Tick.Label.Font, &p.Legend.TextStyle.Font} {
		f.Typeface, f.Variant = "Liberation", "Sans"
	}
	p.X.Label.Text, p.Y.Label.Text = x, y
	p.X.Tick.Marker = plot.PreciseTicks{}
	return p
}

// xMax is the time axis' end, as AIPerf's: a hair past the last end, at
// least a second.
func (v *View) xMax() float64 { return max(v.TMaxS*1.01, 1) }

// grid is the vertical grid lines of the time axis.
func grid() *plotter.Grid {
	g := plotter.NewGrid()
	g.Horizontal.Color = nil
	g.Vertical.Color = color.Gray{0xdd}
	return g
}
