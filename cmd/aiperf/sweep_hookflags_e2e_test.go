package main

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/store"
)

// TestSweepFlagsHookWarnings: a trial's hook warnings are where a sweep is
// read, as CLIENT-BOUND is: its progress line and the notes under the
// table. The first trial's profiler stop never answers, so the profiler
// may run on: the next trial on that server is flagged too, and the one
// after it is not, once that next trial's own stop succeeded. Every cell
// sends the same prompts (same_seed), so the later ones find them in the
// prefix cache.
func TestSweepFlagsHookWarnings(t *testing.T) {
	subprocesses(t)
	var stops atomic.Int32
	m := startMockBehind(t, mock.Config{Fast: true}, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/stop_profile" && stops.Add(1) == 1 {
				<-r.Context().Done() // never answers: the client gives up
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	dir := t.TempDir()
	script := writeFile(t, dir, "flags.star", smallBase+`
prof = base.replace(server_profiler = True, server_profiler_timeout_seconds = 3, synthetic_input_tokens_mean = 64)
sweep(name = "flags", base = prof, matrix = {"concurrency": [1, 2, 3]}, same_seed = True)
`)
	inv := cli(t, dir, "sweep", script, "--set", "url="+m.URL, "--set", "tok="+tinyTokenizer(t))
	require.Equal(t, ExitOK, inv.code, "stdout:\n%s\nstderr:\n%s", inv.stdout, inv.stderr)
	assert.Equal(t, int32(3), stops.Load())

	first := lineContaining(t, inv.stderr, "concurrency_1 trial 1: complete")
	assert.Contains(t, first, "warning: server profiler stop failed")
	assert.NotContains(t, first, "possibly running")
	second := lineContaining(t, inv.stderr, "concurrency_2 trial 1: complete")
	assert.Contains(t, second, "server profiler possibly running")
	assert.Contains(t, second, "prefix cache warm at the start")
	assert.NotContains(t, second, "stop failed")
	third := lineContaining(t, inv.stderr, "concurrency_3 trial 1: complete")
	assert.Contains(t, third, "prefix cache warm at the start")
	assert.NotContains(t, third, "profiler", "the second trial's stop succeeded")

	lineContaining(t, inv.stdout, "warning: concurrency_1: server profiler stop failed in 1 of 1 runs")
	lineContaining(t, inv.stdout, "warning: concurrency_2: server profiler possibly running in 1 of 1 runs")
	lineContaining(t, inv.stdout, "warning: concurrency_3: prefix cache warm at the start in 1 of 1 runs")
	assert.NotContains(t, inv.stdout, "concurrency_3: server profiler")

	runs, err := openStore(t, dir).ListRuns(context.Background(), store.RunFilter{Sweep: "flags"})
	require.NoError(t, err)
	require.Len(t, runs, 3)
	byLabel := map[string]store.RunRow{}
	for _, r := range runs {
		byLabel[r.CellLabel] = r
	}
	warned := byLabel["concurrency_2"].HookWarnings
	require.NotEmpty(t, warned)
	w := warned[len(warned)-1]
	assert.True(t, strings.HasPrefix(w, result.WarnProfilerMayRun), w)
	assert.Contains(t, w, m.URL)
	assert.Contains(t, w, "concurrency_1 trial 1")
	assert.Contains(t, w, "no answer within 3s")
}
