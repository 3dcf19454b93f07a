package main

import (
	"cmp"
	"slices"

	"github.com/alecthomas/kong"

	"github.com/aiperf-go/aiperf/internal/config"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/runner"
)

// fromConfig is spec from --config FILE: the file's profile (its sweep's
// cells in c.yamlCells) with the flags given explicitly overlaid, and the
// file's multi_run: and sweep: settings where no flag says otherwise.
func (c *ProfileCmd) fromConfig(kctx *kong.Context, spec runner.Spec) (runner.Spec, error) {
	file, err := config.Load(c.Config)
	if err != nil {
		return spec, err
	}
	spec.Profile = file.Profile
	flags := explicitFlags(kctx)
	if err := spec.Profile.Overlay(&c.Profile, flags); err != nil {
		return spec, err
	}
	if c.ArtifactDir == "" {
		c.ArtifactDir = file.ArtifactDir
	}
	if m := file.MultiRun; m.NumRuns > 0 && !slices.Contains(flags, "num_profile_runs") {
		c.NumProfileRuns, c.ProfileRunCooldownSeconds = m.NumRuns, m.CooldownSeconds
		if m.ConfidenceLevel > 0 {
			c.ConfidenceLevel = m.ConfidenceLevel
		}
		c.warmupOnce, c.varySeed, c.yamlMultiRun = m.WarmupFirstTrialOnly, m.VarySeedPerTrial, true
	}
	if cv := file.MultiRun.Convergence; cv != nil { // each --convergence-* flag given beats its key
		a, given := &c.SearchArgs, func(flag string) bool { return slices.Contains(flags, flag) }
		if !given("convergence_metric") {
			a.ConvergenceMetric = cv.Metric
		}
		if !given("convergence_stat") {
			a.ConvergenceStat = cv.Stat
		}
		if !given("convergence_mode") {
			a.ConvergenceMode = cv.Mode
		}
		if !given("convergence_threshold") {
			a.ConvergenceThreshold = cv.Threshold
		}
	}
	c.yamlNotes = file.Notes
	if file.Runtime.UI != "" && !slices.Contains(flags, "ui") { // runtime.ui: --ui
		c.UI = file.Runtime.UI
	}
	if file.Runtime.WorkersMax > 0 && !slices.Contains(flags, "workers_max") { // runtime.workers: --workers-max
		c.WorkersMax, c.capFrom = file.Runtime.WorkersMax, "runtime.workers in "+c.Config
	}
	c.SearchArgs.fromConfig(file.Search, flags)
	if s := file.Search; s != nil && s.CooldownSeconds != nil && !slices.Contains(flags, "profile_run_cooldown_seconds") {
		c.ProfileRunCooldownSeconds = max(c.ProfileRunCooldownSeconds, *s.CooldownSeconds) // one pause between probes' trials
	}
	if s := file.Sweep; s != nil {
		if s.CooldownSeconds != nil && !slices.Contains(flags, "parameter_sweep_cooldown_seconds") {
			c.ParameterSweepCooldown = *s.CooldownSeconds
		}
		if s.IterationOrder != "" && !slices.Contains(flags, "parameter_sweep_mode") {
			c.ParameterSweepMode = s.IterationOrder
		}
		if s.SameSeed != nil && !slices.Contains(flags, "parameter_sweep_same_seed") {
			c.ParameterSweepSameSeed = *s.SameSeed
		}
	}
	c.where = func(i int, field string) string {
		if slices.Contains(flags, field) {
			return "" // a flag set it
		}
		return file.Where(i, field)
	}
	c.yamlCells, err = yamlCells(file, cmp.Or(c.Name, "profile"), c.ParameterSweepSameSeed, func(p *plan.Profile) error {
		return p.Overlay(&c.Profile, flags) // the flags given override every variation, as the base
	})
	if err != nil {
		return spec, err
	}
	return spec, checkYAMLSchedule(c.yamlCells)
}
