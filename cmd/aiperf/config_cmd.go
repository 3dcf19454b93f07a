package main

import (
	"cmp"
	"errors"
	"fmt"

	"github.com/aiperf-go/aiperf/internal/config"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// ConfigCmd is `aiperf config`: AIPerf's YAML helpers.
type ConfigCmd struct {
	Validate ConfigValidateCmd `cmd:"" help:"Check a YAML config file, its sweep and multi_run included; sends nothing."`
	Expand   ConfigExpandCmd   `cmd:"" help:"Print every cell and trial a YAML config file declares (as aiperf plan); sends nothing."`
}

// configFile names the file, positionally or as AIPerf's --config-file.
type configFile struct {
	File       string `arg:"" optional:"" type:"existingfile" help:"The YAML config file."`
	ConfigFile string `name:"config-file" type:"existingfile" help:"The YAML config file (AIPerf's spelling)."`
}

// load reads the file and its cells, each checked as aiperf profile
// would before sending anything.
func (f configFile) load() (*config.File, plan.Sweep, error) {
	path := cmp.Or(f.File, f.ConfigFile)
	if path == "" {
		return nil, plan.Sweep{}, usageErr(errors.New("name the config file: aiperf config validate FILE"))
	}
	file, err := config.Load(path)
	if err != nil {
		return nil, plan.Sweep{}, usageErr(err)
	}
	name := "profile"
	cells, err := yamlCells(file, name, false, func(*plan.Profile) error { return nil })
	if err != nil {
		return nil, plan.Sweep{}, usageErr(err)
	}
	if len(cells) == 0 {
		cells = []plan.Cell{{ID: plan.CellID(name, nil), Label: "base", Profile: file.Profile}}
	}
	err = checkCells(cells)
	sw := plan.Sweep{Name: name, Source: path, Cells: cells, Trials: max(1, file.MultiRun.NumRuns), Order: plan.OrderRepeated,
		CooldownSeconds: file.MultiRun.CooldownSeconds}
	if err != nil {
		return nil, sw, usageErr(err)
	}
	return file, sw, nil
}

// ConfigValidateCmd is `aiperf config validate FILE`.
type ConfigValidateCmd struct {
	configFile `embed:""`
}

// Run checks the file and says what it declares.
func (c *ConfigValidateCmd) Run(g *Globals) error {
	_, sw, err := c.load()
	if err != nil {
		return err
	}
	fmt.Fprintf(g.Stdout, "%s is valid: %s × %s\n", sw.Source, plural(len(sw.Cells), "cell"), plural(sw.Trials, "trial"))
	return nil
}

// ConfigExpandCmd is `aiperf config expand FILE`.
type ConfigExpandCmd struct {
	configFile `embed:""`
	Format     string `name:"format" short:"f" enum:"table,json" default:"table" help:"Output: table or json."`
}

// Run prints every trial.
func (c *ConfigExpandCmd) Run(g *Globals) error {
	_, sw, err := c.load()
	if err != nil {
		return err
	}
	return printPlan(g, []plan.Sweep{sw}, nil, c.Format, "aiperf profile --config FILE runs them.", 0)
}
