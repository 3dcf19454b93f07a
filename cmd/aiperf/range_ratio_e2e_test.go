package main

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// TestRandomRangeRatio: --random-range-ratio draws each request's ISL and
// max tokens uniformly from windows around --isl and --osl, vllm's
// symmetric ones by default and sglang's bounded by the mean with
// --random-corpus-style sglang (here with its whole-vocabulary random
// corpus); a bad ratio, or one without --osl, exits 2 before the mock is
// sent anything.
func TestRandomRangeRatio(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	for _, c := range []struct {
		name           string
		extra          []string
		islMin, islMax int
		oslMin, oslMax int
	}{
		{"vllm", nil, 50, 150, 10, 30},
		{"sglang", []string{"--random-corpus-style", "sglang", "--prompt-corpus", "random"}, 50, 100, 10, 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"profile", "-m", "mock-model", "-u", m.URL, "--isl", "100", "--osl", "20",
				"--random-range-ratio", "0.5", "--num-dataset-entries", "40", "--request-count", "40", "--concurrency", "4",
				"--dataset-sampling-strategy", "sequential", "--artifact-dir", "out", "--no-store", "--ui", "none"}, c.extra...)
			inv := cli(t, dir, args...)
			require.Equal(t, ExitOK, inv.code, inv.stderr)

			var isls []int
			for _, l := range jsonlMetrics(t, filepath.Join(dir, "out", "profile_export.jsonl")) {
				isls = append(isls, int(l["input_sequence_length"]))
			}
			require.Len(t, isls, 40)
			assert.GreaterOrEqual(t, slices.Min(isls), c.islMin)
			assert.LessOrEqual(t, slices.Max(isls), c.islMax)
			assert.Greater(t, len(distinct(isls)), 15, "the ISLs vary: %v", isls)

			var inputs struct {
				Data []struct {
					Payloads []chatBody `json:"payloads"`
				} `json:"data"`
			}
			readJSONInto(t, filepath.Join(dir, "out", "inputs.json"), &inputs)
			var osls []int
			for _, d := range inputs.Data {
				for _, b := range d.Payloads {
					osls = append(osls, b.MaxTokens)
				}
			}
			require.Len(t, osls, 40)
			assert.GreaterOrEqual(t, slices.Min(osls), c.oslMin)
			assert.LessOrEqual(t, slices.Max(osls), c.oslMax)
			assert.Greater(t, len(distinct(osls)), 5, "the max tokens vary: %v", osls)
		})
	}

	sent := m.control().InferenceRequests
	for ratio, want := range map[string]string{
		"1.5":            "--random-range-ratio ISL ratio must be in [0, 1) under the vllm corpus style",
		`{"input": 0.3}`: `--random-range-ratio JSON object missing keys: [output]`,
	} {
		inv := cli(t, t.TempDir(), "profile", "-m", "mock-model", "-u", m.URL, "--isl", "100", "--osl", "20",
			"--random-range-ratio", ratio, "--request-count", "4", "--no-store", "--ui", "none")
		assert.Equal(t, ExitUsage, inv.code, inv.stderr)
		assert.Contains(t, inv.stderr, want)
	}
	inv := cli(t, t.TempDir(), "profile", "-m", "mock-model", "-u", m.URL, "--isl", "100",
		"--random-range-ratio", "0.3", "--request-count", "4", "--no-store", "--ui", "none")
	assert.Equal(t, ExitUsage, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, "--random-range-ratio needs --osl")
	assert.Equal(t, sent, m.control().InferenceRequests, "refused before any traffic")
}

// distinct is the set of xs.
func distinct(xs []int) map[int]bool {
	set := map[int]bool{}
	for _, x := range xs {
		set[x] = true
	}
	return set
}
