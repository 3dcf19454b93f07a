package plot

import (
	"image/color"
	"math"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// maxTimelinePoints bounds the requests drawn on a timeline: past it every
// k-th is drawn (the in-flight line still counts them all).
const maxTimelinePoints = 5000

var (
	warmupShade    = color.RGBA{0xe8, 0xe8, 0xe8, 0xff}
	profilingShade = color.RGBA{0xea, 0xf3, 0xfb, 0xff}
	failedColor    = color.RGBA{0xc0, 0x00, 0x00, 0xff}
)

// Figure draws the timeline: requests' TTFT and latency over time above,
// the in-flight count below, phases shaded and hook calls marked on both.
func (t *Timeline) Figure(cell string) Figure {
	f := Figure{Name: t.Name, Title: t.Title, Cell: cell, Data: t, Series: []string{"TTFT", "latency"}}
	f.draw = func(dc draw.Canvas) error {
		top := newPlot(t.Title, "", "ms")
		bottom := newPlot("", "time since the run's start (s)", "in flight")
		var ttft, lat, failed plotter.XYs
		stride := max(1, len(t.Requests)/maxTimelinePoints)
		yMax, nMax := 1.0, 1.0
		for i, q := range t.Requests {
			yMax = max(yMax, q.LatencyMs, nanZero(q.TTFTMs))
			if i%stride != 0 {
				continue
			}
			switch {
			case q.Failed:
				failed = append(failed, plotter.XY{X: q.T, Y: q.LatencyMs})
			default:
				lat = append(lat, plotter.XY{X: q.T, Y: q.LatencyMs})
				if !math.IsNaN(q.TTFTMs) {
					ttft = append(ttft, plotter.XY{X: q.T, Y: q.TTFTMs})
				}
			}
		}
		for _, s := range t.InFlight {
			nMax = max(nMax, float64(s.N))
		}
		yMax, nMax = yMax*1.2, nMax*1.15
		xMin, xMax := t.span()
		for _, pl := range []struct {
			p   *gplot.Plot
			top float64
		}{{top, yMax}, {bottom, nMax}} {
			pl.p.X.Min, pl.p.X.Max, pl.p.Y.Min, pl.p.Y.Max = xMin, xMax, 0, pl.top
			if err := shadePhases(pl.p, t.Phases, pl.top); err != nil {
				return err
			}
			pl.p.Add(plotter.NewGrid())
			if err := markEvents(pl.p, t.Events, pl.top, pl.p == top); err != nil {
				return err
			}
		}
		for i, set := range []struct {
			name string
			xys  plotter.XYs
			col  color.Color
		}{{"TTFT", ttft, palette[0]}, {"latency", lat, palette[1]}, {"failed", failed, failedColor}} {
			if len(set.xys) == 0 {
				continue
			}
			sc, err := plotter.NewScatter(set.xys)
			if err != nil {
				return err
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: set.col, Radius: vg.Points(1.6), Shape: glyphs[i%len(glyphs)]}
			top.Add(sc)
			top.Legend.Add(set.name, sc)
		}
		if len(t.InFlight) > 0 {
			xys := make(plotter.XYs, len(t.InFlight))
			for i, s := range t.InFlight {
				xys[i] = plotter.XY{X: s.T, Y: float64(s.N)}
			}
			line, err := plotter.NewLine(xys)
			if err != nil {
				return err
			}
			line.StepStyle, line.Color, line.Width = plotter.PostStep, palette[2], vg.Points(1.2)
			bottom.Add(line)
		}
		top.Legend.Top, top.Legend.Left = true, false
		return drawGrid([][]*gplot.Plot{{top}, {bottom}})(dc)
	}
	return f
}

func nanZero(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return v
}

// span is the time range drawn: every request and hook call.
func (t *Timeline) span() (float64, float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range t.Phases {
		lo, hi = min(lo, p.From), max(hi, p.To)
	}
	for _, e := range t.Events {
		lo, hi = min(lo, e.T), max(hi, e.T)
	}
	if math.IsInf(lo, 0) {
		return 0, 1
	}
	pad := max((hi-lo)*0.02, 0.001)
	return lo - pad, hi + pad
}

// shadePhases fills each phase's span: grey for warmup, light blue for
// profiling.
func shadePhases(p *gplot.Plot, phases []Span, top float64) error {
	for _, ph := range phases {
		poly, err := plotter.NewPolygon(plotter.XYs{{X: ph.From, Y: 0}, {X: ph.To, Y: 0}, {X: ph.To, Y: top}, {X: ph.From, Y: top}})
		if err != nil {
			return err
		}
		poly.Color, poly.LineStyle.Width = profilingShade, 0
		if ph.Kind == "warmup" {
			poly.Color = warmupShade
		}
		p.Add(poly)
	}
	return nil
}

// markEvents draws each hook call as a dashed vertical line, named on the
// upper panel.
func markEvents(p *gplot.Plot, events []Event, top float64, named bool) error {
	var labels plotter.XYLabels
	for _, e := range events {
		line, err := plotter.NewLine(plotter.XYs{{X: e.T, Y: 0}, {X: e.T, Y: top}})
		if err != nil {
			return err
		}
		line.Color, line.Dashes, line.Width = color.Gray{0x40}, []vg.Length{vg.Points(3), vg.Points(2)}, vg.Points(1)
		if !e.OK {
			line.Color = failedColor
		}
		p.Add(line)
		name := strings.ReplaceAll(strings.TrimSuffix(e.Hook, "_kv_cache"), "_", " ")
		if !e.OK {
			name += " (failed)"
		}
		labels.XYs = append(labels.XYs, plotter.XY{X: e.T, Y: top * (0.97 - 0.07*float64(len(labels.XYs)%3))})
		labels.Labels = append(labels.Labels, name)
	}
	if !named || len(labels.XYs) == 0 {
		return nil
	}
	l, err := smallLabels(labels, vg.Point{X: vg.Points(2)})
	if err != nil {
		return err
	}
	p.Add(l)
	return nil
}
