package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/aiperf-go/aiperf/internal/compare"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/store"
)

// CompareCmd is `aiperf compare`: stored runs side by side, a sweep's cells,
// or two sweeps cell by cell, with run-to-run noise taken into account.
type CompareCmd struct {
	Refs            []string `arg:"" optional:"" name:"ref" help:"Runs to compare, the first being the baseline: a run id, a --name label (its trials), a sweep with a single cell, or SWEEP/CELL-LABEL."`
	Sweep           []string `name:"sweep" sep:"none" placeholder:"NAME|ID" help:"Show a sweep's cells (once), or compare two sweeps cell by cell (twice; the first is the baseline). A name means its latest sweep."`
	Metric          []string `name:"metric" placeholder:"TAG.STAT" help:"Statistics to compare (default time_to_first_token.avg,time_to_first_token.p99,inter_token_latency.avg,request_latency.p99,output_token_throughput.avg,request_throughput.avg,error_request_count.avg, plus a few server rows when the runs scraped server metrics). Server metrics: server.FAMILY.STAT (server.vllm:kv_cache_usage_perc.max), gpu.FAMILY.STAT, or an alias (server.ttft.p50, server.prefix_cache_hit_rate, server.kv_cache_usage.max, ...)."`
	Format          string   `name:"format" enum:"table,markdown,csv,json" default:"table" help:"Output: table, markdown, csv or json."`
	ConfidenceLevel float64  `name:"confidence-level" default:"0.95" help:"Confidence level of the intervals and of the verdicts' tests (Welch, TOST at α = 1 − level), in (0, 1)."`
	Threshold       *float64 `name:"threshold" placeholder:"PCT" help:"Practical-effect threshold in % of the baseline mean, for every metric: better/worse need a significant change beyond it, equivalent means within ±PCT by two one-sided tests (TOST). 0 gives plain Welch verdicts. Default per metric: 0 for error counts and server.preemptions, 5 for other server.*/gpu.* keys, 2 otherwise."`
}

// Validate checks the combination of arguments before anything is read.
func (c *CompareCmd) Validate() error {
	switch {
	case len(c.Refs) > 0 && len(c.Sweep) > 0:
		return errors.New("give runs to compare or --sweep, not both")
	case len(c.Refs) == 0 && len(c.Sweep) == 0:
		return errors.New("nothing to compare: give run ids or names, or --sweep NAME (see aiperf runs list)")
	case len(c.Sweep) > 2:
		return fmt.Errorf("--sweep takes one sweep (its cells) or two (compared cell by cell), got %d", len(c.Sweep))
	}
	for i, ref := range c.Refs {
		if strings.TrimSpace(ref) == "" {
			return fmt.Errorf("run reference %d is empty: give a run id, a --name label, a sweep or SWEEP/CELL (see aiperf runs list)", i+1)
		}
	}
	for _, ref := range c.Sweep {
		if strings.TrimSpace(ref) == "" {
			return errors.New("--sweep is empty: give a sweep's name or id (see aiperf runs sweeps)")
		}
	}
	if _, err := c.options(); err != nil {
		return err
	}
	return nil
}

func (c *CompareCmd) options() (compare.Options, error) {
	keys, err := compare.ParseKeys(c.Metric)
	if err != nil {
		return compare.Options{}, fmt.Errorf("--metric %w", err)
	}
	if err := plan.CheckConfidence("confidence_level", c.ConfidenceLevel); err != nil {
		return compare.Options{}, err
	}
	opt := compare.Options{Keys: keys, ConfidenceLevel: c.ConfidenceLevel, Threshold: c.Threshold}
	if err := opt.Validate(); err != nil {
		return compare.Options{}, err
	}
	return opt, nil
}

// Run renders the comparison.
func (c *CompareCmd) Run(ctx context.Context, g *Globals) error {
	opt, err := c.options()
	if err != nil {
		return usageErr(err)
	}
	db, err := openStoreToRead(ctx, g.Store)
	if err != nil {
		return err
	}
	defer db.Close()
	var (
		rep compare.Report
		all []store.RunRow // every loaded run, for the server-metric check
	)
	switch len(c.Sweep) {
	case 1:
		s, err := db.SweepRuns(ctx, c.Sweep[0], opt.StatKeys())
		if err != nil {
			return refErr(err)
		}
		all = sweepRuns(s)
		rep = compare.Sweep(s, opt)
	case 2:
		var sides [2]*store.SweepRuns
		for i, ref := range c.Sweep {
			if sides[i], err = db.SweepRuns(ctx, ref, opt.StatKeys()); err != nil {
				return refErr(err)
			}
			all = append(all, sweepRuns(sides[i])...)
		}
		if sides[0].Sweep.ID == sides[1].Sweep.ID {
			return usageErr(fmt.Errorf("--sweep %q and --sweep %q are the same sweep (id %d): a sweep compared with itself proves nothing",
				c.Sweep[0], c.Sweep[1], sides[0].Sweep.ID))
		}
		d := compare.SweepDiff(sides[0], sides[1], opt)
		if len(d.Cells) == 0 {
			return usageErr(fmt.Errorf("sweeps %q and %q share no cell (cells are matched by their parameters: %s against %s): "+
				"nothing to compare; compare one cell of each instead: aiperf compare %s/%s %s/%s", c.Sweep[0], c.Sweep[1],
				strings.Join(d.OnlyA, ", "), strings.Join(d.OnlyB, ", "), c.Sweep[0], firstOr(d.OnlyA), c.Sweep[1], firstOr(d.OnlyB)))
		}
		rep = d
	default:
		groups := make([]*store.Group, len(c.Refs))
		for i, ref := range c.Refs {
			if groups[i], err = db.RunsByRef(ctx, ref, opt.StatKeys()); err != nil {
				return refErr(cellHint(ctx, db, ref, err))
			}
			all = append(all, groups[i].Runs...)
		}
		if err := disjoint(groups); err != nil {
			return usageErr(err)
		}
		rep = compare.Groups(groups, opt)
	}
	err = compare.CheckServerKeys(opt.Keys, all, func() ([]store.ServerMetric, error) {
		ids := make([]int64, len(all))
		for i := range all {
			ids[i] = all[i].ID
		}
		return db.ServerMetrics(ctx, ids)
	})
	if err != nil {
		return usageErr(fmt.Errorf("--metric %w", err))
	}
	return compare.Render(g.Stdout, rep, c.Format)
}

// disjoint refuses groups that share runs: the verdicts treat the sides as
// independent samples, and a run on both sides would show a group
// "equivalent" to itself.
func disjoint(groups []*store.Group) error {
	owner := map[int64]int{}
	for i, g := range groups {
		var shared []int64
		other := -1
		for _, r := range g.Runs {
			if j, ok := owner[r.ID]; ok && j != i {
				shared, other = append(shared, r.ID), j
				continue
			}
			owner[r.ID] = i
		}
		if len(shared) > 0 {
			return fmt.Errorf("%q and %q share runs %v: a comparison needs groups of different runs (see aiperf runs list)",
				groups[other].Ref, g.Ref, shared)
		}
	}
	return nil
}

// maxListedCells is how many cell labels a "cell not found" error lists.
const maxListedCells = 20

// cellHint adds to err, a failure to find ref, the labels nearest ref's
// cell when ref is SWEEP/CELL of a stored sweep without that cell ("did you
// mean"), and the sweep's labels when it has at most maxListedCells; else
// it returns err as it is.
func cellHint(ctx context.Context, db *store.DB, ref string, err error) error {
	i := strings.LastIndex(ref, "/")
	if i <= 0 || !errors.Is(err, store.ErrNotFound) {
		return err
	}
	s, serr := db.SweepRuns(ctx, ref[:i], nil)
	if serr != nil || len(s.Cells) == 0 {
		return err
	}
	cell := ref[i+1:]
	labels := make([]string, 0, len(s.Cells))
	for _, c := range s.Cells {
		if c.Label == cell || c.ID == cell {
			return err // the cell is there: something else is missing
		}
		labels = append(labels, c.Label)
	}
	hint := plan.Suggest(cell, labels)
	if len(labels) <= maxListedCells {
		hint += fmt.Sprintf("; its %d cells: %s", len(labels), strings.Join(labels, ", "))
	}
	return fmt.Errorf("%w%s", err, hint)
}

// cellHintIn is cellHint for the reference among refs whose cell err names.
func cellHintIn(ctx context.Context, db *store.DB, refs []string, err error) error {
	for _, ref := range refs {
		if i := strings.LastIndex(ref, "/"); i > 0 && strings.Contains(err.Error(), "cell "+strconv.Quote(ref[i+1:])) {
			return cellHint(ctx, db, ref, err)
		}
	}
	return err
}

func sweepRuns(s *store.SweepRuns) []store.RunRow {
	var out []store.RunRow
	for _, c := range s.Cells {
		out = append(out, c.Runs...)
	}
	return out
}

// printSweepTable prints the sweep view of a stored sweep (id or name) with
// the given statistics, else the default ones: what `aiperf sweep` shows
// when it finishes.
func printSweepTable(ctx context.Context, g *Globals, db *store.DB, sweepRef string, confidence float64, keys ...compare.Key) error {
	opt := compare.Options{ConfidenceLevel: confidence, Keys: keys}
	s, err := db.SweepRuns(ctx, sweepRef, opt.StatKeys())
	if err != nil {
		return err
	}
	return compare.Render(g.Stdout, compare.Sweep(s, opt), compare.FormatTable)
}

// firstOr is the first of labels, or CELL when there is none.
func firstOr(labels []string) string {
	if len(labels) == 0 {
		return "CELL"
	}
	return labels[0]
}
