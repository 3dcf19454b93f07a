package main

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// TestRunThatNeverProfiledShowsNoFigures: a run whose profiler start was
// refused after its warmup sent no profiling request. Neither its console
// nor `aiperf runs show` gives figures of the profiling phase it never ran
// (zero counts, a send rate of 0, the server scraped over the warmup as if
// over profiling): they say why there are none.
func TestRunThatNeverProfiledShowsNoFigures(t *testing.T) {
	m := startMockBehind(t, mock.Config{Fast: true}, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/start_profile" {
				http.Error(w, "start broke", http.StatusInternalServerError)
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--server-profiler", "--warmup-request-count", "2", "--request-count", "4")...)
	require.Equal(t, ExitFailure, inv.code, inv.stderr)
	require.Equal(t, 2, m.control().InferenceRequests, "the warmup ran, the profiling did not")

	show := cli(t, dir, "runs", "show", "1")
	require.Equal(t, ExitOK, show.code, show.stderr)
	for _, out := range []string{inv.stdout, show.stdout} {
		lineContaining(t, out, "No profiling figures: no profiling request was sent: the run failed before its profiling began")
		assert.NotContains(t, out, "scraped during the profiling phases")
		assert.NotContains(t, out, "Request Count")
		assert.NotContains(t, out, "send rate")
		lineContaining(t, out, "Warmup: 2 requests")
		lineContaining(t, out, "Run failed: server profiler start")
	}
}
