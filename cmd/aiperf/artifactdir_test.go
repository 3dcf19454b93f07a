package main

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/runner"
)

// phaseCells are cells of a YAML sweep: one listed profiling phase each,
// at these concurrencies (a rate when rate is set).
func phaseCells(rate bool, values ...float64) []plan.Cell {
	cells := make([]plan.Cell, len(values))
	for i, v := range values {
		ph := plan.Phase{Name: "profiling", Kind: plan.KindProfiling, Concurrency: int(v)}
		if rate {
			ph = plan.Phase{Name: "profiling", Kind: plan.KindProfiling, Rate: v}
		}
		p := plan.NewProfile()
		p.Model = []string{"m"}
		p.Phases = []plan.Phase{{Name: "warmup", Kind: plan.KindWarmup, Concurrency: 64}, ph}
		cells[i] = plan.Cell{Label: fmt.Sprint("cell_", i), Profile: p}
	}
	return cells
}

// TestCellsStimulusNamesEverySweptValue: the default directory of a run of
// several cells names every value they run, as AIPerf names a swept
// --concurrency list (concurrency_sweep_1_2_4), never one cell's load; a
// part the cells share is named once, and a warmup phase never.
func TestCellsStimulusNamesEverySweptValue(t *testing.T) {
	assert.Equal(t, "concurrency_sweep_1_2_4", cellsStimulus(phaseCells(false, 1, 2, 4), "sweep"))
	assert.Equal(t, "concurrency_sweep_1_2", cellsStimulus(phaseCells(false, 1, 1, 2, 2), "sweep"),
		"a grid with another dimension: each value once, in the cells' order")
	assert.Equal(t, "concurrency8", cellsStimulus(phaseCells(false, 8, 8), "sweep"), "an isl sweep at one concurrency")
	assert.Equal(t, "request_rate_sweep_10.0_20.5", cellsStimulus(phaseCells(true, 10, 20.5), "sweep"),
		"rates as AIPerf writes them, as a --request-rate list's")
	assert.Equal(t, "concurrency_search_1_1000", cellsStimulus(phaseCells(false, 1, 1000), "search"))
	assert.Equal(t, "sweep_mixed_loads", cellsStimulus(append(phaseCells(false, 4), phaseCells(true, 10)...), "sweep"))
	many := make([]float64, 20)
	for i := range many {
		many[i] = float64(i + 1)
	}
	assert.Equal(t, "concurrency_sweep_1_to_20_20_values", cellsStimulus(phaseCells(false, many...), "sweep"))

	flags := func(c, r float64) plan.Cell {
		p := plan.NewProfile()
		p.Model = []string{"m"}
		p.Concurrency, p.RequestRate = plan.Ptr(int(c)), plan.Ptr(r)
		return plan.Cell{Profile: p}
	}
	assert.Equal(t, "concurrency4-request_rate_sweep_10.0_2.5", cellsStimulus([]plan.Cell{flags(4, 10), flags(4, 2.5)}, "sweep"),
		"rates as AIPerf writes them; the shared concurrency once")

	base := plan.NewProfile()
	base.Model = []string{"org/model"}
	base.Concurrency = plan.Ptr(1)
	assert.Equal(t, "artifacts/org_model-openai-chat-concurrency_sweep_1_2-run_a",
		cellsArtifactDir(base, "run/a", phaseCells(false, 1, 2), "sweep"))
	assert.Equal(t, defaultArtifactDir(base, "x"), cellsArtifactDir(base, "x", nil, "sweep"), "no cells: the base's name")
}

// TestDefaultDirOfASweep: the run's default directory names the values of
// a comma list, a config file's sweep: and a search's bounds; a single
// cell keeps AIPerf's name of its load.
func TestDefaultDirOfASweep(t *testing.T) {
	spec := runner.Spec{Profile: plan.NewProfile()}
	spec.Profile.Model = []string{"m"}
	spec.Profile.Concurrency = plan.Ptr(1)
	c := &ProfileCmd{NumProfileRuns: 1, ConfidenceLevel: 0.95, SweepType: "grid"}
	assert.Equal(t, "artifacts/m-openai-chat-concurrency1", c.defaultDir(&Globals{}, spec))

	_, lists, err := takeSweepLists([]string{"profile", "--concurrency", "8,16,32"})
	require.NoError(t, err)
	assert.Equal(t, "artifacts/m-openai-chat-concurrency_sweep_8_16_32", c.defaultDir(&Globals{sweepLists: lists}, spec),
		"AIPerf's name of a --concurrency list")

	yaml := &ProfileCmd{yamlCells: phaseCells(false, 1, 2)}
	assert.Equal(t, "artifacts/m-openai-chat-concurrency_sweep_1_2", yaml.defaultDir(&Globals{}, spec))

	search := &ProfileCmd{NumProfileRuns: 1, ConfidenceLevel: 0.95}
	search.SearchRecipe = "concurrency-ramp"
	assert.Equal(t, "artifacts/m-openai-chat-concurrency_search_1_1000", search.defaultDir(&Globals{}, spec),
		"the recipe's concurrency bounds, not the base's concurrency 1")
}

// TestRunLayoutIsAIPerfs: where a run's trials and aggregates go, AIPerf's
// artifact layout for each mode.
func TestRunLayoutIsAIPerfs(t *testing.T) {
	cell := plan.Cell{Label: "concurrency_2"}
	trial := plan.Trial{Cell: cell, Number: 3}
	for _, tc := range []struct {
		name        string
		sw          plan.Sweep
		swept       bool
		trial, cell string
	}{
		{"single", plan.Sweep{Trials: 1}, false, "d", ""},
		{"multi-run", plan.Sweep{Trials: 3}, false, "d/profile_runs/run_0003", "d/aggregate"},
		{"sweep, one trial", plan.Sweep{Trials: 1, Order: plan.OrderRepeated}, true, "d/concurrency_2", "d/aggregate/concurrency_2"},
		{"repeated", plan.Sweep{Trials: 3, Order: plan.OrderRepeated}, true, "d/profile_runs/trial_0003/concurrency_2", "d/aggregate/concurrency_2"},
		{"independent", plan.Sweep{Trials: 3, Order: plan.OrderIndependent}, true, "d/concurrency_2/profile_runs/trial_0003", "d/concurrency_2/aggregate"},
	} {
		trialDir, cellDir := runLayout("d", tc.sw, tc.swept)
		assert.Equal(t, filepath.FromSlash(tc.trial), trialDir(trial), tc.name)
		if tc.cell == "" {
			assert.Nil(t, cellDir, tc.name)
			continue
		}
		assert.Equal(t, filepath.FromSlash(tc.cell), cellDir(cell), tc.name)
	}
}
