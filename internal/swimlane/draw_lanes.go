package swimlane

import (
	"image/color"
	"slices"
	"strconv"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// barHeight is a request bar's height, in rows (AIPerf's 0.7).
const barHeight = 0.7

// swimPlot is the upper panel: a row per slot (more for overlapping
// requests), slot 0 at the top.
func (v *View) swimPlot() *gplot.Plot {
	p := newPlot("", "Session slot")
	p.Add(grid(), &lanes{v: v})
	v.addMarkers(p)
	p.X.Min, p.X.Max = 0, v.xMax()
	p.Y.Min, p.Y.Max = -0.5, float64(v.Rows)-0.5
	p.Y.Tick.Marker = slotTicks{v: v}
	return p
}

// y is row's position on the panel's y axis (row 0 at the top).
func (v *View) y(row float64) float64 { return float64(v.Rows-1) - row }

// slotTicks label the drawn slots at their centres (every one up to 30
// slots, then every 2nd, 5th, 10th).
type slotTicks struct{ v *View }

func (t slotTicks) Ticks(_, _ float64) []gplot.Tick {
	n := t.v.Slots
	stride := 1
	switch {
	case n > 150:
		stride = 10
	case n > 60:
		stride = 5
	case n > 30:
		stride = 2
	}
	var out []gplot.Tick
	for s := 0; s < n; s += stride {
		sl := t.v.Layout.Slots[s]
		rows := min(sl.Rows, t.v.Rows-sl.Offset)
		out = append(out, gplot.Tick{Value: t.v.y(float64(sl.Offset) + float64(rows-1)/2), Label: strconv.Itoa(s)})
	}
	return out
}

// lanes draws the slots: the time a slot holds no session in light grey,
// each session's gaps between requests in its lane's pale colour, its
// requests as bars (failed ones red, marked at their end), a black line
// where a slot takes its next session, and lines between the slots when a
// slot has more than one row.
type lanes struct{ v *View }

func (l *lanes) Plot(c draw.Canvas, p *gplot.Plot) {
	v := l.v
	trX, trY := p.Transforms(&c)
	var pt painter
	rect := func(x0, x1 float64, rowLo, rowHi float64, col color.Color) {
		pt.fillRect(&c, trX(x0), trX(x1), trY(v.y(rowLo)), trY(v.y(rowHi)), col)
	}
	pxS := (p.X.Max - p.X.Min) / float64((c.Max.X-c.Min.X)/px(1))
	multi := false
	for s := range v.Slots {
		sl := v.Layout.Slots[s]
		rows := min(sl.Rows, v.Rows-sl.Offset)
		multi = multi || rows > 1
		lo, hi := float64(sl.Offset)-barHeight/2, float64(sl.Offset+rows-1)+barHeight/2
		at := 0.0
		for _, ln := range sl.Lanes {
			lane := v.Layout.Lanes[ln]
			if first := v.sec(lane.First); first > at {
				rect(at, first, lo, hi, colGap)
			}
			at = max(at, v.sec(lane.Last))
			v.drawIdle(rect, int(ln), sl.Offset, pxS)
		}
		if at < v.xMax() {
			rect(at, v.xMax(), lo, hi, colGap)
		}
	}
	v.drawBars(&c, &pt, trX, trY)
	for s := range v.Slots {
		sl := v.Layout.Slots[s]
		rows := min(sl.Rows, v.Rows-sl.Offset)
		for _, ln := range sl.Lanes[1:] {
			x := trX(v.sec(v.Layout.Lanes[ln].First))
			c.StrokeLine2(draw.LineStyle{Color: colReuse, Width: vg.Points(1.5)}, x,
				trY(v.y(float64(sl.Offset)-barHeight/2)), x, trY(v.y(float64(sl.Offset+rows-1)+barHeight/2)))
		}
		if multi && s > 0 {
			y := trY(v.y(float64(sl.Offset) - 0.5))
			c.StrokeLine2(draw.LineStyle{Color: colSep, Width: vg.Points(0.4)}, c.Min.X, y, c.Max.X, y)
		}
	}
}

// drawIdle draws the gaps between a lane's sessions' requests (the union
// of their spans), over each session's own rows; those narrower than a
// pixel (pxS seconds) are left to the bars around them.
func (v *View) drawIdle(rect func(x0, x1, lo, hi float64, col color.Color), ln, offset int, pxS float64) {
	lane := v.Layout.Lanes[ln]
	base := laneColors[ln%len(laneColors)]
	for _, m := range lane.Members {
		col := tint(base, 0.75)
		if v.Run.Sessions[m.Session].Sub {
			col = tint(base, 0.85)
		}
		lo := float64(offset+m.Row0) - barHeight/2
		hi := float64(offset+m.Row0+m.Rows-1) + barHeight/2
		reqs := v.Run.SessionRequests(int(m.Session))
		spans := make([][2]int64, len(reqs))
		for i, q := range reqs {
			spans[i] = [2]int64{v.Run.Requests[q].Start, v.Run.Requests[q].End}
		}
		slices.SortFunc(spans, func(a, b [2]int64) int { return cmpInt64(a[0], b[0]) })
		end := spans[0][1]
		for _, sp := range spans[1:] {
			if float64(sp[0]-end)/1e9 >= pxS { // narrower, the bars cover it
				rect(v.sec(end), v.sec(sp[0]), lo, hi, col)
			}
			end = max(end, sp[1])
		}
	}
}

// item is a request bar of a row.
type item struct {
	start, end int64
	col        color.RGBA
	failed     bool
}

// rowItems are the drawn rows' request bars, each row by start.
func (v *View) rowItems() [][]item {
	rows := make([][]item, v.Rows)
	for s := range v.Slots {
		sl := v.Layout.Slots[s]
		for _, ln := range sl.Lanes {
			for _, m := range v.Layout.Lanes[ln].Members {
				sub := v.Run.Sessions[m.Session].Sub
				for k, q := range v.Run.SessionRequests(int(m.Session)) {
					row := sl.Offset + m.Row0 + int(m.Depths[k])
					if row >= v.Rows {
						continue
					}
					r := v.Run.Requests[q]
					rows[row] = append(rows[row], item{start: r.Start, end: r.End, col: barColor(int(ln), sub, r), failed: r.Failed()})
				}
			}
		}
	}
	for _, r := range rows {
		slices.SortStableFunc(r, func(a, b item) int { return cmpInt64(a.start, b.start) })
	}
	return rows
}

// barColor is a request's colour: red when it failed, grey in the warmup,
// else its lane's colour, paler for a subagent's and for odd turns.
func barColor(lane int, sub bool, r Request) color.RGBA {
	switch {
	case r.Failed():
		return colFailed
	case r.Warmup:
		return colWarmup
	}
	f := 0.0
	if sub {
		f = 0.45
	}
	if r.Turn%2 == 1 {
		f += 0.3
	}
	return tint(laneColors[lane%len(laneColors)], f)
}

// drawBars paints each row's bars, at least a pixel wide; what falls
// within a pixel of the bar before it in the same colour joins it, and
// what the bars before it already cover is not painted again, so a row
// costs at most a few rectangles per pixel of width, whatever its
// requests. A failed request is marked with a cross at its end (one per
// few pixels).
func (v *View) drawBars(c *draw.Canvas, pt *painter, trX, trY func(float64) vg.Length) {
	onePx := px(1)
	for row, items := range v.rowItems() {
		y0, y1 := trY(v.y(float64(row)+barHeight/2)), trY(v.y(float64(row)-barHeight/2))
		var cur item
		var x0, x1 vg.Length
		open := false
		flush := func() {
			if open {
				pt.fillRect(c, x0, x1, y0, y1, cur.col)
			}
		}
		var marks []vg.Length
		for _, it := range items {
			a, b := trX(v.sec(it.start)), trX(v.sec(it.end))
			b = max(b, a+onePx)
			if it.failed && (len(marks) == 0 || b-marks[len(marks)-1] > 3*onePx) {
				marks = append(marks, b)
			}
			switch {
			case open && it.col == cur.col && a-x1 < onePx:
				x1 = max(x1, b)
				continue
			case open && b-x1 < onePx/2:
				continue // under the bar before it
			}
			flush()
			cur, x0, x1, open = it, max(a, x1), b, true
		}
		flush()
		mark := draw.GlyphStyle{Color: color.RGBA{0x60, 0x00, 0x00, 0xff}, Radius: px(3), Shape: draw.CrossGlyph{}}
		for _, x := range marks {
			c.DrawGlyph(mark, vg.Point{X: x, Y: (y0 + y1) / 2})
		}
	}
}

// painter fills rectangles, reusing its path.
type painter struct{ path vg.Path }

// fillRect fills the rectangle between x0, x1 and y0, y1, clipped to the
// canvas.
func (pt *painter) fillRect(c *draw.Canvas, x0, x1, y0, y1 vg.Length, col color.Color) {
	x0, x1 = max(x0, c.Min.X), min(x1, c.Max.X)
	y0, y1 = max(min(y0, y1), c.Min.Y), min(max(y0, y1), c.Max.Y)
	if x1 <= x0 || y1 <= y0 {
		return
	}
	p := &pt.path
	*p = (*p)[:0]
	p.Move(vg.Point{X: x0, Y: y0})
	p.Line(vg.Point{X: x1, Y: y0})
	p.Line(vg.Point{X: x1, Y: y1})
	p.Line(vg.Point{X: x0, Y: y1})
	p.Close()
	c.SetColor(col)
	c.Fill(*p)
}
