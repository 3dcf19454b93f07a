package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/plot"
	"github.com/aiperf-go/aiperf/internal/plotserver"
	"github.com/aiperf-go/aiperf/store"
)

// PlotCmd is `aiperf plot`: PNG and SVG pictures of runs, read from their
// artifact directories (as AIPerf's plot) or from the store.
type PlotCmd struct {
	Refs            []string `arg:"" optional:"" name:"path" help:"What to draw. Artifact directories, as AIPerf's plot takes them: a run's (its figures over time), or one holding runs such as a sweep's, or several (their runs compared); default ./artifacts. Or stored runs, as for compare: a run id, a --name label (its trials), a sweep with a single cell, or SWEEP/CELL-LABEL (their CDFs overlaid, a timeline each). An argument naming a directory is read as one."`
	Paths           []string `name:"paths" sep:"none" placeholder:"DIR" help:"An artifact directory, as the arguments (AIPerf's --paths; repeatable)."`
	Sweep           []string `name:"sweep" sep:"none" placeholder:"NAME|ID" help:"Stored sweep to draw (repeatable: the sweeps are overlaid, e.g. before and after). A name means its latest sweep."`
	Only            []string `name:"only" placeholder:"PATTERN" help:"Write only the figures whose name (the file's path under --output, without extension) matches PATTERN, a shell pattern: 'ttft_vs_throughput', 'bars_*', 'cells/*/cdf' (repeatable)."`
	Output          string   `name:"output" short:"o" placeholder:"DIR" help:"Directory the figures are written to (default: <first path>/plots for artifact directories, as AIPerf; artifacts/plots for stored runs)."`
	Format          []string `name:"format" default:"png,svg" placeholder:"png,svg" help:"Image formats: png, svg or both."`
	Config          string   `name:"config" placeholder:"FILE" help:"AIPerf's plot config YAML for artifact directories: visualization.single_run_defaults and multi_run_defaults choose AIPerf's figures, multi_run_plots defines comparisons (pareto, scatter_line). Default: ~/.aiperf/plot_config.yaml when it exists, as AIPerf (never created here)."`
	Theme           string   `name:"theme" enum:"light,dark" default:"light" help:"light (a white background) or dark (for slides), as AIPerf's --theme; every figure."`
	Width           int      `name:"width" default:"1024" help:"Figure width in pixels (SVG: at 96 per inch)."`
	Height          int      `name:"height" default:"640" help:"Figure height in pixels."`
	ConfidenceLevel float64  `name:"confidence-level" default:"0.95" help:"Confidence level of the whiskers (intervals of the mean over trials), in (0, 1)."`
	MLflowUpload    bool     `name:"mlflow-upload" negatable:"" help:"Upload the PNG figures to an existing MLflow run, as AIPerf's: an artifact directory's run is the one its mlflow_export.json names (or the parent run its runs share), a stored run's the one the store recorded (a sweep's parent run); credentials from the tracking URI or $MLFLOW_TRACKING_TOKEN or $MLFLOW_TRACKING_USERNAME/PASSWORD. Not with --dashboard."`
	MLflowURI       string   `name:"mlflow-tracking-uri" placeholder:"URL" help:"With --mlflow-upload: the tracking server (default: the one the run was logged to, else $MLFLOW_TRACKING_URI)."`
	MLflowRunID     string   `name:"mlflow-run-id" placeholder:"ID" help:"With --mlflow-upload: the MLflow run that receives the figures (default: the one the run was logged to)."`
	Verbose         bool     `name:"verbose" negatable:"" help:"Say which figures are drawn."`
	Dashboard       bool     `name:"dashboard" negatable:"" help:"Serve the figures on a local web page instead of writing them (AIPerf's dashboard mode; reload the page to read the runs again; Ctrl-C stops it)."`
	EmptyPaths      bool     `name:"empty-paths" help:"AIPerf's: no paths given, so ./artifacts is read (as with no argument)."`
	Host            string   `name:"host" default:"127.0.0.1" help:"Address the dashboard listens on (only with --dashboard)."`
	Port            int      `name:"port" default:"8050" help:"Port the dashboard listens on (only with --dashboard; 0 picks a free one)."`
}

// Validate checks the arguments before anything is read.
func (c *PlotCmd) Validate() error {
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
	for _, a := range c.Refs {
		if err := pathArg(a); err != nil {
			return err
		}
	}
	if err := c.validateMLflow(); err != nil {
		return err
	}
	if c.EmptyPaths && len(c.Refs)+len(c.Paths) > 0 {
		return fmt.Errorf("--empty-paths says there are no paths (./artifacts is read), but %s was given: drop one",
			slices.Concat(c.Paths, c.Refs)[0])
	}
	if c.Width < 64 || c.Height < 64 || c.Width > 16384 || c.Height > 16384 {
		return fmt.Errorf("--width and --height must be 64 to 16384 pixels, got %d×%d", c.Width, c.Height)
	}
	return plan.CheckConfidence("confidence_level", c.ConfidenceLevel)
}

// pathArg refuses an argument written as a path (see looksLikePath) that
// names no directory, rather than reading it as a stored-run reference:
// naming it, and the nearest directories beside it.
func pathArg(a string) error {
	if !looksLikePath(a) {
		return nil
	}
	st, err := os.Stat(a)
	switch {
	case err == nil && st.IsDir():
		return nil
	case err == nil:
		return fmt.Errorf("%s is a file, not an artifact directory: give the directory holding the run (%s)", a, filepath.Dir(a))
	}
	var dirs []string
	if entries, err := os.ReadDir(filepath.Dir(a)); err == nil {
		for _, e := range entries {
			if e.IsDir() {
				dirs = append(dirs, e.Name())
			}
		}
	}
	return fmt.Errorf("artifact directory %s does not exist%s: give an existing directory, or a stored run (a run id, a --name label or SWEEP/CELL-LABEL: see aiperf runs list)",
		a, plan.Suggest(filepath.Base(a), dirs))
}

// looksLikePath reports whether a is written as a path: it starts with
// '.', '/' or '~', or it has a separator after an existing directory
// (artifacts/run1). SWEEP/CELL-LABEL, whose SWEEP is no directory, is not.
func looksLikePath(a string) bool {
	if strings.HasPrefix(a, ".") || strings.HasPrefix(a, "~") || filepath.IsAbs(a) || strings.HasPrefix(a, "/") {
		return true
	}
	if !strings.ContainsRune(a, '/') && !strings.ContainsRune(a, filepath.Separator) {
		return false
	}
	st, err := os.Stat(filepath.Dir(a))
	return err == nil && st.IsDir()
}

// notADirectory adds to err, when no store could be read, that the
// first reference written with a separator (artifacts/run1, from another
// directory) is no directory either: it was read as a stored run.
func notADirectory(refs []string, err error) error {
	for _, r := range refs {
		if err == nil {
			break
		}
		if strings.ContainsAny(r, "/"+string(filepath.Separator)) {
			return fmt.Errorf("%s is no directory here, so it was read as a stored run: %w", r, err)
		}
	}
	return err
}

// split sorts the arguments: those naming a directory are artifact paths,
// the others stored-run references.
func (c *PlotCmd) split() (dirs, refs []string) {
	dirs = slices.Clone(c.Paths)
	for _, a := range c.Refs {
		if st, err := os.Stat(a); err == nil && st.IsDir() {
			dirs = append(dirs, a)
		} else {
			refs = append(refs, a)
		}
	}
	return dirs, refs
}

// keep is the --only filter.
func (c *PlotCmd) keep(f plot.Figure) bool {
	return len(c.Only) == 0 || slices.ContainsFunc(c.Only, func(pat string) bool {
		ok, _ := path.Match(pat, f.Name)
		return ok
	})
}

// Run reads the runs, from their directories or the store, and writes
// their figures (or, with --dashboard, serves them).
func (c *PlotCmd) Run(ctx context.Context, g *Globals) error {
	theme, err := plot.ParseTheme(c.Theme)
	if err != nil {
		return usageErr(err)
	}
	src, out, err := c.source(ctx, g)
	if err != nil {
		return err
	}
	if c.Dashboard {
		return c.serve(ctx, g, src, theme)
	}
	c.noteMLflowFlags(g.Stderr)
	what := "--output"
	if c.Output == "" {
		what = "the default --output"
	}
	if err := checkOutputDir(out, what); err != nil {
		return usageErr(err) // before the runs are read
	}
	target, err := c.dirTarget() // refused before drawing: nothing is written
	if err != nil {
		return err
	}
	figs, notes, err := src()
	if err != nil {
		return interruptedWhile(ctx, "reading the runs to draw (nothing was written)", err)
	}
	paths, err := plot.Write(ctx, out, plot.Themed(figs, theme), c.Format, c.Width, c.Height)
	if err != nil {
		return interruptedWhile(ctx, fmt.Sprintf("drawing the figures (%d of %d files written to %s, each whole)",
			len(paths), len(figs)*len(c.Format), out), err)
	}
	for _, n := range notes {
		fmt.Fprintf(g.Stderr, "note: %s\n", n)
	}
	if c.Verbose {
		for _, f := range figs {
			fmt.Fprintf(g.Stderr, "drew %s\n", f.Name)
		}
	}
	fmt.Fprintf(g.Stdout, "wrote %d figures to %s (%s)\n", len(paths)/len(c.Format), out, strings.Join(c.Format, ", "))
	if !c.MLflowUpload {
		return nil
	}
	if target == nil { // stored runs: the MLflow run the store recorded
		if target, err = c.storedTarget(ctx, g); err != nil {
			return err
		}
	}
	return sendFigures(ctx, g, *target, out, paths)
}

// source checks what to draw and returns how to read its figures (those
// --only keeps) and where they go by default: artifact directories (the
// arguments naming one, else ./artifacts, as AIPerf) or stored runs.
func (c *PlotCmd) source(ctx context.Context, g *Globals) (plotserver.Source, string, error) {
	dirs, refs := c.split()
	stored := len(refs) > 0 || len(c.Sweep) > 0
	switch {
	case len(dirs) > 0 && stored:
		return nil, "", usageErr(fmt.Errorf("give artifact directories or stored runs (run ids, names, --sweep), not both: %s is a directory", dirs[0]))
	case stored && c.Config != "":
		return nil, "", usageErr(errors.New("--config chooses AIPerf's figures of artifact directories; stored runs are drawn without it"))
	case stored:
		sel := plot.Selection{Sweeps: c.Sweep, Refs: refs}
		if err := sel.Validate(); err != nil {
			return nil, "", usageErr(err)
		}
		src := func() ([]plot.Figure, []string, error) {
			db, err := openStoreToRead(ctx, g.Store)
			if err != nil {
				return nil, nil, notADirectory(refs, err)
			}
			defer db.Close()
			figs, notes, err := storedFigures(ctx, db, sel, c.keep, c.ConfidenceLevel)
			return figs, notes, notADirectory(refs, err)
		}
		return src, cmp.Or(c.Output, filepath.Join("artifacts", "plots")), nil
	}
	dirs = orDefaultDirs(dirs)
	cfg, notes, err := plotConfig(c.Config)
	if err != nil {
		return nil, "", usageErr(err)
	}
	src := func() ([]plot.Figure, []string, error) {
		figs, more, err := dirFigures(dirs, cfg, c.keep)
		return figs, append(slices.Clone(notes), more...), err
	}
	return src, cmp.Or(c.Output, filepath.Join(dirs[0], "plots")), nil
}

// orDefaultDirs is dirs, else AIPerf's default ./artifacts.
func orDefaultDirs(dirs []string) []string {
	if len(dirs) == 0 {
		return []string{"artifacts"}
	}
	return dirs
}

// serve is --dashboard: the figures on a local web page until Ctrl-C.
func (c *PlotCmd) serve(ctx context.Context, g *Globals, src plotserver.Source, theme plot.Theme) error {
	if _, _, err := src(); err != nil { // refused before listening, as a write would be
		return err
	}
	s := plotserver.New(src, theme, c.Width, c.Height)
	return s.Serve(ctx, net.JoinHostPort(c.Host, strconv.Itoa(c.Port)), func(url string) {
		fmt.Fprintf(g.Stderr, "dashboard: %s (Ctrl-C stops it)\n", url)
	})
}

// plotConfig reads AIPerf's plot config: file, else AIPerf's own
// ~/.aiperf/plot_config.yaml when there is one (unreadable, it is set
// aside with a note), else the default.
func plotConfig(file string) (*plot.Config, []string, error) {
	if file != "" {
		cfg, err := plot.ReadConfig(file)
		return cfg, nil, err
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return plot.DefaultConfig(), nil, nil
	}
	own := filepath.Join(home, ".aiperf", "plot_config.yaml")
	if _, err := os.Stat(own); err != nil {
		return plot.DefaultConfig(), nil, nil
	}
	cfg, err := plot.ReadConfig(own)
	if err != nil {
		return plot.DefaultConfig(), []string{fmt.Sprintf("%s set aside (drawing every figure): %v", own, err)}, nil
	}
	return cfg, []string{"using AIPerf's plot config " + own}, nil
}

// dirFigures reads the runs under the artifact directories and builds the
// figures keep accepts: AIPerf's set (as cfg chooses) and ours.
func dirFigures(dirs []string, cfg *plot.Config, keep func(plot.Figure) bool) ([]plot.Figure, []string, error) {
	d, err := plot.LoadDirs(dirs)
	if err != nil {
		return nil, nil, usageErr(err)
	}
	figs, notes := d.FiguresFor(cfg)
	notes = append(d.Notes, notes...)
	figs = slices.DeleteFunc(figs, func(f plot.Figure) bool { return !keep(f) })
	if len(figs) == 0 {
		return nil, notes, fmt.Errorf("nothing to draw in %s: no figure has data (or matches --only)", strings.Join(dirs, ", "))
	}
	return figs, notes, nil
}

// storedFigures are the figures of a selection from db that keep accepts.
func storedFigures(ctx context.Context, db *store.DB, sel plot.Selection, keep func(plot.Figure) bool,
	confidence float64) ([]plot.Figure, []string, error) {
	d, err := plot.Load(ctx, db, sel, confidence)
	if err != nil {
		return nil, nil, refErr(cellHintIn(ctx, db, sel.Refs, err))
	}
	figs, notes := d.Figures()
	trajectories, err := trajectoryFigures(ctx, db, sel)
	if err != nil {
		return nil, nil, err
	}
	figs = slices.DeleteFunc(append(trajectories, figs...), func(f plot.Figure) bool { return !keep(f) })
	if len(figs) == 0 {
		return nil, notes, fmt.Errorf("nothing to draw: no complete run in %s", strings.Join(append(sel.Sweeps, sel.Refs...), ", "))
	}
	return figs, notes, nil
}

// writePlots draws the figures of a selection from db that keep accepts
// into dir.
func writePlots(ctx context.Context, db *store.DB, sel plot.Selection, keep func(plot.Figure) bool, dir string,
	formats []string, w, h int, confidence float64) (paths, notes []string, err error) {
	figs, notes, err := storedFigures(ctx, db, sel, keep, confidence)
	if err != nil {
		return nil, notes, err
	}
	paths, err = plot.Write(ctx, dir, figs, formats, w, h)
	return paths, notes, err
}

// autoPlot is --auto-plot: the headline figures of a finished sweep (its
// Pareto and interactivity views) or run (its CDFs and timeline), written
// under dir as PNG, as AIPerf's auto-plot draws its default plots. Failing
// to draw is a warning (the results are already stored and exported), or
// with required (--plot-required) the error returned.
func autoPlot(ctx context.Context, g *Globals, sel plot.Selection, dir string, required bool) error {
	db, err := openStoreToRead(ctx, g.Store)
	if err == nil {
		defer db.Close()
		var paths []string
		if paths, _, err = writePlots(ctx, db, sel, plot.Headline, dir, []string{"png"}, 1024, 640, 0.95); err == nil {
			fmt.Fprintf(g.Stderr, "auto-plot: wrote %d figures to %s\n", len(paths), dir) // one format: a file each
			return nil
		}
	}
	if required {
		return fmt.Errorf("auto-plot failed (--plot-required; the results are stored and exported: rerun `aiperf plot` by hand): %w", err)
	}
	fmt.Fprintf(g.Stderr, "warning: auto-plot failed (results are intact; rerun `aiperf plot` by hand): %v\n", err)
	return nil
}

// sweepPlotDir is where --auto-plot puts a sweep's figures: beside its cells.
func sweepPlotDir(artifactDir, sweep string) string {
	return filepath.Join(artifactDir, sweep, "plots")
}
