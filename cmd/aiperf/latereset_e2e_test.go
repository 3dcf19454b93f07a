package main

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/store"
)

// heldFirstReset wraps the mock so that its first POST /reset_prefix_cache
// reaches it only once load is under way (a second inference request
// arrived, the first one's start logged) or release has passed, whichever
// comes first: a reset whose client gave up and that the server still runs
// (vLLM's handler does), at the worst time.
func heldFirstReset(release time.Duration) func(http.Handler) http.Handler {
	var (
		first     atomic.Bool
		inference atomic.Int64
		loadBegan = make(chan struct{})
		once      sync.Once
	)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/v1/") && inference.Add(1) == 2 {
				once.Do(func() { close(loadBegan) })
			}
			if r.URL.Path == "/reset_prefix_cache" && first.CompareAndSwap(false, true) {
				select {
				case <-loadBegan:
				case <-time.After(release):
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}

// TestProfileHoldsForAResetAttemptLeftUnanswered: a reset attempt that timed
// out is retried and the retry answered; the first still runs on the server.
// The run remembers it (the export's unanswered_attempts, the store), holds
// its load for max(timeout, 10 s) after it was given up, so that the late
// reset lands before the first request, says so, and warns that it may
// have run during the run.
func TestProfileHoldsForAResetAttemptLeftUnanswered(t *testing.T) {
	m := startMockBehind(t, mock.Config{TTFT: 5}, heldFirstReset(4*time.Second))
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--reset-kv-cache", "--reset-kv-cache-timeout-seconds", "1",
		"--request-count", "8", "--artifact-dir", "out")...)
	require.Equal(t, ExitOK, inv.code, "stdout:\n%s\nstderr:\n%s", inv.stdout, inv.stderr)

	kinds := m.kinds()
	first := slicesIndex(kinds, "request_start")
	require.GreaterOrEqual(t, first, 0)
	assert.Equal(t, 2, nEvents(m.control().Events[:first], mock.EventReset),
		"both resets, the late one included, ran before the load: %v", kinds)
	assert.Regexp(t, `the KV-cache reset of `+m.URL+` had 1 of its 2 attempts get no answer within 1s \(a retry was answered\): `+
		`waiting \d+s before the load`, inv.stderr)

	calls := exportedHookCalls(t, filepath.Join(dir, "out"))
	require.Len(t, calls, 1)
	assert.True(t, calls[0].OK)
	assert.Equal(t, 2, calls[0].Attempts)
	assert.Equal(t, 1, calls[0].Unanswered)
	assert.Positive(t, calls[0].UnansweredAt)
	warning := "the KV-cache reset of " + m.URL + " had 1 of its 2 attempts get no answer within 1s (a retry was answered) " +
		"and may have run during this run"
	assert.Contains(t, inv.stdout+inv.stderr, warning)

	runs, err := openStore(t, dir).ListRuns(context.Background(), store.RunFilter{})
	require.NoError(t, err)
	require.Len(t, runs, 1)
	assert.Contains(t, storedWarnings(t, dir, runs[0].ID), warning)
	stored := readStoredRun(t, dir, int(runs[0].ID))
	require.Len(t, stored.ControlHooks, 1)
	assert.Equal(t, 1, stored.ControlHooks[0].Unanswered)
}
