package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/aiperf-go/aiperf/internal/numfmt"
	"github.com/aiperf-go/aiperf/internal/report"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/termsafe"
	"github.com/aiperf-go/aiperf/store"
)

// RunsCmd is `aiperf runs`: the stored run history.
type RunsCmd struct {
	List   RunsListCmd   `cmd:"" help:"List stored runs, newest first."`
	Show   RunsShowCmd   `cmd:"" help:"Show a stored run: summary, config (secrets removed), control-hook calls, errors, audit and scraped server metrics."`
	Export RunsExportCmd `cmd:"" help:"Write a stored run back out as AIPerf's profile_export_aiperf.json or .csv."`
	Delete RunsDeleteCmd `cmd:"" help:"Delete stored runs with their records and statistics."`
	Sweeps RunsSweepsCmd `cmd:"" help:"List stored sweeps and searches, newest first: kind, status, cells (a search's probes), runs and a search's answer."`
}

// RunsListCmd is `aiperf runs list`.
type RunsListCmd struct {
	Limit  int    `name:"limit" default:"50" help:"Show at most this many runs (0: all)."`
	Sweep  string `name:"sweep" placeholder:"NAME|ID" help:"Only the runs of this sweep (a name means its latest sweep)."`
	Name   string `name:"name" help:"Only the runs with this --name label."`
	Format string `name:"format" enum:"table,json" default:"table" help:"Output: table or json."`
}

// Validate refuses a negative --limit.
func (c *RunsListCmd) Validate() error {
	if c.Limit < 0 {
		return fmt.Errorf("--limit must be 0 (all) or more, got %d", c.Limit)
	}
	return nil
}

// headlineStats are the statistics `runs list` shows.
var headlineStats = []string{
	"request_throughput.avg", "time_to_first_token.avg", "time_to_first_token.p99",
	"request_latency.p99", "error_request_count.avg",
}

// Run lists the runs.
func (c *RunsListCmd) Run(ctx context.Context, g *Globals) error {
	db, err := openStoreToRead(ctx, g.Store)
	if err != nil {
		return err
	}
	defer db.Close()
	runs, err := db.ListRuns(ctx, store.RunFilter{Limit: c.Limit, Sweep: c.Sweep, Name: c.Name, Stats: headlineStats})
	if err != nil {
		return refErr(err)
	}
	if c.Format == "json" {
		return encodeIndented(g.Stdout, nonNilRows(runs))
	}
	if len(runs) == 0 {
		var of []string
		if c.Name != "" {
			of = append(of, fmt.Sprintf("named %q", c.Name))
		}
		if c.Sweep != "" {
			of = append(of, fmt.Sprintf("of sweep %q", c.Sweep))
		}
		if len(of) == 0 {
			fmt.Fprintf(g.Stdout, "no runs in %s\n", g.Store)
		} else {
			fmt.Fprintf(g.Stdout, "no runs %s in %s (aiperf runs list shows them all)\n", strings.Join(of, " "), g.Store)
		}
		return nil
	}
	rows := make([][]string, 0, len(runs))
	for i := range runs {
		r := &runs[i]
		stat := func(key string) string {
			metric, s, _ := strings.Cut(key, ".")
			if v, ok := r.Stat(metric, s); ok {
				if strings.HasSuffix(metric, "_count") {
					return numfmt.Text(v, 0)
				}
				return numfmt.Text(v, 2)
			}
			return "-" // absent, or not a finite number (the store reads those as absent)
		}
		// The table leaves out ttft avg (--format json has it): twelve
		// columns of a sweep's cell labels, addresses and 3-digit
		// latencies are as many as fit 120 columns.
		rows = append(rows, []string{
			strconv.FormatInt(r.ID, 10), r.StartedAt.Local().Format("2006-01-02 15:04:05"), runPlacement(r),
			orDash(r.Name), r.Model, r.URL, runLoad(r), r.Status,
			stat(headlineStats[0]), stat(headlineStats[2]), stat(headlineStats[3]), stat(headlineStats[4]),
		})
	}
	report.Table(g.Stdout, []string{"id", "started", "sweep/cell/trial", "name", "model", "url", "load", "status",
		"req/s", "ttft p99 (ms)", "latency p99 (ms)", "errors"}, rows, "rlllllllrrrr")
	return nil
}

// runPlacement is where a run sits: sweep/cell#trial, or "-" when standalone.
func runPlacement(r *store.RunRow) string {
	switch {
	case r.CellLabel != "":
		return fmt.Sprintf("%s/%s#%d", r.Sweep, r.CellLabel, r.Trial)
	case r.Sweep != "":
		return r.Sweep
	}
	return "-"
}

// runLoad describes the load a run applied.
func runLoad(r *store.RunRow) string {
	if r.Mode == "rate" && r.RequestRate != nil {
		s := "rate " + strconv.FormatFloat(*r.RequestRate, 'g', -1, 64) + "/s"
		if r.Concurrency != nil {
			s += fmt.Sprintf(" (cap %d)", *r.Concurrency)
		}
		return s
	}
	if r.Concurrency != nil {
		return fmt.Sprintf("concurrency %d", *r.Concurrency)
	}
	return r.Mode
}

// RunsShowCmd is `aiperf runs show`.
type RunsShowCmd struct {
	ID     int64  `arg:"" name:"run-id" help:"Run id (see aiperf runs list)."`
	Format string `name:"format" enum:"text,json" default:"text" help:"Output: text or json (the stored run, without records)."`
}

// Run shows the run.
func (c *RunsShowCmd) Run(ctx context.Context, g *Globals) error {
	return withStoredRun(ctx, g, c.ID, func(db *store.DB, run *result.Run) error {
		if c.Format == "json" { // a statistic that is not a finite number as null
			if err := report.RunJSON(g.Stdout, run); err != nil {
				return fmt.Errorf("encode json: %w", err)
			}
			return nil
		}
		rows, err := db.ListRuns(ctx, store.RunFilter{IDs: []int64{c.ID}})
		if err != nil {
			return err
		}
		if len(rows) != 1 { // deleted in between
			return refErr(fmt.Errorf("run %d %w", c.ID, store.ErrNotFound))
		}
		printRunHeader(g.Stdout, &rows[0], run)
		fmt.Fprintln(g.Stdout)
		report.Console(g.Stdout, run)
		printServerMetrics(g.Stdout, run)
		fmt.Fprintln(g.Stdout)
		fmt.Fprintln(g.Stdout, "Config (secrets removed):")
		return encodeIndented(g.Stdout, run.Config)
	})
}

// withStoredRun opens the store and calls fn with run id (without its
// records), its configuration redacted once more before it is shown.
func withStoredRun(ctx context.Context, g *Globals, id int64, fn func(db *store.DB, run *result.Run) error) error {
	db, err := openStoreToRead(ctx, g.Store)
	if err != nil {
		return err
	}
	defer db.Close()
	run, err := db.GetRun(ctx, id, false)
	if err != nil {
		return refErr(err)
	}
	run.Config = run.Config.Redacted()
	return fn(db, run)
}

// printRunHeader prints the identity block of `runs show`.
func printRunHeader(w io.Writer, r *store.RunRow, run *result.Run) {
	fmt.Fprintf(w, "Run %d: %s\n", r.ID, r.Status)
	line := func(label, value string) {
		if value != "" {
			fmt.Fprintln(w, report.Fit(w, fmt.Sprintf("  %-13s %s", label+":", termsafe.Text(value))))
		}
	}
	line("name", r.Name)
	line("benchmark id", r.BenchmarkID)
	if r.Sweep != "" {
		line("sweep", fmt.Sprintf("%s (id %d)", r.Sweep, r.SweepID))
	}
	if r.CellLabel != "" {
		line("cell", fmt.Sprintf("%s (%s), trial %d", r.CellLabel, r.CellID, r.Trial))
	}
	line("started", r.StartedAt.Local().Format("2006-01-02 15:04:05 MST"))
	switch {
	case r.Status == result.StatusRunning:
		line("duration", "still going")
	case r.EndedAt.IsZero(): // a pending run whose process ended before it finished
		line("duration", "unknown: it did not finish")
	default:
		line("duration", r.EndedAt.Sub(r.StartedAt).Round(1e6).String())
	}
	line("model", r.Model)
	line("url", r.URL)
	line("endpoint", fmt.Sprintf("%s, streaming %t", r.EndpointType, r.Streaming))
	line("load", runLoad(r))
	line("error", r.Error)
	line("command", run.CLICommand)
	line("tool", strings.TrimSpace(run.ToolVersion+" on "+run.Host))
	line("artifacts", r.ArtifactDir)
	line("records", strconv.Itoa(r.RecordCount)+" stored")
}

// RunsExportCmd is `aiperf runs export`.
type RunsExportCmd struct {
	ID     int64  `arg:"" name:"run-id" help:"Run id (see aiperf runs list)."`
	Format string `name:"format" enum:"json,csv" default:"json" help:"json (profile_export_aiperf.json) or csv (profile_export_aiperf.csv)."`
	Output string `name:"output" short:"o" placeholder:"DIR" help:"Write the file into DIR (created if needed) instead of to stdout."`
}

// Validate refuses an --output that is a file, or whose export file exists:
// a stored run exported over the run's own export would replace the
// original with its reconstruction.
func (c *RunsExportCmd) Validate() error {
	if c.Output == "" {
		return nil
	}
	if fi, err := os.Stat(c.Output); err == nil && !fi.IsDir() {
		return fmt.Errorf("--output %s is a file: give a directory", c.Output)
	}
	name := report.JSONFile
	if c.Format == "csv" {
		name = report.CSVFile
	}
	if path := filepath.Join(c.Output, name); fileExists(path) {
		return fmt.Errorf("--output: %s exists (perhaps the run's own export): give another directory, or remove it", path)
	}
	return nil
}

// fileExists reports whether path names anything.
func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// Run exports the run. A run that has not finished (still going, or whose
// process exited before it summarised its records) is refused: it has no
// figures, and AIPerf's export of it would pass for a benchmark that ran
// whole (was_cancelled false, no metrics, an empty CSV).
func (c *RunsExportCmd) Run(ctx context.Context, g *Globals) error {
	return withStoredRun(ctx, g, c.ID, func(_ *store.DB, run *result.Run) error {
		if run.Status == result.StatusRunning {
			return usageErr(fmt.Errorf("run %d is still going: its figures are summarised when it ends; export it then "+
				"(nothing was written)", c.ID))
		}
		if why := report.Unsummarised(run); why != "" {
			return usageErr(fmt.Errorf("run %d did not finish: %s, so it has no figures to export; aiperf runs show %d "+
				"says what it holds (nothing was written)", c.ID, why, c.ID))
		}
		write, name := report.WriteJSON, report.JSONFile
		if c.Format == "csv" {
			write, name = report.WriteCSV, report.CSVFile
		}
		if c.Output == "" {
			return write(termsafe.Raw(g.Stdout), run) // the export file's bytes
		}
		if err := os.MkdirAll(c.Output, 0o755); err != nil {
			return fmt.Errorf("export run %d: %w", c.ID, err)
		}
		path := filepath.Join(c.Output, name)
		f, err := os.Create(path)
		if err != nil {
			return fmt.Errorf("export run %d: %w", c.ID, err)
		}
		if err := errors.Join(write(f, run), f.Close()); err != nil {
			os.Remove(path)
			return fmt.Errorf("export run %d to %s: %w", c.ID, path, err)
		}
		fmt.Fprintf(g.Stdout, "Export: %s\n", path)
		return nil
	})
}

// RunsDeleteCmd is `aiperf runs delete`.
type RunsDeleteCmd struct {
	IDs []int64 `arg:"" name:"run-id" help:"Ids of the runs to delete (all or none: an unknown id deletes nothing)."`
}

// Run deletes the runs.
func (c *RunsDeleteCmd) Run(ctx context.Context, g *Globals) error {
	db, err := openExistingStore(ctx, g.Store)
	if err != nil {
		return err
	}
	defer db.Close()
	ids := uniqueIDs(c.IDs)
	if err := db.DeleteRuns(ctx, ids...); err != nil {
		return refErr(err)
	}
	for _, id := range ids {
		fmt.Fprintf(g.Stdout, "deleted run %d\n", id)
	}
	return nil
}

// uniqueIDs is ids without repeats, in their first order.
func uniqueIDs(ids []int64) []int64 {
	seen := map[int64]bool{}
	var out []int64
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// refErr turns an error about a reference the user gave (a run, name or
// sweep that is not stored, or a sweep that is ambiguous as one group) into
// a usage error; a not-found error also points at `aiperf runs list`, and
// at `aiperf runs sweeps` for a sweep.
func refErr(err error) error {
	switch {
	case errors.Is(err, store.ErrNotFound) && strings.Contains(err.Error(), "sweep"):
		return usageErr(fmt.Errorf("%w (see aiperf runs list, and aiperf runs sweeps for sweeps and searches)", err))
	case errors.Is(err, store.ErrNotFound):
		return usageErr(fmt.Errorf("%w (see aiperf runs list)", err))
	case errors.Is(err, store.ErrAmbiguous):
		return usageErr(err) // the message says how to disambiguate
	}
	return err
}

// encodeIndented writes v as indented JSON, leaving <, > and & readable.
func encodeIndented(w io.Writer, v any) error {
	if err := report.JSON(w, v); err != nil {
		return fmt.Errorf("encode json: %w", err)
	}
	return nil
}

func nonNilRows(rows []store.RunRow) []store.RunRow {
	if rows == nil {
		return []store.RunRow{}
	}
	return rows
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
