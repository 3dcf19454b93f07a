package main

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"path/filepath"
	"slices"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/runner"
)

// consistentSeed is the seed of every trial of a multi-run without
// --random-seed, AIPerf's.
const consistentSeed = 42

// trialPolicy applies AIPerf's multi-run policy to the base profile p.
// Warmup: only the first trial of a cell warms up
// (--profile-run-disable-warmup-after-first, unless the config file's
// multi_run: says). Seeds: with several trials and no --random-seed (nor a
// config file, whose multi_run: says), every trial uses consistentSeed, or
// with --no-set-consistent-seed a seed drawn now, made different for each
// trial; --vary-seed-per-trial derives each trial's seed from the cell's.
func (c *ProfileCmd) trialPolicy(p *plan.Profile, explicit []string) {
	if !c.yamlMultiRun || slices.Contains(explicit, "profile_run_disable_warmup_after_first") {
		c.warmupOnce = c.WarmupAfterFirst
	}
	c.varySeed = c.varySeed || c.VarySeedPerTrial // a config file's multi_run: may have set it
	if c.NumProfileRuns < 2 || c.SpecFile != "" || c.Config != "" || slices.Contains(explicit, "random_seed") {
		return
	}
	if c.SetConsistentSeed {
		p.RandomSeed = consistentSeed
		return
	}
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	p.RandomSeed, c.varySeed = int64(binary.BigEndian.Uint64(b[:])>>1), true
}

// multiRun runs the cell --num-profile-runs times, as a sweep of one cell.
func (c *ProfileCmd) multiRun(ctx context.Context, g *Globals, spec runner.Spec, dir string) error {
	name := c.Name
	if name == "" {
		name = "profile"
	}
	sweep := plan.Sweep{
		Name:                 name,
		Trials:               c.NumProfileRuns,
		CooldownSeconds:      c.ProfileRunCooldownSeconds,
		WarmupFirstTrialOnly: c.warmupOnce,
		VarySeedPerTrial:     c.varySeed,
		Cells: []plan.Cell{{
			ID:      plan.CellID(name, nil),
			Label:   "base",
			Profile: spec.Profile,
		}},
	}
	return runSweep(ctx, g, sweep, sweepOptions{
		artifactDir: dir,
		confidence:  c.ConfidenceLevel,
		ui:          c.UI,
		name:        c.Name,
		// AIPerf's layout: <dir>/profile_runs/run_0001, ..., <dir>/aggregate.
		trialDir: func(t plan.Trial) string {
			return filepath.Join(dir, "profile_runs", result.RunLabel(t.Number))
		},
		cellDir:    func(plan.Cell) string { return filepath.Join(dir, "aggregate") },
		script:     "(aiperf profile --num-profile-runs)",
		workers:    c.Workers,
		workerArgs: c.WorkerDeadlines.args(),
		overwrite:  true,
		cliCommand: redactedCommand(g.Args, spec.Profile.URL, spec.Profile.Redactor()),
	})
}
