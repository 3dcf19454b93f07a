package plot

import (
	"image/color"
	"math"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// maxLinePoints bounds a line's points: past it every k-th is drawn.
const maxLinePoints = 5000

// thin keeps every k-th point (and the last) of more than limit.
func thin(pts []XY, limit int) plotter.XYs {
	stride := max(1, (len(pts)+limit-1)/limit)
	out := make(plotter.XYs, 0, len(pts)/stride+1)
	for i := 0; i < len(pts); i += stride {
		out = append(out, plotter.XY{X: pts[i].X, Y: pts[i].Y})
	}
	if n := len(pts); n > 0 && (n-1)%stride != 0 {
		out = append(out, plotter.XY{X: pts[n-1].X, Y: pts[n-1].Y})
	}
	return out
}

// translucent is c at a quarter opacity, to fill under a line.
func translucent(c color.RGBA) color.Color { return color.NRGBA{R: c.R, G: c.G, B: c.B, A: 0x40} }

// Figure draws the figure: its points, its lines over them (the first
// line in the palette's second colour), and the lower panel below on the
// same time axis.
func (o *OverTime) Figure() Figure {
	f := Figure{Name: o.Name, Title: o.Title, Data: o}
	for _, l := range o.Lines {
		f.Series = append(f.Series, l.Name)
	}
	f.draw = func(dc draw.Canvas) error {
		x := o.X
		if o.Lower != nil {
			x = ""
		}
		top := newPlot(o.Title, x, o.Y)
		top.Add(plotter.NewGrid())
		if len(o.Points) > 0 {
			sc, err := plotter.NewScatter(thin(o.Points, maxTimelinePoints))
			if err != nil {
				return err
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: palette[0], Radius: vg.Points(1.8), Shape: draw.CircleGlyph{}}
			top.Add(sc)
			top.Legend.Add("a request", sc)
		}
		if err := addLines(top, o.Lines, 1); err != nil {
			return err
		}
		top.Y.Min = min(top.Y.Min, 0)
		legendBand(top, len(o.Lines)+1)
		if o.Lower == nil {
			return drawOne(top)(dc)
		}
		bottom := newPlot("", o.X, o.Lower.Y)
		bottom.Add(plotter.NewGrid())
		if err := addLines(bottom, o.Lower.Lines, 2); err != nil {
			return err
		}
		bottom.Y.Min = min(bottom.Y.Min, 0)
		bottom.Legend.Top = true
		lo, hi := min(top.X.Min, bottom.X.Min), max(top.X.Max, bottom.X.Max)
		top.X.Min, top.X.Max, bottom.X.Min, bottom.X.Max = lo, hi, lo, hi
		return drawGrid([][]*gplot.Plot{{top}, {bottom}})(dc)
	}
	return f
}

// addLines draws lines from palette colour first on.
func addLines(p *gplot.Plot, lines []Line, first int) error {
	for i, l := range lines {
		if len(l.Points) == 0 {
			continue
		}
		col := palette[(first+i)%len(palette)]
		line, err := plotter.NewLine(thin(l.Points, maxLinePoints))
		if err != nil {
			return err
		}
		line.Color, line.Width = col, vg.Points(1.5)
		if l.Step {
			line.StepStyle = plotter.PostStep
		}
		if l.Fill {
			line.FillColor = translucent(col)
		}
		p.Add(line)
		p.Legend.Add(l.Name, line)
	}
	return nil
}

// Figure draws each request's bar: prefill in the palette's first colour,
// generation in its second.
func (r *RequestSpans) Figure() Figure {
	f := Figure{Name: r.Name, Title: r.Title, Data: r, Series: []string{"prefill", "generation"}}
	f.draw = func(dc draw.Canvas) error {
		p := newPlot(r.Title, axisTime, "TTFT (ms)")
		p.Title.TextStyle.Font.Size = vg.Points(11)
		p.Add(plotter.NewGrid())
		bars := spanBars{spans: r.Spans, stride: max(1, len(r.Spans)/maxTimelinePoints)}
		for i, name := range []string{"prefill", "generation"} {
			bars.styles[i] = draw.LineStyle{Color: palette[i], Width: vg.Points(1.6)}
			p.Legend.Add(name, legendLine(bars.styles[i]))
		}
		p.Add(bars)
		p.Y.Min = min(p.Y.Min, 0)
		legendBand(p, 2)
		return drawOne(p)(dc)
	}
	return f
}

// spanBars is a gonum plotter of request bars.
type spanBars struct {
	spans  []RequestSpan
	stride int
	styles [2]draw.LineStyle
}

func (s spanBars) Plot(c draw.Canvas, p *gplot.Plot) {
	trX, trY := p.Transforms(&c)
	for i := 0; i < len(s.spans); i += s.stride {
		sp := s.spans[i]
		y := trY(sp.TTFTMs)
		c.StrokeLine2(s.styles[0], trX(sp.Start), y, trX(sp.FirstToken), y)
		c.StrokeLine2(s.styles[1], trX(sp.FirstToken), y, trX(sp.End), y)
	}
}

func (s spanBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, ymin, xmax, ymax = math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, sp := range s.spans {
		xmin, xmax = min(xmin, sp.Start), max(xmax, sp.End)
		ymin, ymax = min(ymin, sp.TTFTMs), max(ymax, sp.TTFTMs)
	}
	return xmin, xmax, ymin, ymax
}

// legendLine is a legend entry drawn as a line of a style.
type legendLine draw.LineStyle

func (l legendLine) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(draw.LineStyle(l), c.Min.X, y, c.Max.X, y)
}
