package plot

import (
	"image/color"
	"math"
	"strconv"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/search"
)

// verdictStyles tell the verdicts apart by shape and colour both: pass a
// green circle, fail a vermillion cross, ambiguous an orange triangle; a
// probe of a search without SLA filters is a blue circle.
var verdictStyles = []struct {
	outcome search.Outcome
	style   draw.GlyphStyle
}{
	{"", draw.GlyphStyle{Color: palette[0], Radius: vg.Points(4), Shape: draw.CircleGlyph{}}},
	{search.Pass, draw.GlyphStyle{Color: palette[2], Radius: vg.Points(4), Shape: draw.CircleGlyph{}}},
	{search.Fail, draw.GlyphStyle{Color: palette[1], Radius: vg.Points(4.5), Shape: draw.CrossGlyph{}}},
	{search.Ambiguous, draw.GlyphStyle{Color: palette[3], Radius: vg.Points(4.5), Shape: draw.TriangleGlyph{}}},
}

var (
	bracketShade = color.RGBA{0xdc, 0xef, 0xe6, 0xff}
	trialColor   = color.Gray{0x99}
	pathColor    = color.Gray{0xc0}
	dashes       = []vg.Length{vg.Points(5), vg.Points(3)}
)

// maxProbeLabels is the most probes numbered with their iteration; past it
// a thin line joins them in order instead.
const maxProbeLabels = 40

// Figure draws the trajectory: a panel per statistic, side by side.
func (t *Trajectory) Figure() Figure {
	f := Figure{Name: t.Name, Title: t.Title, Data: t}
	f.draw = func(dc draw.Canvas) error {
		row := make([]*gplot.Plot, len(t.Panels))
		for i, panel := range t.Panels {
			p, err := t.panelPlot(panel)
			if err != nil {
				return err
			}
			if len(t.Panels) > 1 {
				p.Legend.TextStyle.Font.Size = vg.Points(9)
			}
			row[i] = p
		}
		if len(row) == 1 {
			row[0].Title.Text = t.Title
			return drawOne(row[0])(dc)
		}
		// The title spans the panels.
		title := newPlot(t.Title, "", "").Title
		dc.FillText(title.TextStyle, vg.Point{X: dc.Center().X, Y: dc.Max.Y + title.TextStyle.FontExtents().Descent}, t.Title)
		dc = draw.Crop(dc, 0, 0, 0, -(title.TextStyle.Rectangle(t.Title).Size().Y + title.Padding))
		return drawGrid([][]*gplot.Plot{row})(dc)
	}
	return f
}

// panelPlot draws one panel: the bracket shaded, the SLA line, each
// probe's trials, interval and verdict mark, its iteration number (or the
// path), the fit and the best-so-far line.
func (t *Trajectory) panelPlot(panel TrajectoryPanel) (*gplot.Plot, error) {
	p := newPlot("", t.X.Label, panel.Label)
	xlo, xhi := t.xRange(panel)
	ylo, yhi := yRange(panel)
	entries := 1 // the verdicts' marks take one to three entries; count the others
	if panel.SLA != nil {
		entries++
	}
	if t.Bracket != nil {
		entries++
	}
	if panel.Fit != nil || len(panel.BestSoFar) > 0 {
		entries++
	}
	ylo, yhi = legendRoom(ylo, yhi, entries+2, panel.Log)
	if t.X.Log {
		p.X.Scale, p.X.Tick.Marker = gplot.LogScale{}, logTicks{}
	}
	if panel.Log {
		p.Y.Scale, p.Y.Tick.Marker = gplot.LogScale{}, logTicks{}
	}
	if err := t.addBracket(p, ylo, yhi); err != nil {
		return nil, err
	}
	p.Add(plotter.NewGrid())
	if s := panel.SLA; s != nil {
		line, err := plotter.NewLine(plotter.XYs{{X: xlo, Y: s.Threshold}, {X: xhi, Y: s.Threshold}})
		if err != nil {
			return nil, err
		}
		line.Color, line.Width, line.Dashes = color.Black, vg.Points(1.2), dashes
		p.Add(line)
		p.Legend.Add(strings.TrimSpace("SLA: "+opSymbol(s.Op)+" "+fmtNum(s.Threshold)+" "+metrics.UnitOf(s.Metric)), line)
	}
	if err := addCurves(p, panel, xlo, xhi, t.X.Log); err != nil {
		return nil, err
	}
	if err := t.addProbes(p, panel); err != nil {
		return nil, err
	}
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = xlo, xhi, ylo, yhi
	p.Legend.Top, p.Legend.Left = true, panel.SLA == nil || panel.SLA.Op == "lt" || panel.SLA.Op == "le"
	return p, nil
}

// addBracket shades the bracket between its ends, or marks the one end
// that exists with a dashed line.
func (t *Trajectory) addBracket(p *gplot.Plot, ylo, yhi float64) error {
	b := t.Bracket
	if b == nil {
		return nil
	}
	if !math.IsNaN(b.Pass) && !math.IsNaN(b.Fail) {
		lo, hi := min(b.Pass, b.Fail), max(b.Pass, b.Fail)
		poly, err := plotter.NewPolygon(plotter.XYs{{X: lo, Y: ylo}, {X: hi, Y: ylo}, {X: hi, Y: yhi}, {X: lo, Y: yhi}})
		if err != nil {
			return err
		}
		poly.Color, poly.LineStyle.Width = bracketShade, 0
		p.Add(poly)
		p.Legend.Add(b.Label, poly)
		return nil
	}
	for _, x := range []float64{b.Pass, b.Fail} {
		if math.IsNaN(x) {
			continue
		}
		line, err := plotter.NewLine(plotter.XYs{{X: x, Y: ylo}, {X: x, Y: yhi}})
		if err != nil {
			return err
		}
		line.Color, line.Width, line.Dashes = palette[0], vg.Points(1), dashes
		p.Add(line)
		p.Legend.Add(b.Label, line)
	}
	return nil
}

// addCurves draws prefill-ttft-curve's fit and the best-so-far line.
func addCurves(p *gplot.Plot, panel TrajectoryPanel, xlo, xhi float64, logX bool) error {
	if fit := panel.Fit; fit != nil {
		const n = 100
		var xys plotter.XYs
		for i := range n + 1 {
			x := xlo + (xhi-xlo)*float64(i)/n
			if logX {
				x = xlo * math.Pow(xhi/xlo, float64(i)/n)
			}
			if y := fit.At(x); finite(y) && (!panel.Log || y > 0) {
				xys = append(xys, plotter.XY{X: x, Y: y})
			}
		}
		if len(xys) > 1 {
			line, err := plotter.NewLine(xys)
			if err != nil {
				return err
			}
			line.Color, line.Width = palette[0], vg.Points(1.5)
			p.Add(line)
			p.Legend.Add("fit: "+fit.Form+", r² "+strconv.FormatFloat(fit.RSquared, 'f', 3, 64), line)
		}
	}
	if len(panel.BestSoFar) > 0 {
		xys := make(plotter.XYs, len(panel.BestSoFar))
		for i, b := range panel.BestSoFar {
			xys[i] = plotter.XY{X: b.X, Y: b.Y}
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			return err
		}
		line.Color, line.Width, line.StepStyle = palette[0], vg.Points(1.5), plotter.PostStep
		p.Add(line)
		name := "best so far"
		if panel.judged() {
			name += " (passed)"
		}
		p.Legend.Add(name, line)
	}
	return nil
}

// addProbes draws each probe's trials as small grey dots, its interval as
// a whisker and its mean as its verdict's mark; then numbers the probes
// with their iteration (on a parameter axis), or joins them in order when
// they are many.
func (t *Trajectory) addProbes(p *gplot.Plot, panel TrajectoryPanel) error {
	var trials plotter.XYs
	for _, m := range panel.Probes {
		for _, v := range m.Trials {
			trials = append(trials, plotter.XY{X: m.X, Y: v})
		}
	}
	if len(trials) > 0 {
		sc, err := plotter.NewScatter(trials)
		if err != nil {
			return err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: trialColor, Radius: vg.Points(1.4), Shape: draw.CircleGlyph{}}
		p.Add(sc)
		p.Legend.Add("trial", sc)
	}
	if t.X.Param != "" && len(panel.Probes) > maxProbeLabels {
		xys := make(plotter.XYs, len(panel.Probes))
		for i, m := range panel.Probes {
			xys[i] = plotter.XY{X: m.X, Y: m.Y.Mean}
		}
		path, err := plotter.NewLine(xys)
		if err != nil {
			return err
		}
		path.Color, path.Width = pathColor, vg.Points(0.6)
		p.Add(path)
	}
	for _, vs := range verdictStyles {
		var pts points
		for _, m := range panel.Probes {
			if m.Verdict == vs.outcome {
				pts = append(pts, Point{X: point(m.X), Y: m.Y})
			}
		}
		if len(pts) == 0 {
			continue
		}
		if err := addWhiskers(p, pts, vs.style.Color); err != nil {
			return err
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		sc.GlyphStyle = vs.style
		p.Add(sc)
		name := string(vs.outcome)
		if name == "" {
			name = "probe"
		}
		p.Legend.Add(name, sc)
	}
	if t.X.Param == "" || len(panel.Probes) > maxProbeLabels {
		return nil
	}
	l := plotter.XYLabels{XYs: make(plotter.XYs, len(panel.Probes)), Labels: make([]string, len(panel.Probes))}
	for i, m := range panel.Probes {
		l.XYs[i], l.Labels[i] = plotter.XY{X: m.X, Y: m.Y.Mean}, strconv.Itoa(m.Iteration)
	}
	labels, err := smallLabels(l, vg.Point{X: vg.Points(6), Y: vg.Points(2)})
	if err != nil {
		return err
	}
	p.Add(labels)
	return nil
}

// xRange is the x range drawn: every probe and the bracket, padded (by a
// factor on a log axis).
func (t *Trajectory) xRange(panel TrajectoryPanel) (float64, float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, m := range panel.Probes {
		lo, hi = min(lo, m.X), max(hi, m.X)
	}
	if b := t.Bracket; b != nil {
		for _, x := range []float64{b.Pass, b.Fail} {
			if !math.IsNaN(x) {
				lo, hi = min(lo, x), max(hi, x)
			}
		}
	}
	return pad(lo, hi, 0.06, t.X.Log)
}

// yRange is the y range of a panel's numbers, padded.
func yRange(panel TrajectoryPanel) (float64, float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range panel.values() {
		lo, hi = min(lo, v), max(hi, v)
	}
	return pad(lo, hi, 0.08, panel.Log)
}

func pad(lo, hi, frac float64, log bool) (float64, float64) {
	if log {
		r := math.Pow(hi/lo, frac)
		if hi == lo {
			r = 1.5
		}
		return lo / r, hi * r
	}
	d := (hi - lo) * frac
	if d == 0 {
		d = math.Max(math.Abs(lo)*0.1, 1)
	}
	return lo - d, hi + d
}

// legendRoom raises the top of a y range so that a top legend of n
// entries has a band of its own above the data.
func legendRoom(lo, hi float64, n int, log bool) (float64, float64) {
	frac := 0.06*float64(n) + 0.03
	if log {
		return lo, hi * math.Pow(hi/lo, frac)
	}
	return lo, hi + (hi-lo)*frac
}

func opSymbol(op string) string {
	switch op {
	case "lt":
		return "<"
	case "le":
		return "≤"
	case "gt":
		return ">"
	}
	return "≥"
}

// logTicks label 1, 2 and 5 times the powers of ten in range (every digit
// when fewer than three of those fall in it), the other digits unlabelled.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []gplot.Tick {
	var ticks []gplot.Tick
	labelled := func(majors []int) int {
		ticks = ticks[:0]
		n := 0
		for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
			for d := 1; d <= 9; d++ {
				v := float64(d) * math.Pow(10, e)
				if v < lo || v > hi {
					continue
				}
				tk := gplot.Tick{Value: v}
				for _, m := range majors {
					if d == m {
						tk.Label = tickLabel(v)
						n++
					}
				}
				ticks = append(ticks, tk)
			}
		}
		return n
	}
	if labelled([]int{1, 2, 5}) < 3 {
		labelled([]int{1, 2, 3, 4, 5, 6, 7, 8, 9})
	}
	return ticks
}

// tickLabel writes a log tick plainly (10000, 0.5), in e notation only
// when very large or small.
func tickLabel(v float64) string {
	if v >= 1e-3 && v < 1e7 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}
