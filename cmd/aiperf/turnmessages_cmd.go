package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/aiperf-go/aiperf/internal/numfmt"
	"github.com/aiperf-go/aiperf/internal/outputfile"
	"github.com/aiperf-go/aiperf/internal/turnview"
)

// TurnMessagesCmd is `aiperf analyze turn-messages`: AIPerf's viewer of
// the input messages each conversation of a run sent, turn by turn, one
// self-contained HTML file per run, read from its raw export.
type TurnMessagesCmd struct {
	Dirs               []string `arg:"" optional:"" name:"run-dir" placeholder:"DIR" help:"One or more run directories (artifact directories of aiperf profile --export-level raw), or raw-record JSONL files."`
	RunDirs            []string `name:"run-dirs" type:"list" placeholder:"DIR" help:"Run directories, as the arguments (AIPerf's --run-dirs: several space-separated, or the flag repeated)."`
	EmptyRunDirs       bool     `name:"empty-run-dirs" help:"AIPerf's empty --run-dirs list; refused, for at least one run directory is needed."`
	Out                string   `name:"out" short:"o" placeholder:"FILE" help:"The HTML file to write (default: turn_messages.html in the run directory). Only with a single run directory."`
	LimitConversations int      `name:"limit-conversations" short:"n" default:"40" placeholder:"N" help:"Conversations shown: roots first, then by their earliest request (default ${default})."`
	MaxTurns           int      `name:"max-turns" default:"60" placeholder:"N" help:"Turns shown per conversation; the rest are counted as hidden (default ${default})."`
	ContentCap         int      `name:"content-cap" default:"8000" placeholder:"CHARS" help:"Characters kept of each unique message body; the rest are counted as cut (default ${default}). Raise it for whole bodies."`
}

// dirs are the run directories given, as arguments and with --run-dirs.
func (c *TurnMessagesCmd) dirs() []string { return append(append([]string{}, c.Dirs...), c.RunDirs...) }

// Validate checks the flags before anything is read.
func (c *TurnMessagesCmd) Validate() error {
	dirs := c.dirs()
	switch {
	case c.EmptyRunDirs && len(dirs) > 0:
		return errors.New("--empty-run-dirs gives no run directory, yet some were given: leave it out")
	case len(dirs) == 0:
		return errors.New("give one or more run directories: aiperf analyze turn-messages --run-dirs DIR [DIR...]")
	case c.Out != "" && len(dirs) > 1:
		return fmt.Errorf("--out is only valid with a single run directory, got %d: leave it out to write turn_messages.html in each", len(dirs))
	case c.LimitConversations < 1:
		return fmt.Errorf("--limit-conversations (-n) must be at least 1, got %d", c.LimitConversations)
	case c.MaxTurns < 1:
		return fmt.Errorf("--max-turns must be at least 1, got %d", c.MaxTurns)
	case c.ContentCap < 1:
		return fmt.Errorf("--content-cap must be at least 1 character, got %d", c.ContentCap)
	}
	return nil
}

// bigExport is the size of raw export above which the command says it
// is reading (and that Ctrl-C stops it).
const bigExport = 64 << 20

// Run writes each run's viewer. Every run is checked before any is read;
// a run that cannot be read (a malformed line) is named and the others
// are still written, the exit being 2.
func (c *TurnMessagesCmd) Run(ctx context.Context, g *Globals) error {
	type job struct{ dir, out string }
	var jobs []job
	var files [][]string
	for _, d := range c.dirs() {
		fs, out, err := turnview.Find(d)
		if err != nil {
			return usageErr(err)
		}
		what := "the viewer"
		if c.Out != "" {
			out, what = c.Out, "--out"
		}
		if err := checkOutputFile(out, what, fs...); err != nil {
			return usageErr(err)
		}
		jobs, files = append(jobs, job{d, out}), append(files, fs)
	}
	opt := turnview.Options{LimitConversations: c.LimitConversations, MaxTurns: c.MaxTurns, ContentCap: c.ContentCap}
	failed := 0
	for i, j := range jobs {
		c.announce(g, files[i])
		v, err := turnview.Build(ctx, files[i], opt)
		switch {
		case errors.Is(err, context.Canceled):
			return err
		case err != nil && len(jobs) == 1:
			return usageErr(err)
		case err != nil:
			failed++
			fmt.Fprintf(g.Stderr, "skip %s: %v\n", j.dir, err)
			continue
		}
		v.Source, v.Version = j.dir, version
		size, err := writeViewer(j.out, v)
		if err != nil {
			return err
		}
		fmt.Fprintf(g.Stdout, "saved %s (%s KB): %d conversations (%d shown), %d turns, %d unique messages\n",
			j.out, numfmt.Grouped(float64(size/1024), 0), v.Conversations, len(v.Convs), v.Turns, len(v.Msgs))
	}
	if failed > 0 {
		return usageErr(fmt.Errorf("%d of %d runs not rendered (each named above)", failed, len(jobs)))
	}
	return nil
}

// announce says a large export is being read.
func (c *TurnMessagesCmd) announce(g *Globals, files []string) {
	var size int64
	for _, f := range files {
		if st, err := os.Stat(f); err == nil {
			size += st.Size()
		}
	}
	if size > bigExport {
		fmt.Fprintf(g.Stderr, "reading %s MB of raw records (Ctrl-C stops it)\n", numfmt.Grouped(float64(size>>20), 0))
	}
}

// writeViewer writes the page as every output file is written
// (outputfile.Write): to a temporary file beside path, renamed into
// place once whole, so an interrupted or failed write leaves no partial
// page; a character device written in place, anything else but a regular
// file refused. It returns the page's size.
func writeViewer(path string, v *turnview.View) (int64, error) {
	return outputfile.Write(path, v.WriteHTML)
}
