package main

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/report"
)

// TestConsoleFitsByDefault: what a newcomer sees fits a 120-column
// terminal: a profile's console, the plan of the demo sweep (long cell
// labels), runs list and a comparison; --wide keeps names whole.
func TestConsoleFitsByDefault(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	script := writeFile(t, dir, "s.star", smallBase+`
sweep(name = "s", base = base.replace(server_profiler = True),
      matrix = {"concurrency": [1, 2], "synthetic_input_tokens_mean": [16, 32]}, trials = 2)
`)
	ctx := context.Background()
	var outs []string
	for _, args := range [][]string{
		quick(m.URL, "--request-count", "4", "--reset-kv-cache", "--server-profiler", "--name", "a"),
		quick(m.URL, "--request-count", "4", "--reset-kv-cache", "--name", "b"),
		{"plan", script, "--set", "url=" + m.URL, "--set", "tok=unused"},
		{"runs", "list"},
		{"compare", "a", "b"},
	} {
		inv := cliRun(ctx, t, dir, args...)
		require.Equal(t, ExitOK, inv.code, "%v: %s", args, inv.stderr)
		outs = append(outs, inv.stdout)
	}
	for _, out := range outs {
		for line := range strings.SplitSeq(out, "\n") {
			assert.LessOrEqual(t, utf8.RuneCountInString(line), report.MaxWidth, "%q", line)
		}
	}
	plan := cliRun(ctx, t, dir, "--wide", "plan", script, "--set", "url="+m.URL, "--set", "tok=unused")
	require.Equal(t, ExitOK, plan.code, plan.stderr)
	assert.Contains(t, plan.stdout, "s/concurrency_1__synthetic_input_tokens_mean_16/trial_0001", "--wide: labels whole")
}
