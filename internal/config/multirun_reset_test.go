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
// disable_warmup_after_first: false or without a reset, nothing is noted.
func TestMultiRunResetWarmupNote(t *testing.T) {
	file := func(multiRun, reset string) string {
		return strings.Join([]string{
			`schemaVersion: "2.0"`,
			"multi_run: " + multiRun,
			"benchmark:",
			"  model: m",
			"  endpoint: {url: 'http://127.0.0.1:9'" + reset + "}",
			"  phases: [{name: warmup, concurrency: 1, requests: 5}, {name: profiling, concurrency: 4, requests: 8}]",
			"sweep: {type: grid, parameters: {phases.profiling.concurrency: [4, 8]}}",
		}, "\n")
	}
	for _, tc := range []struct {
		multiRun, reset string
		note            bool
	}{
		{"{num_runs: 2}", ", reset_kv_cache: true", true},
		{"{num_runs: 2, disable_warmup_after_first: true}", ", reset_kv_cache: {path: /flush_cache}", true},
		{"{num_runs: 2}", "", false},
		{"{num_runs: 1}", ", reset_kv_cache: true", false},
		{"{num_runs: 2, disable_warmup_after_first: false}", ", reset_kv_cache: true", false},
	} {
		f, err := Parse("y.yaml", []byte(file(tc.multiRun, tc.reset)))
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
