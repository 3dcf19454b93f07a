package config

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// A multi_run: of a sweep whose variations reset the KV cache notes, once,
// that every trial keeps its warmup; with one run, with
// disable_warmup_after_first: false, without a reset or without a warmup
// to keep, nothing is noted.
func TestMultiRunResetWarmupNote(t *testing.T) {
	const warm = "  phases: [{name: warmup, concurrency: 1, requests: 5}, {name: profiling, concurrency: 4, requests: 8}]"
	const cold = "  phases: [{name: profiling, concurrency: 4, requests: 8}]"
	file := func(multiRun, reset, phases string) string {
		return strings.Join([]string{
			`schemaVersion: "2.0"`,
			"multi_run: " + multiRun,
			"benchmark:",
			"  model: m",
			"  endpoint: {url: 'http://127.0.0.1:9'" + reset + "}",
			phases,
			"sweep: {type: grid, parameters: {phases.profiling.concurrency: [4, 8]}}",
		}, "\n")
	}
	for _, tc := range []struct {
		multiRun, reset, phases string
		note                    bool
	}{
		{"{num_runs: 2}", ", reset_kv_cache: true", warm, true},
		{"{num_runs: 2, disable_warmup_after_first: true}", ", reset_kv_cache: {path: /flush_cache}", warm, true},
		{"{num_runs: 2}", "", warm, false},
		{"{num_runs: 1}", ", reset_kv_cache: true", warm, false},
		{"{num_runs: 2, disable_warmup_after_first: false}", ", reset_kv_cache: true", warm, false},
		{"{num_runs: 2}", ", reset_kv_cache: true", cold, false},
		{"{num_runs: 2, disable_warmup_after_first: true}", ", reset_kv_cache: true", "  phases: {type: concurrency, concurrency: 4, requests: 8}", false},
	} {
		f, err := Parse("y.yaml", []byte(file(tc.multiRun, tc.reset, tc.phases)))
		require.NoError(t, err, "%+v", tc)
		n := 0
		for _, note := range f.Notes {
			if note == plan.ResetKeepsWarmupNote {
				n++
			}
		}
		assert.Equal(t, map[bool]int{true: 1, false: 0}[tc.note], n, "%+v: %v", tc, f.Notes)
	}
}
