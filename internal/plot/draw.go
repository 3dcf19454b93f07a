package plot

import (
	"cmp"
	"image/color"
	"math"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// points adapts a series' points to gonum's XYer, XErrorer and YErrorer:
// whiskers are the confidence intervals (none for a single trial).
type points []Point

func (p points) Len() int                        { return len(p) }
func (p points) XY(i int) (float64, float64)     { return p[i].X.Mean, p[i].Y.Mean }
func (p points) XError(i int) (float64, float64) { return p[i].X.below(), p[i].X.above() }
func (p points) YError(i int) (float64, float64) { return p[i].Y.below(), p[i].Y.above() }

// maxPointLabels is the most frontier points per series labelled with
// their cell.
const maxPointLabels = 12

// Figure draws the scatter view: per series its whiskers, points and
// frontier line, labelled with the cells when they are few.
func (s *Scatter) Figure() Figure {
	f := Figure{Name: s.Name, Title: s.Title, Data: s}
	for _, sr := range s.Series {
		f.Series = append(f.Series, sr.Name)
	}
	f.draw = func(dc draw.Canvas) error {
		p := newPlot(s.Title, s.X.Label+better(s.X.Better), s.Y.Label+better(s.Y.Better))
		p.Add(plotter.NewGrid())
		for i, sr := range s.Series {
			if len(sr.Points) == 0 {
				continue
			}
			col := palette[i%len(palette)]
			pts := points(sr.Points)
			if err := addWhiskers(p, sr.Points, col); err != nil {
				return err
			}
			sc, err := plotter.NewScatter(pts)
			if err != nil {
				return err
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(3.5), Shape: glyphs[i%len(glyphs)]}
			front, err := plotter.NewLine(points(sr.Frontier))
			if err != nil {
				return err
			}
			front.Color, front.Width = col, vg.Points(1.5)
			p.Add(front, sc)
			p.Legend.Add(sr.Name+" ("+cmp.Or(s.Line, "line: its frontier")+")", sc, front)
			if len(sr.Frontier) <= maxPointLabels {
				if err := addLabels(p, sr.Frontier); err != nil {
					return err
				}
			}
		}
		// The legend sits in a band above the data, away from the best
		// corner (top left, or top right when higher is better on both).
		p.Legend.Left = s.X.Better == s.Y.Better
		legendBand(p, len(s.Series))
		return drawOne(p)(dc)
	}
	return f
}

// addWhiskers draws the confidence intervals of the points that have one
// (a single trial has none), on each axis.
func addWhiskers(p *gplot.Plot, pts []Point, col color.Color) error {
	var withX, withY points
	for _, pt := range pts {
		if pt.X.HasCI() {
			withX = append(withX, pt)
		}
		if pt.Y.HasCI() {
			withY = append(withY, pt)
		}
	}
	if len(withX) > 0 {
		xe, err := plotter.NewXErrorBars(withX)
		if err != nil {
			return err
		}
		xe.Color = col
		p.Add(xe)
	}
	if len(withY) > 0 {
		ye, err := plotter.NewYErrorBars(withY)
		if err != nil {
			return err
		}
		ye.Color = col
		p.Add(ye)
	}
	return nil
}

// legendBand raises the top of the y axis so that a top legend of n
// entries has a band of its own above the data.
func legendBand(p *gplot.Plot, n int) {
	p.Legend.Top = true
	p.Y.Max += (p.Y.Max - p.Y.Min) * (0.06*float64(n) + 0.03)
}

func addLabels(p *gplot.Plot, pts []Point) error {
	l := plotter.XYLabels{XYs: make(plotter.XYs, len(pts)), Labels: make([]string, len(pts))}
	for i, pt := range pts {
		l.XYs[i].X, l.XYs[i].Y, l.Labels[i] = pt.X.Mean, pt.Y.Mean, pt.Label
	}
	labels, err := smallLabels(l, vg.Point{X: vg.Points(5), Y: vg.Points(3)})
	if err != nil {
		return err
	}
	p.Add(labels)
	return nil
}

// smallLabels are annotations in small sans-serif text, offset from their
// points.
func smallLabels(l plotter.XYLabels, offset vg.Point) (*plotter.Labels, error) {
	labels, err := plotter.NewLabels(l)
	if err != nil {
		return nil, err
	}
	for i := range labels.TextStyle {
		labels.TextStyle[i].Font.Size = vg.Points(7)
		labels.TextStyle[i].Font.Typeface, labels.TextStyle[i].Font.Variant = "Liberation", "Sans"
	}
	labels.Offset = offset
	return labels, nil
}

func better(d interface{ String() string }) string {
	switch d.String() {
	case "lower":
		return ", lower is better"
	case "higher":
		return ", higher is better"
	}
	return ""
}

// maxBarLabelRunes cuts long category labels under the bars.
const maxBarLabelRunes = 28

// Figure draws the bars: per category a bar per series with its whisker.
func (b *Bars) Figure() Figure {
	f := Figure{Name: b.Name, Title: b.Title, Data: b}
	for _, s := range b.Series {
		f.Series = append(f.Series, s.Name)
	}
	f.draw = func(dc draw.Canvas) error {
		p := newPlot(b.Title, "", b.Y.Label)
		p.Add(plotter.NewGrid())
		n := float64(len(b.Series))
		slot := 0.8 / n // of one category's width, in data units
		// Bar width in canvas units: the plot area is about 88% of the
		// canvas; a category is 1/len of it.
		p.X.Min, p.X.Max = -0.5, float64(len(b.Categories))-0.5
		width := (dc.Max.X - dc.Min.X) * 0.88 / vg.Length(len(b.Categories)) * vg.Length(slot) * 0.95
		for j, s := range b.Series {
			col := palette[j%len(palette)]
			vals := make(plotter.Values, len(s.Values))
			var whiskers barWhiskers
			for i, v := range s.Values {
				if math.IsNaN(v.Mean) {
					continue
				}
				vals[i] = v.Mean
				whiskers = append(whiskers, barWhisker{x: float64(i) - 0.4 + slot*(float64(j)+0.5), v: v})
			}
			bc, err := plotter.NewBarChart(vals, width)
			if err != nil {
				return err
			}
			bc.XMin = -0.4 + slot*(float64(j)+0.5)
			bc.Color, bc.LineStyle.Width = col, 0
			p.Add(bc)
			if len(whiskers) > 0 {
				ye, err := plotter.NewYErrorBars(whiskers)
				if err != nil {
					return err
				}
				ye.CapWidth = min(ye.CapWidth, width*0.6)
				p.Add(ye)
			}
			p.Legend.Add(s.Name, bc)
		}
		labels := make([]string, len(b.Categories))
		for i, c := range b.Categories {
			labels[i] = cut(c, maxBarLabelRunes)
		}
		p.NominalX(labels...)
		p.X.Tick.Label.Font.Size = vg.Points(7)
		if len(b.Categories) > 4 {
			p.X.Tick.Label.Rotation = math.Pi / 6
			p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
		}
		p.Y.Min = 0
		legendBand(p, len(b.Series))
		return drawOne(p)(dc)
	}
	return f
}

type barWhisker struct {
	x float64
	v Interval
}

type barWhiskers []barWhisker

func (w barWhiskers) Len() int                        { return len(w) }
func (w barWhiskers) XY(i int) (float64, float64)     { return w[i].x, w[i].v.Mean }
func (w barWhiskers) YError(i int) (float64, float64) { return w[i].v.below(), w[i].v.above() }

func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// Figure draws the CDFs: a panel per metric, a line per set.
func (c *CDF) Figure(cell string) Figure {
	f := Figure{Name: c.Name, Title: c.Title, Cell: cell, Data: c}
	if len(c.Panels) > 0 {
		for _, l := range c.Panels[0].Lines {
			f.Series = append(f.Series, l.Name)
		}
	}
	f.draw = func(dc draw.Canvas) error {
		row := make([]*gplot.Plot, len(c.Panels))
		for k, panel := range c.Panels {
			p := newPlot("", panel.Label, "fraction of requests")
			if k == 0 {
				p.Title.Text = c.Title
				p.Title.TextStyle.Font.Size = vg.Points(11)
			}
			p.Add(plotter.NewGrid())
			p.Y.Min, p.Y.Max = 0, 1
			for i, l := range panel.Lines {
				if len(l.X) == 0 {
					continue
				}
				line, err := plotter.NewLine(cdfSteps(l))
				if err != nil {
					return err
				}
				line.Color, line.Width = palette[i%len(palette)], vg.Points(1.5)
				line.StepStyle = plotter.PostStep
				p.Add(line)
				p.Legend.Add(l.Name, line)
			}
			p.Legend.Left, p.Legend.Top = false, false
			row[k] = p
		}
		return drawGrid([][]*gplot.Plot{row})(dc)
	}
	return f
}

// cdfSteps are the corners of a line's empirical CDF drawn as post-steps:
// it rises from 0 at the smallest value, and from one point to the next
// holds its fraction up to the next value, where it rises. A line of one
// value (a run of one request, or all its requests alike) is a rise from
// 0 to 1 at that value, not a lone point that draws nothing.
func cdfSteps(l CDFLine) plotter.XYs {
	xys := make(plotter.XYs, 0, len(l.X)+1)
	xys = append(xys, plotter.XY{X: l.X[0], Y: 0})
	for j := range l.X {
		xys = append(xys, plotter.XY{X: l.X[j], Y: l.P[j]})
	}
	return xys
}
