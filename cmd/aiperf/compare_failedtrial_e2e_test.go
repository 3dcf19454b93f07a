package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// failingFrom answers the chat requests numbered from first to last (from
// 1) with HTTP 500, and passes every other request to h.
func failingFrom(first, last int64) func(http.Handler) http.Handler {
	var n atomic.Int64
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/chat/completions") {
				if i := n.Add(1); i >= first && i <= last {
					http.Error(w, `{"error": {"message": "boom"}}`, http.StatusInternalServerError)
					return
				}
			}
			h.ServeHTTP(w, r)
		})
	}
}

// TestCompareCountsAFailedTrialsErrors: a trial in which every request
// failed (HTTP 500) failed and was left out of every row, so compare said
// the group's error_request_count was 0 ± 0 over its two other trials,
// 'no significant difference' from a group without errors. Its stored
// counts (4 errors, 0 requests) count in the rows of requests' outcomes,
// a note says so, and the other rows still leave it out.
func TestCompareCountsAFailedTrialsErrors(t *testing.T) {
	subprocesses(t)
	tok := tinyTokenizer(t)
	good := startMock(t, mock.Config{TTFT: 5, ITL: 1})
	flaky := startMockBehind(t, mock.Config{TTFT: 5, ITL: 1}, failingFrom(5, 8)) // the second trial's four
	dir := t.TempDir()
	inv := cli(t, dir, quick(good.URL, "--tokenizer", tok, "--request-count", "4", "--num-profile-runs", "3",
		"--name", "good", "--artifact-dir", "good")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	inv = cli(t, dir, quick(flaky.URL, "--tokenizer", tok, "--request-count", "4", "--num-profile-runs", "3",
		"--name", "third_failed", "--artifact-dir", "third_failed")...)
	require.NotEqual(t, ExitOK, inv.code, "a trial failed")
	require.Contains(t, inv.stderr, "every profiling request failed: 4 of 4")

	inv = cli(t, dir, "compare", "good", "third_failed", "--format", "json",
		"--metric", "error_request_count.avg,request_count.avg,request_error_rate.avg,time_to_first_token.avg")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	var rep struct {
		Metrics []struct {
			Metric string
			Values []struct {
				N    int
				Mean float64
			}
			Versus []struct{ Verdict string }
		}
		Notes []string
	}
	require.NoError(t, json.Unmarshal([]byte(inv.stdout), &rep))
	require.Len(t, rep.Metrics, 4)
	for i, want := range []float64{4.0 / 3, 8.0 / 3, 100.0 / 3} {
		m := rep.Metrics[i]
		assert.Equal(t, 3, m.Values[1].N, "%s: the failed trial counts", m.Metric)
		assert.InDelta(t, want, m.Values[1].Mean, 1e-9, m.Metric)
		assert.NotEqual(t, "identical, no spread", m.Versus[0].Verdict, m.Metric)
	}
	assert.Equal(t, 2, rep.Metrics[3].Values[1].N, "its TTFT is not measured: left out")
	assert.Contains(t, rep.Notes, "third_failed: the failed run(s) [5] count in error_request_count.avg, request_count.avg, "+
		"request_error_rate.avg with what their requests did (a run whose requests all failed is an observation of its "+
		"errors, not a missing one); the other statistics leave them out")
}
