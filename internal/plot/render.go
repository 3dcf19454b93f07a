package plot

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"io"
	"strconv"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Formats are the encodings Figure.Encode writes.
var Formats = []string{"png", "svg"}

// DPI is the resolution of PNGs: a figure of W×H pixels is W/DPI inches
// wide.
const DPI = 96

// Encode draws the figure at w×h pixels in its Theme and writes it as PNG
// or SVG. The SVG has no external reference: text is <text> in the
// Liberation fonts' family names, with the viewer's fallback; every text
// shows as Label does, so the SVG is well-formed XML whatever the names.
func (f Figure) Encode(out io.Writer, format string, w, h int) error {
	return f.EncodeContext(context.Background(), out, format, w, h)
}

// EncodeContext is Encode that stops drawing once ctx is done (a Ctrl-C
// in a figure of many long series): what is left is skipped, nothing is
// written and the error wraps ctx's cause.
func (f Figure) EncodeContext(ctx context.Context, out io.Writer, format string, w, h int) error {
	if w < 64 || h < 64 || w > 16384 || h > 16384 {
		return fmt.Errorf("figure size %d×%d pixels: each side must be 64 to 16384", w, h)
	}
	wl, hl := vg.Length(w)*vg.Inch/DPI, vg.Length(h)*vg.Inch/DPI
	var c vg.CanvasWriterTo
	switch format {
	case "png":
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(wl, hl), vgimg.UseDPI(DPI))}
	case "svg":
		c = vgsvg.New(wl, hl)
	default:
		return fmt.Errorf("unknown figure format %q (want png or svg)", format)
	}
	dc := draw.New(themed(labelCanvas{cutCanvas{c, ctx}}, f.Theme))
	dc.FillPolygon(color.White, []vg.Point{{X: dc.Min.X, Y: dc.Min.Y}, {X: dc.Max.X, Y: dc.Min.Y},
		{X: dc.Max.X, Y: dc.Max.Y}, {X: dc.Min.X, Y: dc.Max.Y}})
	if err := f.draw(dc); err != nil {
		return fmt.Errorf("draw %s: %w", f.Name, err)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("draw %s: %w", f.Name, context.Cause(ctx))
	}
	if _, err := c.WriteTo(out); err != nil {
		return fmt.Errorf("write %s as %s: %w", f.Name, format, err)
	}
	return nil
}

// cutCanvas draws nothing once ctx is done: the rest of a figure cut by
// an interrupt costs no rasterizing (the drawing code cannot be stopped,
// its strokes and fills can).
type cutCanvas struct {
	vg.CanvasSizer
	ctx context.Context
}

func (c cutCanvas) Stroke(p vg.Path) {
	if c.ctx.Err() == nil {
		c.CanvasSizer.Stroke(p)
	}
}

func (c cutCanvas) Fill(p vg.Path) {
	if c.ctx.Err() == nil {
		c.CanvasSizer.Fill(p)
	}
}

func (c cutCanvas) FillString(f font.Face, pt vg.Point, s string) {
	if c.ctx.Err() == nil {
		c.CanvasSizer.FillString(f, pt, s)
	}
}

func (c cutCanvas) DrawImage(r vg.Rectangle, img image.Image) {
	if c.ctx.Err() == nil {
		c.CanvasSizer.DrawImage(r, img)
	}
}

// palette is Okabe and Ito's colour-blind-safe set (yellow left out: it
// does not show on white). Series i has colour palette[i % len].
var palette = []color.RGBA{
	{0x00, 0x72, 0xB2, 0xff}, // blue
	{0xD5, 0x5E, 0x00, 0xff}, // vermillion
	{0x00, 0x9E, 0x73, 0xff}, // bluish green
	{0xE6, 0x9F, 0x00, 0xff}, // orange
	{0xCC, 0x79, 0xA7, 0xff}, // reddish purple
	{0x56, 0xB4, 0xE9, 0xff}, // sky blue
	{0x00, 0x00, 0x00, 0xff}, // black
}

// Color is series i's colour, as "#rrggbb".
func Color(i int) string {
	c := palette[i%len(palette)]
	return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B)
}

var glyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{}, draw.RingGlyph{},
	draw.PyramidGlyph{}, draw.BoxGlyph{}, draw.CrossGlyph{}}

// newPlot is a plot with the shared look: sans-serif text, a light grid.
func newPlot(title, x, y string) *gplot.Plot {
	p := gplot.New()
	sans := font.Font{Typeface: "Liberation", Variant: "Sans"}
	for _, t := range []*font.Font{&p.Title.TextStyle.Font, &p.X.Label.TextStyle.Font, &p.Y.Label.TextStyle.Font,
		&p.X.Tick.Label.Font, &p.Y.Tick.Label.Font, &p.Legend.TextStyle.Font} {
		t.Typeface, t.Variant = sans.Typeface, sans.Variant
	}
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, x, y
	p.X.Tick.Marker, p.Y.Tick.Marker = PreciseTicks{}, PreciseTicks{}
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.Legend.Top = true
	return p
}

// drawOne draws a single plot over the whole canvas.
func drawOne(p *gplot.Plot) func(dc draw.Canvas) error {
	return func(dc draw.Canvas) error {
		p.Draw(dc)
		return nil
	}
}

// drawGrid draws plots in a grid of rows, sharing the canvas.
func drawGrid(rows [][]*gplot.Plot) func(dc draw.Canvas) error {
	return func(dc draw.Canvas) error {
		t := draw.Tiles{Rows: len(rows), Cols: len(rows[0]), PadX: vg.Points(8), PadY: vg.Points(8),
			PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8)}
		canvases := gplot.Align(rows, t, dc)
		for i, row := range rows {
			for j, p := range row {
				if p != nil {
					p.Draw(canvases[i][j])
				}
			}
		}
		return nil
	}
}

// PreciseTicks are gonum's default ticks labelled with four significant
// digits, so that close values (ITLs of 1.98 and 2.02 ms) read apart.
type PreciseTicks struct{}

// Ticks are gonum's default ticks between lo and hi, relabelled.
func (PreciseTicks) Ticks(lo, hi float64) []gplot.Tick {
	ticks := gplot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'g', 4, 64)
		}
	}
	return ticks
}
