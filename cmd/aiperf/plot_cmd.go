package main

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/plot"
	"github.com/aiperf-go/aiperf/store"
)

// PlotCmd is `aiperf plot`: PNG and SVG pictures of stored runs or sweeps.
type PlotCmd struct {
	Refs            []string `arg:"" optional:"" name:"ref" help:"Runs to draw, as for compare: a run id, a --name label (its trials), a sweep with a single cell, or SWEEP/CELL-LABEL. Their CDFs are overlaid; each run gets a timeline."`
	Sweep           []string `name:"sweep" sep:"none" placeholder:"NAME|ID" help:"Sweep to draw (repeatable: the sweeps are overlaid, e.g. before and after). A name means its latest sweep."`
	Only            []string `name:"only" placeholder:"PATTERN" help:"Write only the figures whose name (the file's path under --output, without extension) matches PATTERN, a shell pattern: 'ttft_vs_throughput', 'bars_*', 'cells/*/cdf' (repeatable)."`
	Output          string   `name:"output" short:"o" default:"artifacts/plots" placeholder:"DIR" help:"Directory the figures are written to."`
	Format          []string `name:"format" default:"png,svg" placeholder:"png,svg" help:"Image formats: png, svg or both."`
	Width           int      `name:"width" default:"1024" help:"Figure width in pixels (SVG: at 96 per inch)."`
	Height          int      `name:"height" default:"640" help:"Figure height in pixels."`
	ConfidenceLevel float64  `name:"confidence-level" default:"0.95" help:"Confidence level of the whiskers (intervals of the mean over trials), in (0, 1)."`
	MLflowUpload    bool     `name:"mlflow-upload" help:"Upload the figures to the MLflow run the drawn runs were logged to (--mlflow-tracking-uri): a single run's, or the parent run of a sweep's trials; credentials from $MLFLOW_TRACKING_TOKEN or $MLFLOW_TRACKING_USERNAME/PASSWORD."`
}

// Validate checks the arguments before the store is read.
func (c *PlotCmd) Validate() error {
	if err := c.selection().Validate(); err != nil {
		return err
	}
	for _, f := range c.Format {
		if !slices.Contains(plot.Formats, f) {
			return fmt.Errorf("--format %q: want %s", f, strings.Join(plot.Formats, " or "))
		}
	}
	for _, pat := range c.Only {
		if _, err := path.Match(pat, ""); err != nil {
			return fmt.Errorf("--only %q: %w", pat, err)
		}
	}
	if c.Width < 64 || c.Height < 64 || c.Width > 16384 || c.Height > 16384 {
		return fmt.Errorf("--width and --height must be 64 to 16384 pixels, got %d×%d", c.Width, c.Height)
	}
	return plan.CheckConfidence("confidence_level", c.ConfidenceLevel)
}

func (c *PlotCmd) selection() plot.Selection { return plot.Selection{Sweeps: c.Sweep, Refs: c.Refs} }

// Run loads the selection and writes its figures.
func (c *PlotCmd) Run(ctx context.Context, g *Globals) error {
	db, err := openStoreToRead(g.Store)
	if err != nil {
		return err
	}
	defer db.Close()
	only := func(f plot.Figure) bool {
		return len(c.Only) == 0 || slices.ContainsFunc(c.Only, func(pat string) bool {
			ok, _ := path.Match(pat, f.Name)
			return ok
		})
	}
	d, err := plot.Load(ctx, db, c.selection(), c.ConfidenceLevel)
	if err != nil {
		return refErr(err)
	}
	paths, notes, err := drawPlots(ctx, db, d, c.selection(), only, c.Output, c.Format, c.Width, c.Height)
	if err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintf(g.Stderr, "note: %s\n", n)
	}
	fmt.Fprintf(g.Stdout, "wrote %d figures to %s (%s)\n", len(paths)/len(c.Format), c.Output, strings.Join(c.Format, ", "))
	if c.MLflowUpload {
		return uploadFigures(ctx, g, d, c.Output, paths)
	}
	return nil
}

// writePlots draws the figures of a selection from db that keep accepts
// into dir.
func writePlots(ctx context.Context, db *store.DB, sel plot.Selection, keep func(plot.Figure) bool, dir string,
	formats []string, w, h int, confidence float64) (paths, notes []string, err error) {
	d, err := plot.Load(ctx, db, sel, confidence)
	if err != nil {
		return nil, nil, refErr(err)
	}
	return drawPlots(ctx, db, d, sel, keep, dir, formats, w, h)
}

// drawPlots draws the figures of loaded data, and of the searches in sel,
// that keep accepts into dir.
func drawPlots(ctx context.Context, db *store.DB, d *plot.Data, sel plot.Selection, keep func(plot.Figure) bool, dir string, formats []string,
	w, h int) (paths, notes []string, err error) {
	figs, notes := d.Figures()
	trajectories, err := trajectoryFigures(ctx, db, sel)
	if err != nil {
		return nil, nil, err
	}
	figs = slices.DeleteFunc(append(trajectories, figs...), func(f plot.Figure) bool { return !keep(f) })
	if len(figs) == 0 {
		return nil, notes, fmt.Errorf("nothing to draw: no complete run in %s", strings.Join(append(sel.Sweeps, sel.Refs...), ", "))
	}
	paths, err = plot.Write(dir, figs, formats, w, h)
	return paths, notes, err
}

// autoPlot is --auto-plot: the headline figures of a finished sweep (its
// Pareto and interactivity views) or run (its CDFs and timeline), written
// under dir as PNG, as AIPerf's auto-plot draws its default plots. Failing
// to draw is a warning: the results are already stored and exported.
func autoPlot(ctx context.Context, g *Globals, sel plot.Selection, dir string) {
	db, err := openStoreToRead(g.Store)
	if err == nil {
		defer db.Close()
		var paths []string
		if paths, _, err = writePlots(ctx, db, sel, plot.Headline, dir, []string{"png"}, 1024, 640, 0.95); err == nil {
			fmt.Fprintf(g.Stderr, "auto-plot: wrote %d figures to %s\n", len(paths), dir) // one format: a file each
			return
		}
	}
	fmt.Fprintf(g.Stderr, "warning: auto-plot failed (results are intact; rerun `aiperf plot` by hand): %v\n", err)
}

// sweepPlotDir is where --auto-plot puts a sweep's figures: beside its cells.
func sweepPlotDir(artifactDir, sweep string) string {
	return filepath.Join(artifactDir, sweep, "plots")
}
