package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/runner"
)

// TestConfigExpandPrintsWhereTheRunWrites: every directory aiperf config
// expand prints for a file (its trials' and each cell's aggregate), with
// no artifacts.dir, is where aiperf profile --config FILE writes them, in
// every layout: a sweep's trials repeated or independent, a one-trial
// sweep and a multi-run of one cell; nothing is written elsewhere. The
// default directory of a sweep names every swept concurrency, as AIPerf
// names a --concurrency list (concurrency_sweep_1_2), not one cell's.
func TestConfigExpandPrintsWhereTheRunWrites(t *testing.T) {
	subprocesses(t)
	m := startMock(t, mock.Config{Fast: true})
	tok := tinyTokenizer(t)
	body := []string{
		`schemaVersion: "2.0"`,
		"benchmark:",
		"  model: mock-model",
		"  endpoint: {url: '" + m.URL + "', reset_kv_cache: true}",
		"  tokenizer: " + tok,
		"  dataset: {type: synthetic, entries: 4, prompts: {isl: 16, osl: 4}}",
		"  phases: {type: concurrency, concurrency: 1, requests: 4}",
	}
	const sweep = "sweep: {type: grid, parameters: {concurrency: [1, 2]}}"
	for _, tc := range []struct {
		name  string
		extra []string
		base  string
	}{
		{"repeated", []string{sweep, "multi_run: {num_runs: 2}"}, "mock-model-openai-chat-concurrency_sweep_1_2"},
		{"independent", []string{"sweep: {type: grid, iteration_order: independent, parameters: {concurrency: [1, 2]}}",
			"multi_run: {num_runs: 2}"}, "mock-model-openai-chat-concurrency_sweep_1_2"},
		{"one trial", []string{sweep}, "mock-model-openai-chat-concurrency_sweep_1_2"},
		{"multi-run", []string{"multi_run: {num_runs: 2}"}, "mock-model-openai-chat-concurrency1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := writeFile(t, dir, "f.yaml", strings.Join(append(append([]string(nil), body...), tc.extra...), "\n"))
			exp := cli(t, dir, "config", "expand", path)
			require.Equal(t, ExitOK, exp.code, exp.stderr)
			assert.Contains(t, exp.stdout, "into "+filepath.Join("artifacts", tc.base)+"\n")
			exp = cli(t, dir, "config", "expand", path, "--format", "json")
			require.Equal(t, ExitOK, exp.code, exp.stderr)
			var doc struct {
				Variations []struct {
					TrialDirs    []string `json:"trial_dirs"`
					AggregateDir string   `json:"aggregate_dir"`
				} `json:"variations"`
			}
			require.NoError(t, json.Unmarshal([]byte(exp.stdout), &doc))
			require.NotEmpty(t, doc.Variations)

			inv := cli(t, dir, "profile", "--config", path, "--ui", "none")
			require.Equal(t, ExitOK, inv.code, "stdout:\n%s\nstderr:\n%s", inv.stdout, inv.stderr)
			entries, err := os.ReadDir(filepath.Join(dir, "artifacts"))
			require.NoError(t, err)
			require.Len(t, entries, 1, "one base directory")
			assert.Equal(t, tc.base, entries[0].Name())
			for _, v := range doc.Variations {
				require.NotEmpty(t, v.TrialDirs)
				for _, d := range v.TrialDirs {
					assert.FileExists(t, filepath.Join(dir, d, "profile_export_aiperf.json"), "a trial directory config expand printed")
				}
				if v.AggregateDir != "" {
					assert.FileExists(t, filepath.Join(dir, v.AggregateDir, runner.AggregateFile), "an aggregate directory config expand printed")
				}
			}
		})
	}
}
