package main

import (
	"cmp"
	"fmt"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/aiperf-go/aiperf/internal/config"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/report"
	"github.com/aiperf-go/aiperf/internal/search"
	"github.com/aiperf-go/aiperf/runner"
)

// ConfigCmd is `aiperf config`: AIPerf's YAML helpers.
type ConfigCmd struct {
	Init     ConfigInitCmd     `cmd:"" help:"Write a commented starter config file from a bundled template (--list shows them)."`
	Validate ConfigValidateCmd `cmd:"" help:"Check a YAML config file, its sweep and multi_run included; sends nothing."`
	Expand   ConfigExpandCmd   `cmd:"" help:"Print every variation and trial a YAML config file declares (as aiperf plan); sends nothing."`
	Migrate  ConfigMigrateCmd  `cmd:"" help:"Rewrite a config file in an older AIPerf shape (flat, sweep.variables) in the current schema 2.0."`
}

// configFile names the file, positionally or as AIPerf's --config-file.
type configFile struct {
	File       string `arg:"" optional:"" type:"existingfile" help:"The YAML config file."`
	ConfigFile string `name:"config-file" type:"existingfile" help:"The YAML config file (AIPerf's spelling)."`
}

// path is the file named, or a usage error.
func (f configFile) path(cmd string) (string, error) {
	if p := cmp.Or(f.File, f.ConfigFile); p != "" {
		return p, nil
	}
	return "", usageErr(fmt.Errorf("name the config file: aiperf config %s FILE", cmd))
}

// load reads the file and its cells, each checked as aiperf profile
// would before sending anything; what the reader noted goes to stderr.
func (f configFile) load(g *Globals, cmd string) (*config.File, plan.Sweep, error) {
	path, err := f.path(cmd)
	if err != nil {
		return nil, plan.Sweep{}, err
	}
	file, err := config.Load(path)
	if err != nil {
		return nil, plan.Sweep{}, usageErr(err)
	}
	for _, n := range file.Notes {
		fmt.Fprintln(g.Stderr, "note: "+n)
	}
	name := "profile"
	if _, _, err := configSearch(file, name); err != nil {
		return nil, plan.Sweep{}, usageErr(err)
	}
	sameSeed := file.Sweep != nil && file.Sweep.SameSeed != nil && *file.Sweep.SameSeed
	cells, err := yamlCells(file, name, sameSeed, func(*plan.Profile) error { return nil })
	if err != nil {
		return nil, plan.Sweep{}, usageErr(err)
	}
	if len(cells) == 0 {
		cells = []plan.Cell{{ID: plan.CellID(name, nil), Label: "base", Profile: file.Profile}}
	}
	err = checkCells(cells, file.Where)
	sw := plan.Sweep{Name: name, Source: path, Cells: cells, Trials: max(1, file.MultiRun.NumRuns), Order: plan.OrderRepeated,
		CooldownSeconds: file.MultiRun.CooldownSeconds, WarmupFirstTrialOnly: file.MultiRun.WarmupFirstTrialOnly,
		VarySeedPerTrial: file.MultiRun.VarySeedPerTrial}
	if s := file.Sweep; s != nil {
		sw.Order = cmp.Or(s.IterationOrder, sw.Order)
		sw.CellCooldownSeconds = s.CooldownSeconds
	}
	if err != nil {
		return nil, sw, usageErr(err)
	}
	if cv := file.MultiRun.Convergence; cv != nil && file.Search == nil {
		a := SearchArgs{ConvergenceMetric: cv.Metric, ConvergenceStat: cv.Stat, ConvergenceMode: cv.Mode, ConvergenceThreshold: cv.Threshold}
		if sw.Convergence, err = a.multiRunConvergence(sw.Trials); err == nil {
			err = sw.CheckConvergence()
		}
		if err != nil {
			return nil, sw, usageErr(fmt.Errorf("%s: multi_run.convergence (as the flag): %w", path, err))
		}
	}
	return file, sw, nil
}

// stopsWhen says when a sweep's cells stop adding trials ("" without a
// convergence criterion).
func stopsWhen(sw plan.Sweep) string {
	if sw.Convergence == nil {
		return ""
	}
	if sw.Trials <= 3 {
		return fmt.Sprintf("; convergence (%s) is judged once %d trials ended, so it can stop none of %d", sw.Convergence.Describe(),
			min(3, sw.Trials), sw.Trials)
	}
	return fmt.Sprintf("; each cell stops adding trials once %s, after at least %d", sw.Convergence.Describe(), min(3, sw.Trials))
}

// ConfigValidateCmd is `aiperf config validate FILE`.
type ConfigValidateCmd struct {
	configFile `embed:""`
}

// Run checks the file and says what it declares, in which schema.
func (c *ConfigValidateCmd) Run(g *Globals) error {
	file, sw, err := c.load(g, "validate")
	if err != nil {
		return err
	}
	if s, ok, _ := configSearch(file, sw.Name); ok {
		fmt.Fprintf(g.Stdout, "%s is valid: an adaptive search (%s) × %s\n", sw.Source, s.Describe(), plural(sw.Trials, "trial"))
	} else {
		fmt.Fprintf(g.Stdout, "%s is valid: %s × %s%s\n", sw.Source, plural(len(sw.Cells), "cell"), plural(sw.Trials, "trial"), stopsWhen(sw))
	}
	fmt.Fprintf(g.Stdout, "read as %s\n", file.Schema)
	return nil
}

// ConfigExpandCmd is `aiperf config expand FILE`.
type ConfigExpandCmd struct {
	configFile `embed:""`
	Full       bool   `name:"full" short:"F" negatable:"" help:"Also print each variation's benchmark: body as merged (secrets redacted)."`
	Index      *int   `name:"index" short:"i" placeholder:"N" help:"Only the variation at this zero-based index (implies --full)."`
	Format     string `name:"format" short:"f" enum:"text,table,yaml,json" default:"text" help:"Output: text (a table; table is the same), yaml or json (default ${default})."`
}

// Run prints every trial, or the variations with their bodies.
func (c *ConfigExpandCmd) Run(g *Globals) error {
	file, sw, err := c.load(g, "expand")
	if err != nil {
		return err
	}
	vars := variations(file, sw)
	dir := runDir(file, sw) // before --index: the base directory names every cell's load
	if c.Index != nil {
		i := *c.Index
		if i < 0 || i >= len(vars) {
			return usageErr(fmt.Errorf("--index %d: the file declares %s (indexes 0 to %d)", i, plural(len(vars), "variation"), len(vars)-1))
		}
		vars, c.Full = vars[i:i+1], true
		sw.Cells = []plan.Cell{sw.Cells[i]}
	}
	switch c.Format {
	case "yaml", "json":
		return c.printStructured(g, file, sw, vars, dir)
	}
	if s, ok, _ := configSearch(file, sw.Name); ok {
		fmt.Fprintf(g.Stdout, "an adaptive search: %s; its probes are chosen as it runs, each of %s; nothing was sent. "+
			"aiperf profile --config FILE runs it, into %s (a probe's trial in %s, ...).\n", s.Describe(), plural(sw.Trials, "trial"),
			dir, filepath.Join(dir, search.TrialDir(0, 1)))
	} else {
		printTrials(g, sw, dir, file.Sweep != nil)
	}
	fmt.Fprintf(g.Stdout, "read as %s\n", file.Schema)
	if !c.Full {
		return nil
	}
	for _, v := range vars {
		fmt.Fprintf(g.Stdout, "\nvariation %d (%s)%s:\n", v.Index, v.Label, paramText(v.Params))
		fmt.Fprint(g.Stdout, indent(v.body, "  "))
	}
	return nil
}

// runDir is where aiperf profile --config FILE, without flags, writes:
// the file's artifacts.dir, else the run's default for the file's search
// or sweep (ProfileCmd.defaultDir, the run's own code).
func runDir(file *config.File, sw plan.Sweep) string {
	if file.ArtifactDir != "" {
		return file.ArtifactDir
	}
	run := ProfileCmd{NumProfileRuns: sw.Trials, ConfidenceLevel: cmp.Or(file.MultiRun.ConfidenceLevel, 0.95),
		ProfileRunCooldownSeconds: file.MultiRun.CooldownSeconds}
	run.SearchArgs.fromConfig(file.Search, nil)
	if file.Sweep != nil {
		run.yamlCells = sw.Cells
	}
	return run.defaultDir(&Globals{}, runner.Spec{Profile: file.Profile})
}

// printTrials prints every trial as aiperf plan does, in the directory
// aiperf profile --config FILE writes it to (runLayout under dir, the
// run's own code; swept: the file declares a sweep), then where each
// cell's aggregate goes; both relative to dir, which the first line names.
func printTrials(g *Globals, sw plan.Sweep, dir string, swept bool) {
	trialDir, cellDir := runLayout(dir, sw, swept)
	under := func(path string) string {
		if rel, err := filepath.Rel(dir, path); err == nil {
			return rel
		}
		return path
	}
	fmt.Fprintf(g.Stdout, "sweep %q (%s): %s × %s, into %s\n", sw.Name, sw.Source, plural(len(sw.Cells), "cell"),
		plural(max(1, sw.Trials), "trial"), dir)
	trials := sw.TrialList()
	rows := make([][]string, len(trials))
	for i, t := range trials {
		p := t.Cell.Profile
		rows[i] = []string{fmt.Sprint(i + 1), under(trialDir(t)), t.Cell.ID, describeLoad(p), fmt.Sprint(p.RandomSeed), hooksOf(p.Redacted())}
	}
	report.Table(g.Stdout, []string{"#", "directory", "id", "load", "seed", "hooks"}, rows, "rlllrl")
	if cellDir != nil {
		rows = rows[:0]
		for _, cell := range sw.Cells {
			rows = append(rows, []string{cell.Label, under(cellDir(cell))})
		}
		report.Table(g.Stdout, []string{"cell", "aggregate directory"}, rows, "ll")
	}
	fmt.Fprintf(g.Stdout, "%s in total%s; nothing was sent. aiperf profile --config FILE runs them.\n", plural(len(trials), "trial"), stopsWhen(sw))
}

// variation is one variation of a file, for expand: its body as YAML with
// the variation's secrets redacted.
type variation struct {
	Index  int          `json:"index" yaml:"index"`
	Label  string       `json:"label" yaml:"label"`
	Params []plan.Param `json:"parameters,omitempty" yaml:"-"`
	body   string
}

// variations pairs the file's variations (its base alone without a
// sweep) with their cells.
func variations(file *config.File, sw plan.Sweep) []variation {
	bodies := []*yaml.Node{file.Body}
	if file.Sweep != nil {
		bodies = bodies[:0]
		for _, v := range file.Sweep.Variations {
			bodies = append(bodies, v.Body)
		}
	}
	out := make([]variation, len(sw.Cells))
	for i, c := range sw.Cells {
		out[i] = variation{Index: c.Index, Label: c.Label, Params: c.Params, body: redactedYAML(bodies[i], c.Profile)}
	}
	return out
}

// redactedYAML is body as YAML text with p's secrets replaced.
func redactedYAML(body *yaml.Node, p plan.Profile) string {
	if body == nil {
		return "{}\n"
	}
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(body); err != nil {
		return fmt.Sprintf("# cannot print the body: %v\n", err)
	}
	return p.Redactor().Redact(b.String())
}

// printStructured prints the variations as one YAML or JSON document, each
// with the directories its trials and aggregate go to (runLayout under
// dir; none for a search, whose probes are chosen as it runs).
func (c *ConfigExpandCmd) printStructured(g *Globals, file *config.File, sw plan.Sweep, vars []variation, dir string) error {
	type out struct {
		Index        int            `json:"index" yaml:"index"`
		Label        string         `json:"label" yaml:"label"`
		Parameters   map[string]any `json:"parameters,omitempty" yaml:"parameters,omitempty"`
		Trials       int            `json:"trials" yaml:"trials"`
		TrialDirs    []string       `json:"trial_dirs,omitempty" yaml:"trial_dirs,omitempty"`
		AggregateDir string         `json:"aggregate_dir,omitempty" yaml:"aggregate_dir,omitempty"`
		Benchmark    any            `json:"benchmark,omitempty" yaml:"benchmark,omitempty"`
	}
	trialDir, cellDir := runLayout(dir, sw, file.Sweep != nil)
	if _, searching, _ := configSearch(file, sw.Name); searching {
		trialDir, cellDir = nil, nil
	}
	doc := struct {
		Schema     string `json:"schema" yaml:"schema"`
		Source     string `json:"source" yaml:"source"`
		Variations []out  `json:"variations" yaml:"variations"`
	}{Schema: file.Schema.String(), Source: sw.Source}
	for i, v := range vars {
		o := out{Index: v.Index, Label: v.Label, Trials: max(1, sw.Trials)}
		for n := 1; trialDir != nil && n <= o.Trials; n++ {
			o.TrialDirs = append(o.TrialDirs, trialDir(plan.Trial{Sweep: sw.Name, Cell: sw.Cells[i], Number: n}))
		}
		if cellDir != nil {
			o.AggregateDir = cellDir(sw.Cells[i])
		}
		if len(v.Params) > 0 {
			o.Parameters = map[string]any{}
			for _, p := range v.Params {
				o.Parameters[p.Name] = p.Value
			}
		}
		if c.Full {
			var body any
			if err := yaml.Unmarshal([]byte(v.body), &body); err != nil {
				return fmt.Errorf("re-read variation %d's body: %w", v.Index, err)
			}
			o.Benchmark = body
		}
		doc.Variations = append(doc.Variations, o)
	}
	if c.Format == "json" {
		return report.JSON(g.Stdout, doc)
	}
	b, err := yaml.Marshal(doc)
	if err != nil {
		return fmt.Errorf("write the variations as YAML: %w", err)
	}
	_, err = g.Stdout.Write(b)
	return err
}

// paramText is " concurrency=8, isl=512", or "" without parameters.
func paramText(params []plan.Param) string {
	if len(params) == 0 {
		return ""
	}
	parts := make([]string, len(params))
	for i, p := range params {
		parts[i] = fmt.Sprintf("%s=%v", p.Name, p.Value)
	}
	return ": " + strings.Join(parts, ", ")
}

func indent(text, prefix string) string {
	lines := strings.SplitAfter(text, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "")
}
