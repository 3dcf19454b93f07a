package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aiperf-go/aiperf/internal/outputfile"
	"github.com/aiperf-go/aiperf/internal/swimlane"
)

// SwimLaneCmd is `aiperf analyze swim-lane`, AIPerf's per-session swim
// lane of a finished run with its concurrency curve underneath: a PNG per
// run directory, and with --html an interactive viewer beside it.
type SwimLaneCmd struct {
	Dirs        []string `arg:"" optional:"" name:"run-dir" placeholder:"DIR" help:"One or more AIPerf run directories: the artifact directories of runs, each holding profile_export.jsonl."`
	RunDirs     []string `name:"run-dirs" sep:"none" placeholder:"DIR" help:"A run directory, as the arguments (AIPerf's --run-dirs; repeatable)."`
	Empty       bool     `name:"empty-run-dirs" help:"AIPerf's empty list of run directories: refused, there is nothing to draw."`
	Out         string   `name:"out" short:"o" placeholder:"FILE" help:"Output PNG path (ending .svg: SVG). Only valid when a single run directory is given (default: <run dir>/swim_lane.png, as AIPerf)."`
	Concurrency *int     `name:"concurrency" short:"c" placeholder:"N" help:"Target concurrency to draw as a reference line in the concurrency panel."`
	Ramp        *float64 `name:"ramp" placeholder:"SECONDS" help:"Ramp duration in seconds for the ramp-done marker; overrides the value read from profile_export_aiperf.json (useful when only the jsonl was exported)."`
	HTML        bool     `name:"html" negatable:"" help:"Also write an interactive HTML trace viewer (swim_lane.html, or the --out path with an .html suffix): one file that opens offline."`
}

// dirs are the run directories, the arguments then --run-dirs.
func (c *SwimLaneCmd) dirs() []string { return append(slices.Clone(c.Dirs), c.RunDirs...) }

// Validate checks the flags before anything is read.
func (c *SwimLaneCmd) Validate() error {
	dirs := c.dirs()
	switch {
	case c.Empty:
		return errors.New("--empty-run-dirs gives no run directory, and a swim lane needs one: give one or more run directories")
	case len(dirs) == 0:
		return errors.New("give one or more run directories (the artifact directories of `aiperf profile` runs): aiperf analyze swim-lane DIR")
	case c.Out != "" && len(dirs) > 1:
		return fmt.Errorf("--out only valid with a single run dir (%d given): leave it out to write each run's <run dir>/swim_lane.png", len(dirs))
	case c.Concurrency != nil && *c.Concurrency < 1:
		return fmt.Errorf("--concurrency must be at least 1, got %d", *c.Concurrency)
	case c.Ramp != nil && !(*c.Ramp >= 0 && !math.IsInf(*c.Ramp, 0)):
		return fmt.Errorf("--ramp must be a duration of 0 seconds or more, got %g", *c.Ramp)
	}
	if c.Out == "" {
		return nil
	}
	if c.HTML && strings.EqualFold(filepath.Ext(c.Out), ".html") {
		return fmt.Errorf("--out %s is the image's path; with --html the viewer goes beside it, the same path ending .html: give the .png path", c.Out)
	}
	_, err := imageFormat(c.Out)
	return err
}

// imageFormat is the image format --out asks for: PNG unless it ends
// .svg; another extension is refused.
func imageFormat(path string) (string, error) {
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case "", ".png":
		return "png", nil
	case ".svg":
		return "svg", nil
	default:
		return "", fmt.Errorf("--out %s: the swim lane is drawn as PNG (.png) or SVG (.svg), not %s", path, ext)
	}
}

// Run draws each run directory's swim lane (and viewer). A directory
// that cannot be drawn is skipped, named with why, and the others are
// still drawn, as AIPerf; then the exit is 2.
func (c *SwimLaneCmd) Run(ctx context.Context, g *Globals) error {
	defer lean()()
	dirs := c.dirs()
	opt := swimlane.Options{Ramp: c.Ramp}
	if c.Concurrency != nil {
		opt.Target = *c.Concurrency
	}
	skipped := 0
	for _, dir := range dirs {
		err := c.draw(ctx, g, dir, opt)
		switch {
		case err == nil:
		case errors.Is(err, context.Canceled) || len(dirs) == 1 || !refused(err):
			return err
		default:
			fmt.Fprintf(g.Stderr, "skip %s: %v\n", dir, err)
			skipped++
		}
	}
	if skipped > 0 {
		return usageErr(fmt.Errorf("%d of %d run directories skipped (see above)", skipped, len(dirs)))
	}
	return nil
}

// outputs are the files drawing dir writes (the image, and the viewer
// with --html), each named as the command line names it.
func (c *SwimLaneCmd) outputs(dir string) (paths, whats []string) {
	if c.Out != "" {
		paths, whats = []string{c.Out}, []string{"--out"}
	} else {
		paths, whats = []string{filepath.Join(dir, "swim_lane.png")}, []string{"the image"}
	}
	if c.HTML {
		page := filepath.Join(dir, "swim_lane.html")
		if c.Out != "" {
			page = strings.TrimSuffix(c.Out, filepath.Ext(c.Out)) + ".html"
		}
		paths, whats = append(paths, page), append(whats, "the viewer")
	}
	return paths, whats
}

// draw writes one run directory's swim lane. Its outputs are checked
// before the run is read: a FIFO, a device other than a character device,
// or a run's own file is refused.
func (c *SwimLaneCmd) draw(ctx context.Context, g *Globals, dir string, opt swimlane.Options) error {
	paths, whats := c.outputs(dir)
	for i, p := range paths {
		if err := checkOutputFile(p, whats[i], filepath.Join(dir, swimlane.FileJSONL), filepath.Join(dir, swimlane.FileJSON)); err != nil {
			return usageErr(err)
		}
	}
	run, err := swimlane.Load(ctx, dir)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return err
		}
		return usageErr(err)
	}
	v := swimlane.NewView(run, opt)
	for _, n := range v.Notes {
		fmt.Fprintf(g.Stderr, "note: %s: %s\n", dir, n)
	}
	out := paths[0]
	format, err := imageFormat(out)
	if err != nil {
		return usageErr(err)
	}
	var buf bytes.Buffer
	if err := v.Write(&buf, format); err != nil {
		return err
	}
	if err := writeOutput(out, buf.Bytes()); err != nil {
		return err
	}
	w, h := v.Size()
	fmt.Fprintf(g.Stdout, "saved %s (%d×%d px: %s, %s in %s, peak %d in flight)\n", out, w, h, plural(len(run.Requests), "request"),
		plural(len(run.Sessions), "session"), plural(len(v.Layout.Slots), "slot"), v.PeakActive)
	if !c.HTML {
		return nil
	}
	page := paths[1]
	size, err := outputfile.Write(page, v.WriteHTML) // streamed, not held
	if err != nil {
		return err
	}
	fmt.Fprintf(g.Stdout, "saved %s (%.1f kB: open it in a browser, it needs no network)\n", page, float64(size)/1000)
	return nil
}
