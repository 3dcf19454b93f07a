package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/aiperf-go/aiperf/internal/bench"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/report"
	"github.com/aiperf-go/aiperf/runner"
)

// PlanCmd is `aiperf plan`: expand a script and print every trial.
type PlanCmd struct {
	ScriptArgs  `embed:"" set:"only_verb=Show"`
	Format      string `name:"format" enum:"table,json" default:"table" help:"Output: table or json."`
	ParallelArg `embed:""`
}

// Run prints the plan. It never sends a request. Expanding and writing a
// plan of 100,000 trials takes half a minute, much of it in calls that do
// not look at ctx (the trial list, the table): they run aside, their output
// cut off at the first Ctrl-C, which returns at once (nothing was sent,
// nothing is left to undo).
func (c *PlanCmd) Run(ctx context.Context, g *Globals) error {
	if err := c.ParallelArg.check(); err != nil {
		return err
	}
	sweeps, err := c.load(ctx)
	if err != nil {
		return err
	}
	searches, err := planSearches(c.searches)
	if err != nil {
		return err
	}
	out := *g
	out.Stdout = ctxWriter{ctx: ctx, w: g.Stdout}
	done := make(chan error, 1)
	go func() {
		done <- printPlan(ctx, &out, sweeps, searches, c.Format, "Directories are under aiperf sweep's --artifact-dir.", c.Parallel)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("plan interrupted (nothing was sent): %w", context.Cause(ctx))
	}
}

// ctxWriter writes to w until ctx is done, then refuses.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

// Unwrap is w, so that what it was marked with (--wide, a terminal) shows
// through.
func (c ctxWriter) Unwrap() io.Writer { return c.w }

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// printPlan prints every trial of sweeps as a table, or as JSON, then each
// search; note ends the table's summary line. With parallel > 0 it
// describes how `aiperf sweep --parallel parallel` schedules each sweep
// (its server lanes).
func printPlan(ctx context.Context, g *Globals, sweeps []plan.Sweep, searches []searchPlan, format, note string, parallel int) error {
	if format == "json" {
		type trialOut struct {
			plan.Trial
			Key string `json:"key"`
			Dir string `json:"dir"`
		}
		var trials []trialOut
		for _, sw := range sweeps {
			for i, t := range sw.TrialList() {
				if err := interrupted(ctx, i); err != nil {
					return err
				}
				t.Cell.Profile = t.Cell.Profile.Redacted()
				trials = append(trials, trialOut{Trial: t, Key: t.Key(), Dir: t.Dir()})
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		out := map[string]any{"sweeps": redactedSweeps(sweeps), "trials": trials}
		if len(searches) > 0 {
			out["searches"] = searches
		}
		if parallel > 0 {
			lanes := map[string][]plan.Lane{}
			for _, sw := range sweeps {
				lanes[sw.Name] = sw.Lanes()
				if parallel > 1 {
					lanes[sw.Name], _ = runner.ServerLanes(ctx, sw)
				}
			}
			out["lanes"] = lanes
		}
		return report.JSON(g.Stdout, out)
	}
	total := 0
	for _, sw := range sweeps {
		fmt.Fprintf(g.Stdout, "sweep %q (%s): %s × %s\n", sw.Name, sw.Source, plural(len(sw.Cells), "cell"), plural(max(1, sw.Trials), "trial"))
		rows := [][]string{}
		for i, t := range sw.TrialList() {
			if err := interrupted(ctx, i); err != nil {
				return err
			}
			p := t.Cell.Profile
			rows = append(rows, []string{fmt.Sprint(total + 1), t.Dir(), t.Cell.ID, describeLoad(p), fmt.Sprint(p.RandomSeed), hooksOf(p.Redacted())})
			total++
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		report.Table(g.Stdout, []string{"#", "directory", "id", "load", "seed", "hooks"}, rows, "rlllrl")
		if parallel > 0 {
			describeSchedule(ctx, g.Stdout, sw, parallel, true)
		}
	}
	printSearchPlans(g, searches)
	what := plural(total, "trial") + " in total"
	if len(searches) > 0 {
		what += fmt.Sprintf(" and %d searches that choose their probes as they run", len(searches))
		if len(searches) == 1 {
			what = plural(total, "trial") + " in total and 1 search that chooses its probes as it runs"
		}
	}
	fmt.Fprintf(g.Stdout, "%s; nothing was sent. %s\n", what, note)
	return nil
}

// interrupted is ctx's error every 256th trial i of a plan being printed:
// a plan of 100,000 trials takes long enough that Ctrl-C must stop it.
func interrupted(ctx context.Context, i int) error {
	if i%256 != 0 {
		return nil
	}
	return ctx.Err()
}

// plural is "1 trial", "2 trials", ...
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func redactedSweeps(sweeps []plan.Sweep) []plan.Sweep {
	out := make([]plan.Sweep, len(sweeps))
	for i, sw := range sweeps {
		cells := make([]plan.Cell, len(sw.Cells))
		for j, c := range sw.Cells {
			c.Profile = c.Profile.Redacted()
			cells[j] = c
		}
		sw.Cells = cells
		out[i] = sw
	}
	return out
}

// describeLoad renders a cell's phases in one line, and its dataset: the
// input file or public dataset it reads, else the synthetic prompts' ISL.
func describeLoad(p plan.Profile) string {
	var parts []string
	for _, ph := range bench.PlannedPhases(p) {
		parts = append(parts, ph.String())
	}
	s := strings.Join(parts, " → ")
	switch {
	case p.PublicDataset != "":
		s += fmt.Sprintf("; %s from %s", p.PublicDataset, p.InputFile)
	case p.InputFile != "":
		s += "; input " + p.InputFile
	default:
		s += fmt.Sprintf("; isl %d", p.SyntheticInputTokensMean)
	}
	if p.OutputTokensMean != nil {
		s += fmt.Sprintf(", osl %d", *p.OutputTokensMean)
	}
	return s
}

// hooksOf lists the control calls each trial of p will make: the routes of
// its --server preset, or of explicit paths, as the trial resolves them.
func hooksOf(p plan.Profile) string {
	var hs []string
	if h := p.ResetHook(); h.Enabled {
		hs = append(hs, "reset "+h.Describe())
	}
	if h := p.ProfilerHook(); h.Enabled {
		hs = append(hs, "profiler "+h.StartPath+"|"+h.StopPath)
	}
	if len(hs) == 0 {
		return "-"
	}
	return strings.Join(hs, ", ")
}
