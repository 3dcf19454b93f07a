package plot

import (
	"fmt"
	"slices"

	"github.com/aiperf-go/aiperf/internal/compare"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/store"
	"gonum.org/v1/plot/vg/draw"
)

// Figure is one picture: its data drawn with gonum.
type Figure struct {
	// Name is the file's path under the output directory, without
	// extension: "ttft_vs_throughput", "cells/<label>/cdf".
	Name  string
	Title string
	// Cell is the cell (or run) a per-cell figure belongs to; "" for the
	// views over whole sweeps.
	Cell string
	// Series are the legend's names in colour order (palette[i]).
	Series []string
	// Data is the figure's data: *Scatter, *Bars, *CDF, *Timeline or
	// *Trajectory.
	Data any
	// Theme is the look Encode draws it in (zero: Light).
	Theme    Theme
	draw     func(dc draw.Canvas) error
	headline bool
}

// Figures builds every figure of the data: the scatter views and bars over
// the sweeps (or groups), then per cell (at most CellLimit per sweep) the
// CDFs (the sweeps overlaid) and a timeline of each sweep's first complete
// trial; per compared group its runs' timelines. Notes say what was left
// out.
func (d *Data) Figures() (figs []Figure, notes []string) {
	var tables []table
	if len(d.Sweeps) > 0 {
		names := d.SweepNames()
		for i, rep := range d.Reports() {
			tables = append(tables, sweepTable(names[i], rep))
		}
	} else {
		tables = append(tables, groupsTable(compare.Groups(d.Groups, Options(d.Confidence))))
	}
	for _, sc := range scatters(tables) {
		f := sc.Figure()
		f.headline = len(d.Sweeps) > 0
		figs = append(figs, f)
	}
	bs := bars(tables)
	for _, b := range bs {
		figs = append(figs, b.Figure())
	}
	if len(bs) == 0 && len(tables) > 0 && len(tables[0].labels) > CellLimit {
		notes = append(notes, fmt.Sprintf("no bar charts: they are drawn for at most %d cells (the sweep tables have every value)", CellLimit))
	}
	if len(d.Sweeps) > 0 {
		cellFigs, cellNotes := d.cellFigures()
		return append(figs, cellFigs...), append(notes, cellNotes...)
	}
	return append(figs, d.groupFigures()...), notes
}

// cellFigures are the per-cell CDFs and timelines, cells matched across
// sweeps by label.
func (d *Data) cellFigures() (figs []Figure, notes []string) {
	names := d.SweepNames()
	var labels, short []string
	for i, s := range d.Sweeps {
		for j, c := range s.Cells {
			if j >= CellLimit {
				notes = append(notes, fmt.Sprintf("sweep %s: %d of its %d cells have per-cell figures (CDFs, timelines); "+
					"`aiperf plot %s/<cell label>` draws any other", names[i], CellLimit, len(s.Cells), s.Sweep.Name))
				break
			}
			if !slices.Contains(labels, c.Label) {
				labels = append(labels, c.Label)
				short = append(short, ShortLabel(c.Label, c.Params))
			}
		}
	}
	for k, label := range labels {
		var (
			setNames []string
			sets     [][]*result.Run
		)
		for i, s := range d.Sweeps {
			j := slices.IndexFunc(s.Cells, func(c store.Cell) bool { return c.Label == label })
			if j < 0 || j >= CellLimit {
				continue
			}
			runs := d.completeRuns(s.Cells[j].Runs)
			if len(runs) == 0 {
				continue
			}
			setNames, sets = append(setNames, names[i]), append(sets, runs)
			tl := TimelineOf(fmt.Sprintf("cells/%s/timeline_%s", label, fileSafe(names[i])),
				fmt.Sprintf("%s, %s: trial %d over time", names[i], short[k], runs[0].Info.Trial), runs[0])
			figs = append(figs, tl.Figure(label))
		}
		if c := cdfOf("cells/"+label+"/cdf", short[k]+": TTFT and ITL per request", setNames, sets); c != nil {
			figs = append(figs, c.Figure(label))
		}
	}
	return figs, notes
}

// groupFigures are the compared groups' CDFs overlaid and each run's
// timeline.
func (d *Data) groupFigures() []Figure {
	var (
		figs  []Figure
		names []string
		sets  [][]*result.Run
	)
	for _, g := range d.Groups {
		runs := d.completeRuns(g.Runs)
		names, sets = append(names, g.Ref), append(sets, runs)
		for _, row := range g.Runs {
			r := d.Runs[row.ID]
			label := fmt.Sprintf("run %d", row.ID)
			tl := TimelineOf(fmt.Sprintf("runs/%d/timeline", row.ID), fmt.Sprintf("%s (%s) over time", label, g.Ref), r)
			f := tl.Figure(label)
			f.headline = true
			figs = append(figs, f)
		}
	}
	if c := cdfOf("cdf", "TTFT and ITL per request", names, sets); c != nil {
		f := c.Figure("")
		f.headline = true
		figs = append([]Figure{f}, figs...)
	}
	return figs
}

// fileSafe makes a sweep name (which may hold '#') a file name part.
func fileSafe(s string) string {
	out := []rune(s)
	for i, r := range out {
		if r == '/' || r == '#' || r == ' ' || r == '\\' {
			out[i] = '_'
		}
	}
	return string(out)
}

// Headline tells the figures `--auto-plot` draws, as AIPerf's default
// plots: over sweeps the Pareto and interactivity views, for runs their
// CDFs and timelines.
func Headline(f Figure) bool { return f.headline }
