package swimlane

import (
	"image/color"
	"strconv"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/aiperf-go/aiperf/internal/plot"
)

// The reference lines' styles.
var (
	dashed = []vg.Length{vg.Points(5), vg.Points(3)}
	dotted = []vg.Length{vg.Points(1.5), vg.Points(2)}
)

func rampStyle() draw.LineStyle {
	return draw.LineStyle{Color: colRamp, Width: vg.Points(1.5), Dashes: dashed}
}

func benchStyle() draw.LineStyle {
	return draw.LineStyle{Color: colBenchEn, Width: vg.Points(1.5), Dashes: dashed}
}

// concPlot is the lower panel: the requests in flight (filled), the
// sessions idle between their turns, the slot count, the target
// concurrency and the markers, as AIPerf's.
func (v *View) concPlot() *gplot.Plot {
	p := newPlot("Time (seconds)", "Sessions")
	p.Add(plotter.NewGrid())
	p.Add(&curve{v: v, steps: v.Active, line: draw.LineStyle{Color: colActive, Width: vg.Points(0.8)},
		fill: color.NRGBA{colActive.R, colActive.G, colActive.B, 0x4c}},
		&curve{v: v, steps: v.Idle, line: draw.LineStyle{Color: colIdle, Width: vg.Points(0.8)}})
	slots := len(v.Layout.Slots)
	p.Add(hline{y: float64(slots), style: draw.LineStyle{Color: colSlots, Width: vg.Points(1), Dashes: dotted}})
	if v.Target > 0 {
		p.Add(hline{y: float64(v.Target), style: draw.LineStyle{Color: colTarget, Width: vg.Points(1.2), Dashes: dashed}})
	}
	v.addMarkers(p)
	p.X.Min, p.X.Max = 0, v.xMax()
	p.Y.Tick.Marker = plot.PreciseTicks{}
	p.Y.Min = 0
	p.Y.Max = max(float64(v.PeakActive)*1.15, float64(slots)*1.15, float64(v.Target)*1.15, 1)
	return p
}

// addMarkers adds the ramp-done and benchmark-end lines.
func (v *View) addMarkers(p *gplot.Plot) {
	if v.RampS != nil {
		p.Add(vline{x: *v.RampS, style: rampStyle()})
	}
	if v.BenchEndS != nil {
		p.Add(vline{x: *v.BenchEndS, style: benchStyle()})
	}
}

// curve draws a step function (seconds from T0 on x), filled below when
// fill is set: every step when there are fewer than two a pixel, else per
// pixel column the span of its values, so the drawing keeps every peak
// and dip at a cost of the width, whatever the steps.
type curve struct {
	v     *View
	steps []Step
	line  draw.LineStyle
	fill  color.Color
}

func (cv *curve) Plot(c draw.Canvas, p *gplot.Plot) {
	if len(cv.steps) == 0 {
		return
	}
	trX, trY := p.Transforms(&c)
	cols := int((c.Max.X - c.Min.X) / px(1))
	if len(cv.steps) <= 2*cols {
		pts := make([]vg.Point, 0, 2*len(cv.steps))
		for i, s := range cv.steps {
			x := trX(cv.v.sec(s.T))
			if i > 0 {
				pts = append(pts, vg.Point{X: x, Y: pts[len(pts)-1].Y})
			}
			pts = append(pts, vg.Point{X: x, Y: trY(float64(s.V))})
		}
		cv.draw(&c, trY(0), pts, nil)
		return
	}
	cv.envelope(&c, p, cols)
}

// envelope draws the curve a pixel column at a time.
func (cv *curve) envelope(c *draw.Canvas, p *gplot.Plot, cols int) {
	trX, trY := p.Transforms(c)
	width := (p.X.Max - p.X.Min) / float64(cols)
	var prev int32 // the value entering the column
	i := 0
	top := make([]vg.Point, 0, 2*cols)
	var spans [][2]vg.Length
	for col := range cols {
		x0 := p.X.Min + float64(col)*width
		lo, hi := prev, prev
		for ; i < len(cv.steps) && cv.v.sec(cv.steps[i].T) < x0+width; i++ {
			prev = cv.steps[i].V
			lo, hi = min(lo, prev), max(hi, prev)
		}
		top = append(top, vg.Point{X: trX(x0), Y: trY(float64(hi))}, vg.Point{X: trX(x0 + width), Y: trY(float64(hi))})
		spans = append(spans, [2]vg.Length{trY(float64(lo)), trY(float64(hi))})
	}
	cv.draw(c, trY(0), top, spans)
}

// draw fills below the outline pts (when the curve has a fill) and
// strokes it, or with spans (an envelope) fills each pixel column's span.
func (cv *curve) draw(c *draw.Canvas, base vg.Length, pts []vg.Point, spans [][2]vg.Length) {
	if cv.fill != nil {
		poly := append([]vg.Point{{X: pts[0].X, Y: base}}, pts...)
		poly = append(poly, vg.Point{X: pts[len(pts)-1].X, Y: base})
		c.FillPolygon(cv.fill, poly)
	}
	if spans == nil {
		c.StrokeLines(cv.line, pts)
		return
	}
	var pt painter
	for i, sp := range spans {
		x := pts[2*i].X
		pt.fillRect(c, x, x+px(1), sp[0]-cv.line.Width/2, sp[1]+cv.line.Width/2, cv.line.Color)
	}
}

// hline is a horizontal reference line across the panel.
type hline struct {
	y     float64
	style draw.LineStyle
}

func (h hline) Plot(c draw.Canvas, p *gplot.Plot) {
	_, trY := p.Transforms(&c)
	y := trY(h.y)
	if y >= c.Min.Y && y <= c.Max.Y {
		c.StrokeLine2(h.style, c.Min.X, y, c.Max.X, y)
	}
}

// vline is a vertical marker across the panel.
type vline struct {
	x     float64
	style draw.LineStyle
}

func (l vline) Plot(c draw.Canvas, p *gplot.Plot) {
	trX, _ := p.Transforms(&c)
	x := trX(l.x)
	if x >= c.Min.X && x <= c.Max.X {
		c.StrokeLine2(l.style, x, c.Min.Y, x, c.Max.Y)
	}
}

// legendEntry is a legend's swatch and label: a patch of fill, else a
// line of style.
type legendEntry struct {
	label string
	fill  color.Color
	style draw.LineStyle
}

// swimLegend explains the swim panel, as AIPerf's (plus failed and warmup
// requests, when the run has them).
func (v *View) swimLegend() []legendEntry {
	base := laneColors[0]
	out := []legendEntry{{label: "Request (even turn)", fill: base}, {label: "Request (odd turn)", fill: tint(base, 0.3)}}
	if v.Subagents() > 0 {
		out = append(out, legendEntry{label: "Subagent request", fill: tint(base, 0.45)})
	}
	out = append(out, legendEntry{label: "Inter-turn delay", fill: tint(base, 0.75)})
	failed, warmup := false, false
	for _, q := range v.Run.Requests {
		failed, warmup = failed || q.Failed(), warmup || q.Warmup
	}
	if failed {
		out = append(out, legendEntry{label: "Failed request (× at its end)", fill: colFailed})
	}
	if warmup {
		out = append(out, legendEntry{label: "Warmup request", fill: colWarmup})
	}
	return append(out, legendEntry{label: "New session in slot", style: draw.LineStyle{Color: colReuse, Width: vg.Points(1.5)}})
}

// concLegend explains the concurrency panel.
func (v *View) concLegend() []legendEntry {
	out := []legendEntry{
		{label: "Active requests (peak " + strconv.Itoa(v.PeakActive) + ")", fill: color.NRGBA{colActive.R, colActive.G, colActive.B, 0x80}},
		{label: "Idle sessions (between turns)", style: draw.LineStyle{Color: colIdle, Width: vg.Points(1.2)}},
		{label: "Slot count (" + strconv.Itoa(len(v.Layout.Slots)) + ")", style: draw.LineStyle{Color: colSlots, Width: vg.Points(1.2), Dashes: dotted}},
	}
	if v.Target > 0 {
		out = append(out, legendEntry{label: "Target concurrency (" + strconv.Itoa(v.Target) + ")",
			style: draw.LineStyle{Color: colTarget, Width: vg.Points(1.2), Dashes: dashed}})
	}
	if v.RampS != nil {
		out = append(out, legendEntry{label: "Ramp done (" + secs(v.rampDur) + ")", style: rampStyle()})
	}
	if v.BenchEndS != nil {
		out = append(out, legendEntry{label: "Benchmark end (" + secs(v.benchDur) + ")", style: benchStyle()})
	}
	return out
}

// secs shows a duration in seconds, to four significant digits.
func secs(s float64) string { return strconv.FormatFloat(s, 'g', 4, 64) + "s" }

// drawLegend draws the entries in a centred row hanging from top.
func drawLegend(dc draw.Canvas, top vg.Length, entries []legendEntry) {
	sty := textStyle(10, colText)
	sty.XAlign = draw.XLeft
	sw, gap, pad := px(22), px(6), px(20)
	total := vg.Length(0)
	for i, e := range entries {
		if i > 0 {
			total += pad
		}
		total += sw + gap + sty.Width(e.label)
	}
	x := dc.Center().X - total/2
	h := sty.FontExtents().Height
	mid := top - h/2
	for _, e := range entries {
		if e.fill != nil {
			(&painter{}).fillRect(&dc, x, x+sw, mid-px(5), mid+px(5), e.fill)
		} else {
			dc.StrokeLine2(e.style, x, mid, x+sw, mid)
		}
		dc.FillText(sty, vg.Point{X: x + sw + gap, Y: top}, e.label)
		x += sw + gap + sty.Width(e.label) + pad
	}
}
