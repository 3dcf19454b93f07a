package main

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/aiperf-go/aiperf/internal/bench"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/report"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/starter"
	"github.com/aiperf-go/aiperf/runner"
)

// writeExports writes the run's exports into dir, or, when that fails, into
// a new temporary directory, so a run that sent traffic always leaves them
// somewhere; it returns their paths and directory.
func writeExports(dir string, run *result.Run) ([]string, string, error) {
	paths, err := report.WriteAll(dir, run)
	if err == nil {
		return paths, dir, nil
	}
	err = fmt.Errorf("write exports to %s: %w", dir, err)
	tmp, tmpErr := os.MkdirTemp("", "aiperf-run-")
	if tmpErr == nil {
		var p []string
		if p, tmpErr = report.WriteAll(tmp, run); tmpErr == nil {
			return p, tmp, fmt.Errorf("%w; wrote them to %s instead", err, tmp)
		}
	}
	return nil, "", fmt.Errorf("%w; nor to a temporary directory: %w", err, tmpErr)
}

// cliCommand is the command line a run exports: the user's, which a trial
// child gets from its parent, else this process's; secrets redacted.
func cliCommand(args []string, spec runner.Spec, redact *plan.Redactor) string {
	if spec.CLICommand != "" {
		return redact.Redact(spec.CLICommand)
	}
	return redactedCommand(args, spec.Profile.URL, redact)
}

// defaultArtifactDir follows AIPerf: artifacts/<model>-openai-<endpoint>-<stimulus>,
// and ends with -<name> for a run given a --name (ours), so that two runs
// labelled apart (before, after) keep their exports apart.
func defaultArtifactDir(p plan.Profile, name string) string {
	return withRunName(aiperfArtifactDir(p, joinStimulus(stimulusParts(p))), name)
}

// withRunName is dir ending with -<name> for a run given a --name.
func withRunName(dir, name string) string {
	if name != "" {
		dir += "-" + strings.NewReplacer("/", "_", ":", "_", string(filepath.Separator), "_").Replace(name)
	}
	return dir
}

// aiperfArtifactDir is AIPerf's default: artifacts/<model>-openai-<endpoint>-<stimulus>,
// the model the first of -m with _multi when there are several
// (UserConfig._get_artifact_model_name).
func aiperfArtifactDir(p plan.Profile, stim string) string {
	model := p.Model[0]
	if len(p.Model) > 1 {
		model += "_multi"
	}
	model = strings.NewReplacer("/", "_", ":", "_").Replace(model)
	return filepath.Join("artifacts", fmt.Sprintf("%s-openai-%s-%s", model, p.EndpointType, stim))
}

// stimPart is one part of a load's name: concurrency and 8 for concurrency8.
type stimPart struct{ name, value string }

// joinStimulus is the parts as AIPerf joins them: concurrency16-request_rate2.5.
func joinStimulus(parts []stimPart) string {
	out := make([]string, len(parts))
	for i, part := range parts {
		out[i] = part.name + part.value
	}
	return strings.Join(out, "-")
}

// stimulusParts name p's load (stimulus); with YAML phases, the load of
// each profiling phase (phaseStimulus), so that two files with different
// loads do not share a directory.
func stimulusParts(p plan.Profile) []stimPart {
	if len(p.Phases) == 0 {
		return stimulus(p)
	}
	fixed, _ := bench.Timestamped(p) // a trace's profiling phases replay its schedule (bench's phasesOf)
	var phases []stimPart
	for _, ph := range p.Phases {
		if ph.Kind == plan.KindProfiling {
			phases = append(phases, phaseStimulus(ph, fixed)...)
		}
	}
	if len(phases) > 0 {
		return phases
	}
	return stimulus(p)
}

// phaseStimulus names a profiling phase's load as stimulus names the same
// load given by flags: fixed_schedule for a replayed trace (fixed: the
// dataset's timestamps set the pace), user_centric-users<N>-qps<Q>,
// concurrency<C>-request_rate<R> (the cap when given), else concurrency<C>,
// the rates written as Python writes a float (10.0).
func phaseStimulus(ph plan.Phase, fixed bool) []stimPart {
	switch {
	case ph.Fixed || fixed:
		return []stimPart{{name: "fixed_schedule"}}
	case ph.Users > 0:
		return []stimPart{{name: "user_centric"}, {"users", fmt.Sprint(ph.Users)}, {"qps", pyFloat(ph.Rate)}}
	case ph.Rate > 0 && ph.Concurrency > 0:
		return []stimPart{{"concurrency", fmt.Sprint(ph.Concurrency)}, {"request_rate", pyFloat(ph.Rate)}}
	case ph.Rate > 0:
		return []stimPart{{"request_rate", pyFloat(ph.Rate)}}
	}
	return []stimPart{{"concurrency", fmt.Sprint(max(ph.Concurrency, 1))}}
}

// stimulus names p's load as AIPerf's UserConfig._get_artifact_stimulus
// does: fixed_schedule for a trace replayed on its timestamps,
// user_centric-users<N>-qps<Q>, else concurrency<C> and request_rate<R>
// (each when given, joined by "-"; concurrency1 when neither is), the
// rates written as Python writes a float (200.0, 2.5).
func stimulus(p plan.Profile) []stimPart {
	if fixed, _ := bench.Timestamped(p); p.FixedSchedule || fixed {
		return []stimPart{{name: "fixed_schedule"}}
	}
	if p.UserCentricRate != nil {
		parts := []stimPart{{name: "user_centric"}}
		if p.NumUsers != nil {
			parts = append(parts, stimPart{"users", fmt.Sprint(*p.NumUsers)})
		}
		return append(parts, stimPart{"qps", pyFloat(*p.UserCentricRate)})
	}
	var parts []stimPart
	if p.Concurrency != nil {
		parts = append(parts, stimPart{"concurrency", fmt.Sprint(*p.Concurrency)})
	}
	if p.RequestRate != nil {
		parts = append(parts, stimPart{"request_rate", pyFloat(*p.RequestRate)})
	}
	if len(parts) == 0 {
		return []stimPart{{"concurrency", "1"}}
	}
	return parts
}

// pyFloat writes f as Python's repr of a float: 200.0, 2.5, 1e-05, 1e+16.
func pyFloat(f float64) string {
	if a := math.Abs(f); a != 0 && (a < 1e-4 || a >= 1e16) {
		return strconv.FormatFloat(f, 'e', -1, 64)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

// redactedCommand is "aiperf " + args with every secret redacted: the API
// key, secret header values and URL credentials. Matching the values rather
// than the flags catches every spelling (--api-key=K, -HName:V, -vH Name:V,
// --url=http://user:pw@host, ...); a URL's userinfo is also replaced as
// written, so no escaping of the password (p%61ss for pass) lets it through.
// Each argument is one shell word (quoted when it must be, as AIPerf quotes
// its values: --api-key '<redacted>'), so the command runs again as given.
func redactedCommand(args []string, urls []string, redact *plan.Redactor) string {
	out := make([]string, len(args))
	for i, a := range args {
		for _, raw := range urls {
			if red := plan.RedactURL(raw); red != raw {
				a = strings.ReplaceAll(a, raw, red)
			}
		}
		out[i] = starter.ShellQuote(redact.Redact(a))
	}
	return "aiperf " + strings.Join(out, " ")
}

// maxSweepValues is how many values of a swept part its name lists; a
// longer sweep is named by its first and last values and its count, which
// keeps the directory's name within what a file system takes.
const maxSweepValues = 12

// cellsStimulus names the load of cells run as one sweep (word "sweep") or
// the corner probes of one search (word "search"): the cells' common name
// when they share one; else, for each part that differs, AIPerf's name of
// a swept --concurrency list, concurrency_sweep_1_2_4
// (UserConfig._get_artifact_stimulus), the values in the cells' order, and
// ours for the other parts (request_rate_sweep_10.0_20.0), a search's
// bounds (concurrency_search_1_1000) and a long sweep
// (concurrency_sweep_1_to_64_20_values); <word>_mixed_loads when the cells'
// loads differ in kind (a scenario at a rate, another at a concurrency).
func cellsStimulus(cells []plan.Cell, word string) string {
	all := make([][]stimPart, len(cells))
	for i := range cells {
		all[i] = stimulusParts(cells[i].Profile)
	}
	out := slices.Clone(all[0])
	for k, part := range out {
		var values []string
		for _, parts := range all {
			if len(parts) != len(out) || parts[k].name != part.name {
				return word + "_mixed_loads"
			}
			if !slices.Contains(values, parts[k].value) {
				values = append(values, parts[k].value)
			}
		}
		switch {
		case len(values) > maxSweepValues:
			out[k].value = fmt.Sprintf("_%s_%s_to_%s_%d_values", word, values[0], values[len(values)-1], len(values))
		case len(values) > 1:
			out[k].value = "_" + word + "_" + strings.Join(values, "_")
		}
	}
	return joinStimulus(out)
}

// cellsArtifactDir is the default artifact directory of a run of cells
// (defaultArtifactDir's for base and name), its load named by
// cellsStimulus: not one cell's concurrency for a sweep that runs several.
func cellsArtifactDir(base plan.Profile, name string, cells []plan.Cell, word string) string {
	if len(cells) == 0 {
		return defaultArtifactDir(base, name)
	}
	return withRunName(aiperfArtifactDir(base, cellsStimulus(cells, word)), name)
}

// defaultDir is the run's artifact directory when neither --artifact-dir
// nor the config file's artifacts.dir names one (defaultArtifactDir): for a
// run of several cells, in the order Run picks its mode, a search's (named
// by its corner probes), a comma-list sweep's or a config file's sweep:'s
// (cellsArtifactDir). A search or list the run will refuse is named as a
// single cell: the run stops before writing anything.
func (c *ProfileCmd) defaultDir(g *Globals, spec runner.Spec) string {
	if c.SearchArgs.searching() {
		s, ok, err := c.SearchArgs.Search(searchInput{name: cmp.Or(c.Name, c.SearchRecipe, "search"), base: spec.Profile,
			trials: c.NumProfileRuns, confidence: c.ConfidenceLevel, lists: g.sweepLists, cooldown: c.ProfileRunCooldownSeconds})
		if ok && err == nil {
			if corners, err := s.Corners(); err == nil {
				return cellsArtifactDir(spec.Profile, spec.Name, corners, "search")
			}
		}
		return defaultArtifactDir(spec.Profile, spec.Name)
	}
	if len(g.sweepLists) > 0 {
		cells, err := sweepCells(cmp.Or(c.Name, "profile"), spec.Profile, g.sweepLists, c.SweepType == "zip", true)
		if err == nil {
			return cellsArtifactDir(spec.Profile, spec.Name, cells, "sweep")
		}
	}
	return cellsArtifactDir(spec.Profile, spec.Name, c.yamlCells, "sweep")
}

// runLayout places a run's trials (trialDir) and each cell's aggregate
// (cellDir, nil: none) under dir, in AIPerf's layout (the "artifact
// directory layout reference" of its sweep and multi-run docs;
// orchestrator._resolve_artifact_dir):
//
//	one cell, one trial        dir/
//	one cell, N trials         dir/profile_runs/run_NNNN/, dir/aggregate/
//	a sweep, one trial         dir/<cell>/
//	a sweep, N trials          dir/profile_runs/trial_NNNN/<cell>/ (repeated) or
//	                           dir/<cell>/profile_runs/trial_NNNN/ (independent)
//
// A sweep's (swept: comma lists, a config file's sweep:) per-cell
// aggregates go to dir/aggregate/<cell>/ in repeated order and
// dir/<cell>/aggregate/ in independent order. aiperf profile places its
// trials with it and aiperf config expand prints them with it.
func runLayout(dir string, sw plan.Sweep, swept bool) (trialDir func(plan.Trial) string, cellDir func(plan.Cell) string) {
	repeated := sw.Order == plan.OrderRepeated
	switch {
	case !swept && sw.Trials <= 1:
		return func(plan.Trial) string { return dir }, nil
	case !swept:
		return func(t plan.Trial) string { return filepath.Join(dir, "profile_runs", result.RunLabel(t.Number)) },
			func(plan.Cell) string { return filepath.Join(dir, "aggregate") }
	}
	trialDir = func(t plan.Trial) string {
		cell := plan.DirName(t.Cell.Label)
		switch {
		case sw.Trials <= 1:
			return filepath.Join(dir, cell)
		case repeated:
			return filepath.Join(dir, "profile_runs", fmt.Sprintf("trial_%04d", t.Number), cell)
		}
		return filepath.Join(dir, cell, "profile_runs", fmt.Sprintf("trial_%04d", t.Number))
	}
	cellDir = func(c plan.Cell) string {
		if repeated {
			return filepath.Join(dir, "aggregate", plan.DirName(c.Label))
		}
		return filepath.Join(dir, plan.DirName(c.Label), "aggregate")
	}
	return trialDir, cellDir
}

// sweepAggregateDir is where a sweep run in AIPerf's layout (runLayout's
// swept) writes AIPerf's sweep aggregate (runner.SweepFile and
// runner.SweepCSVFile), as its _sweep_aggregate_dir: dir/aggregate/sweep_aggregate/
// with several trials in repeated order, beside the cells' aggregates;
// else dir/sweep_aggregate/.
func sweepAggregateDir(dir string, sw plan.Sweep) string {
	if sw.Trials > 1 && sw.Order == plan.OrderRepeated {
		return filepath.Join(dir, "aggregate", runner.AggregateDir)
	}
	return filepath.Join(dir, runner.AggregateDir)
}
