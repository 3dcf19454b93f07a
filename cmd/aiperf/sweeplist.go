package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aiperf-go/aiperf/internal/bench"
	"github.com/aiperf-go/aiperf/internal/config"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/runner"
)

// sweepable are the options AIPerf sweeps when a profile command line gives
// them a comma list (--concurrency 8,16,32): each value is a cell.
var sweepable = []string{"concurrency", "request_count", "conversation_num", "conversation_turn_mean",
	"synthetic_input_tokens_mean", "synthetic_input_tokens_stddev", "output_tokens_mean", "output_tokens_stddev",
	"request_rate", "benchmark_duration", "num_users"}

// sweepList is one comma list of a profile command line.
type sweepList struct {
	option plan.Option
	flag   string // as typed, for messages
	values []any  // int64 or float64, as the option takes
}

// takeSweepLists finds the comma lists of sweepable options in the
// arguments after the profile command and replaces each by its first value,
// so that the flags parse as one cell; it returns the rewritten arguments
// and the lists. A list item that is not a number of the option's kind is
// an error naming the flag.
func takeSweepLists(args []string) ([]string, []sweepList, error) {
	out := append([]string(nil), args...)
	start := -1
	for i, a := range out {
		if a == "profile" {
			start = i + 1
			break
		}
	}
	if start < 0 {
		return out, nil, nil
	}
	var lists []sweepList
	for i := start; i < len(out); i++ {
		name, value, inline := strings.Cut(strings.TrimPrefix(out[i], "--"), "=")
		if !strings.HasPrefix(out[i], "--") || name == "" {
			continue
		}
		at := i
		if !inline {
			if i+1 >= len(out) {
				break
			}
			at, value = i+1, out[i+1]
		}
		o, ok := plan.LookupOption(strings.ReplaceAll(name, "-", "_"))
		if !ok || !strings.Contains(value, ",") || !slices.Contains(sweepable, o.Name) {
			continue
		}
		l := sweepList{option: o, flag: "--" + name}
		for item := range strings.SplitSeq(value, ",") {
			v, err := parseNumber(o, strings.TrimSpace(item))
			if err != nil {
				return nil, nil, fmt.Errorf("--%s %s: %w", name, value, err)
			}
			l.values = append(l.values, v)
		}
		first := strings.TrimSpace(strings.Split(value, ",")[0])
		if inline {
			out[at] = "--" + name + "=" + first
		} else {
			out[at] = first
		}
		lists = append(lists, l)
	}
	return out, lists, nil
}

// parseNumber reads one list item as the option's kind of number.
func parseNumber(o plan.Option, s string) (any, error) {
	if strings.Contains(o.TypeName(), "int") {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", s)
		}
		return n, nil
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, fmt.Errorf("%q is not a number", s)
	}
	return x, nil
}

// sweepCells are the cells of the command line's lists over base: every
// combination (grid, AIPerf's default) or the lists paired element-wise
// (zip, lists of one length). Each cell's seed is the base seed plus its
// position, unless sameSeed (AIPerf's --parameter-sweep-same-seed).
func sweepCells(name string, base plan.Profile, lists []sweepList, zip, sameSeed bool) ([]plan.Cell, error) {
	lengths := make([]int, len(lists))
	for i, l := range lists {
		lengths[i] = len(l.values)
		if zip && lengths[i] != lengths[0] {
			return nil, fmt.Errorf("--sweep-type zip pairs the lists element-wise: %s has %d values, %s has %d",
				lists[0].flag, lengths[0], l.flag, lengths[i])
		}
	}
	var points [][]plan.Param
	for _, combo := range plan.Combinations(lengths, zip) {
		pt := make([]plan.Param, len(lists))
		for k, l := range lists {
			pt[k] = plan.Param{Name: l.option.Name, Value: l.values[combo[k]]}
		}
		points = append(points, pt)
	}
	labels := plan.CellLabels(points)
	cells := make([]plan.Cell, len(points))
	for k, pt := range points {
		p := base
		for _, prm := range pt {
			o, _ := plan.LookupOption(prm.Name)
			if err := o.Set(&p, prm.Value); err != nil {
				return nil, fmt.Errorf("%s: %w", prm.Name, err)
			}
		}
		if !sameSeed {
			p.RandomSeed = base.RandomSeed + int64(k)
		}
		cells[k] = plan.Cell{ID: plan.CellID(name, pt), Label: labels[k], Index: k, Params: pt, Profile: p}
	}
	return cells, nil
}

// parameterSweep runs the command line's comma lists as a sweep: a cell per
// value (or combination), each trial its own subprocess with its own reset,
// stored, in AIPerf's artifact layout (runLayout): <dir>/<cell>/ with one
// trial; <dir>/profile_runs/trial_NNNN/<cell>/ and <dir>/aggregate/<cell>/
// in repeated mode; <dir>/<cell>/profile_runs/trial_NNNN/ and
// <dir>/<cell>/aggregate/ in independent mode.
func (c *ProfileCmd) parameterSweep(ctx context.Context, g *Globals, spec runner.Spec, dir string) error {
	if why := fixedSchedule(spec.Profile); why != "" {
		l := g.sweepLists[0]
		return usageErr(fmt.Errorf("%s: a parameter sweep (%s %s) cannot run against a fixed schedule (%s): "+
			"the trace's timestamps set the pace, so every cell would run the same load; "+
			"pin a single value, or pass --no-fixed-schedule to keep the %s mode and ignore the timestamps",
			l.flag, l.flag, listText(l.values), why, strings.TrimPrefix(l.flag, "--")))
	}
	cells, err := sweepCells(cmp.Or(c.Name, "profile"), spec.Profile, g.sweepLists, c.SweepType == "zip", c.ParameterSweepSameSeed)
	if err != nil {
		return usageErr(err)
	}
	return c.runCells(ctx, g, spec, dir, cells)
}

// listText is a comma list's values as typed: 1,2,4.
func listText(values []any) string {
	s := make([]string, len(values))
	for i, v := range values {
		s[i] = fmt.Sprint(v)
	}
	return strings.Join(s, ",")
}

// fixedSchedule says why p's run replays its dataset's fixed schedule, as
// the run decides it (bench.Timestamped), "" when it does not. A file that
// cannot be read is left to the run to report.
func fixedSchedule(p plan.Profile) string {
	if p.FixedSchedule {
		return "--fixed-schedule"
	}
	if ok, _ := bench.Timestamped(p); ok {
		return fmt.Sprintf("the records of %s carry timestamps, which auto-promotes the run to a fixed schedule", p.InputFile)
	}
	return ""
}

// loadParams are the leaf names of a config file's sweep parameters that
// shape the load, which a fixed schedule ignores.
var loadParams = []string{"concurrency", "rate", "requests", "request_count", "duration", "sessions", "users",
	"smoothness", "request_rate", "benchmark_duration", "num_users", "conversation_num", "num_sessions"}

// checkYAMLSchedule refuses a config file's sweep of load parameters whose
// cells replay an auto-promoted trace: each cell would run the same
// schedule. (AIPerf promotes only from the command line; here the run
// promotes a config file's trace too, so its sweep would be void.)
func checkYAMLSchedule(cells []plan.Cell) error {
	for _, cell := range cells {
		for _, prm := range cell.Params {
			leaf := prm.Name[strings.LastIndex(prm.Name, ".")+1:]
			if !slices.Contains(loadParams, leaf) || cell.Profile.FixedSchedule {
				continue
			}
			if why := fixedSchedule(cell.Profile); why != "" {
				return fmt.Errorf("sweep.parameters.%s: a sweep of the load cannot run against a fixed schedule (%s): "+
					"every cell would replay the same trace; sweep other parameters, or pass --no-fixed-schedule "+
					"to run the phases as written and ignore the timestamps", prm.Name, why)
			}
		}
	}
	return nil
}

// runCells runs cells as one sweep of c.NumProfileRuns trials each, in
// AIPerf's layout (see parameterSweep); every cell is checked first.
func (c *ProfileCmd) runCells(ctx context.Context, g *Globals, spec runner.Spec, dir string, cells []plan.Cell) error {
	name := cmp.Or(c.Name, "profile")
	if err := checkCells(cells, c.where); err != nil {
		return usageErr(err)
	}
	cooldown := c.ParameterSweepCooldown
	sw := plan.Sweep{Name: name, Cells: cells, Trials: c.NumProfileRuns, CooldownSeconds: c.ProfileRunCooldownSeconds,
		CellCooldownSeconds: &cooldown, Order: c.ParameterSweepMode, WarmupFirstTrialOnly: c.warmupOnce,
		VarySeedPerTrial: c.varySeed, Convergence: c.converge}
	o := sweepOptions{
		artifactDir: dir, confidence: c.ConfidenceLevel, ui: c.UI, name: c.Name, overwrite: true, workers: c.Workers,
		quietTrials: c.NoSweepTable, resume: c.Resume,
		workerArgs: c.WorkerDeadlines.args(),
		script:     "(aiperf profile with comma lists)",
		cliCommand: redactedCommand(g.Args, spec.Profile.URL, spec.Profile.Redactor()),
	}
	o.trialDir, o.cellDir = runLayout(dir, sw, true) // what aiperf config expand prints
	o.sweepAggregateDir = sweepAggregateDir(dir, sw)
	return runSweep(ctx, g, sw, o)
}

// yamlCells are the cells of a config file's sweep: section (none without
// one), each variation passed through overlay; a cell's seed is the file's
// plus its position unless sameSeed.
func yamlCells(file *config.File, name string, sameSeed bool, overlay func(*plan.Profile) error) ([]plan.Cell, error) {
	if file.Sweep == nil {
		return nil, nil
	}
	cells := make([]plan.Cell, len(file.Sweep.Variations))
	labels := make([][]plan.Param, len(cells))
	for i, v := range file.Sweep.Variations {
		if err := overlay(&v.Profile); err != nil {
			return nil, err
		}
		if !sameSeed {
			v.Profile.RandomSeed += int64(i)
		}
		cells[i] = plan.Cell{ID: plan.CellID(name, v.Params), Index: i, Params: v.Params, Profile: v.Profile}
		labels[i] = leafNames(v.Params)
	}
	for i, l := range plan.CellLabels(labels) {
		cells[i].Label = l
		if file.Sweep.Type == "scenarios" { // the scenario's name, as AIPerf's directories (and aiperf sweep's)
			cells[i].Label = plan.DirName(fmt.Sprint(cells[i].Params[0].Value))
		}
	}
	return cells, nil
}

// checkCells readies every cell's profile (a grace period of inf) and
// checks it as a single profile is, naming the cell in each problem and,
// where where names it (a config file's line and key; nil: none), the
// field as the cell's source sets it.
func checkCells(cells []plan.Cell, where func(cell int, field string) string) error {
	var errs []error
	for i := range cells {
		cells[i].Profile.WaitForAll()
		cells[i].Profile.SageMakerDefaults()
		for _, fe := range plan.FieldErrors(placeFields(cells[i].Profile.Check(), i, where)) {
			errs = append(errs, &plan.FieldError{Field: fe.Field, Where: fe.Where, Msg: fe.Msg + " (cell " + cells[i].Label + ")"})
		}
	}
	return errors.Join(errs...)
}

// placeFields renames each field problem of err that where names for cell
// (a config file's "FILE:LINE: PATH"); err is a join of *plan.FieldError,
// as Profile.Check returns.
func placeFields(err error, cell int, where func(cell int, field string) string) error {
	if err == nil || where == nil {
		return err
	}
	var errs []error
	for _, fe := range plan.FieldErrors(err) {
		if w := where(cell, fe.Field); w != "" {
			fe = &plan.FieldError{Field: fe.Field, Where: w, Msg: fe.Msg}
		}
		errs = append(errs, fe)
	}
	return errors.Join(errs...)
}

// leafNames names each parameter by the last part of its path, as AIPerf's
// directories do (datasets.default.prompts.isl: isl_512), unless two would
// then share a name.
func leafNames(params []plan.Param) []plan.Param {
	out := make([]plan.Param, len(params))
	seen := map[string]bool{}
	for i, p := range params {
		leaf := p.Name[strings.LastIndex(p.Name, ".")+1:]
		if seen[leaf] {
			return params
		}
		seen[leaf] = true
		out[i] = plan.Param{Name: leaf, Value: p.Value}
	}
	return out
}
