package main

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/runner"
)

// consistentSeed is the seed of every trial of a multi-run without
// --random-seed, AIPerf's.
const consistentSeed = 42

// trialPolicy applies AIPerf's multi-run policy to the base profile p.
// Warmup: only the first trial of a cell warms up
// (--profile-run-disable-warmup-after-first, unless the config file's
// multi_run: says), except in a cell that resets the KV cache before each
// trial (plan.Sweep.WarmupFirstTrialOnly): every trial of it warms up, as
// a note says once (a warning when the flag was given explicitly: it is
// not applied). Seeds: with several trials and no
// --random-seed (nor a config file, whose multi_run: says), every trial uses
// consistentSeed, or with --no-set-consistent-seed a seed drawn now, made
// different for each trial; --vary-seed-per-trial derives each trial's seed
// from the cell's.
func (c *ProfileCmd) trialPolicy(p *plan.Profile, explicit []string, notes io.Writer) {
	if !c.yamlMultiRun || slices.Contains(explicit, "profile_run_disable_warmup_after_first") {
		c.warmupOnce = c.WarmupAfterFirst
	}
	c.resetWarmup(p, explicit, notes)
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
	p.RandomSeed, c.varySeed, c.drawnSeed = int64(binary.BigEndian.Uint64(b[:])>>1), true, true
}

// resetWarmup says, once, that the trials of a cell resetting the KV cache
// all keep their warmup (plan.ResetKeepsWarmupNote; the config file's
// reader may have said it already), when there is a warmup to keep
// (plan.Sweep.ResetKeepsWarmup), and warns that
// --profile-run-disable-warmup-after-first given explicitly with such a
// reset is not applied (AIPerf accepts the two together): its trials after
// the first would measure the cache the reset just emptied, averaged with
// a warm first trial. (A config file's
// disable_warmup_after_first: true cannot be told from AIPerf's default,
// which files often repeat: it gets the note.)
func (c *ProfileCmd) resetWarmup(p *plan.Profile, explicit []string, notes io.Writer) {
	if c.SpecFile != "" {
		return
	}
	sw := plan.Sweep{Trials: c.NumProfileRuns, WarmupFirstTrialOnly: c.warmupOnce, Cells: c.yamlCells}
	if len(c.yamlCells) == 0 {
		sw.Cells = []plan.Cell{{Profile: *p}}
	}
	switch {
	case !sw.ResetKeepsWarmup():
		return
	case slices.Contains(explicit, "profile_run_disable_warmup_after_first"):
		fmt.Fprintln(notes, "warning: --profile-run-disable-warmup-after-first is not applied with a KV-cache reset "+
			"(--reset-kv-cache or reset_kv_cache): every trial resets the cache before its load, so the trials after the "+
			"first would measure an emptied cache, not the warmed server, averaged with a warm first trial; every trial "+
			"runs its warmup (for cold-cache trials: --warmup-request-count 0)")
	case !slices.Contains(c.yamlNotes, plan.ResetKeepsWarmupNote):
		fmt.Fprintln(notes, "note: "+plan.ResetKeepsWarmupNote)
	}
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
		Convergence:          c.converge,
		Cells: []plan.Cell{{
			ID:      plan.CellID(name, nil),
			Label:   "base",
			Profile: spec.Profile,
		}},
	}
	// AIPerf's layout: <dir>/profile_runs/run_0001, ..., <dir>/aggregate.
	trialDir, cellDir := runLayout(dir, sweep, false)
	return runSweep(ctx, g, sweep, sweepOptions{
		artifactDir: dir,
		confidence:  c.ConfidenceLevel,
		ui:          c.UI,
		name:        c.Name,
		trialDir:    trialDir,
		cellDir:     cellDir,
		script:      "(aiperf profile --num-profile-runs)",
		workers:     c.Workers,
		workerArgs:  c.WorkerDeadlines.args(),
		overwrite:   true,
		resume:      c.Resume,
		cliCommand:  redactedCommand(g.Args, spec.Profile.URL, spec.Profile.Redactor()),
	})
}

// checkResume refuses --resume where there is nothing it can continue:
// it continues the modes whose trials run as one stored sweep or search
// (--num-profile-runs, comma lists, a config file's sweep:, a search),
// the instruction an interrupted one prints ("rerun with --resume").
func (c *ProfileCmd) checkResume(g *Globals) error {
	if !c.Resume {
		return nil
	}
	switch {
	case c.NoStore:
		return usageErr(errors.New("--resume continues a run stored in the store; --no-store stores nothing (nothing was sent)"))
	case len(c.Variant) > 0:
		return usageErr(errors.New("--resume continues --num-profile-runs, comma lists, a config file's sweep: or a search; " +
			"not --variant (nothing was sent)"))
	case c.drawnSeed:
		return usageErr(errors.New("--resume with --no-set-consistent-seed needs --random-seed: a seed drawn anew plans " +
			"another sweep, which cannot continue the interrupted one (nothing was sent)"))
	case !c.severalTrials(g):
		return usageErr(errors.New("--resume continues a run of several trials (--num-profile-runs, comma lists, a config " +
			"file's sweep: or a search); a single run has nothing to resume (nothing was sent)"))
	}
	return nil
}

// severalTrials says whether the command line asks for more than one run
// (--num-profile-runs, comma lists, --variant, a config file's sweep: or a
// search): those run as a sweep or search of trial subprocesses, kept in
// a store.
func (c *ProfileCmd) severalTrials(g *Globals) bool {
	return c.NumProfileRuns > 1 || len(g.sweepLists) > 0 || len(c.yamlCells) > 0 || len(c.Variant) > 0 || c.SearchArgs.searching()
}

// scratchStore points g at a store of its own in a new temporary directory,
// for a sweep or search under --no-store: its trials report through a store,
// but the user's keeps nothing of them. drop removes the directory.
func scratchStore(g *Globals) (drop func(), err error) {
	dir, err := os.MkdirTemp("", "aiperf-no-store-")
	if err != nil {
		return nil, fmt.Errorf("make a scratch store for --no-store: %w", err)
	}
	g.Store, g.scratch = filepath.Join(dir, "aiperf.db"), true
	return func() { os.RemoveAll(dir) }, nil
}

// exitWithParent makes a local sweep's trial child exit at once when its
// parent, having interrupted it, exits (a second Ctrl-C): no trial process
// is left behind (runner.ExitWithParent). It returns the watch's end.
func (c *ProfileCmd) exitWithParent(g *Globals) (stop func()) {
	if c.SpecFile == "" || c.RemoteSpec || os.Getenv(runner.ChildEnv) == "" {
		return func() {}
	}
	return runner.ExitWithParent(func() {
		fmt.Fprintln(g.Stderr, "aiperf: the sweep parent exited after interrupting this trial: exiting now (nothing of it is stored)")
		os.Exit(ExitInterrupted)
	})
}
