package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// buffering holds each reply whole and sends it in one write, as a proxy
// that buffers a stream does: a valid SSE stream whose tokens all arrive
// in one read.
func buffering(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		for k, vs := range rec.Header() {
			w.Header()[k] = vs
		}
		body := rec.Body.Bytes()
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	})
}

// TestCompareLeavesOutBufferedStreamTimings: a server behind a buffering
// proxy delivers every stream in one read, so each request's ITL is 0
// and its per-user throughput unbounded; the run's audit says they are not
// token timings, yet compare judged the ITL -100% 'better (p=0.003)' with
// no note. Such a run's ITL and per-user throughput are left out (n/a, no
// verdict) and a warning says why, from the run's own stored statistics.
func TestCompareLeavesOutBufferedStreamTimings(t *testing.T) {
	subprocesses(t)
	tok := tinyTokenizer(t)
	real := startMock(t, mock.Config{TTFT: 20, ITL: 5})
	buffered := startMockBehind(t, mock.Config{TTFT: 20, ITL: 5}, buffering)
	dir := t.TempDir()
	for name, url := range map[string]string{"real": real.URL, "buffered": buffered.URL} {
		inv := cli(t, dir, quick(url, "--tokenizer", tok, "--request-count", "4", "--num-profile-runs", "2",
			"--name", name, "--artifact-dir", name)...)
		require.Equal(t, ExitOK, inv.code, inv.stderr)
	}
	inv := cli(t, dir, "compare", "real", "buffered", "--format", "json",
		"--metric", "inter_token_latency.avg,output_token_throughput_per_user.avg,time_to_first_token.avg")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	var rep struct {
		Metrics []struct {
			Metric string
			Values []struct{ N int }
			Versus []struct{ Verdict string }
		}
		Notes []string
	}
	require.NoError(t, json.Unmarshal([]byte(inv.stdout), &rep))
	require.Len(t, rep.Metrics, 3)
	for _, m := range rep.Metrics[:2] {
		assert.Equal(t, 0, m.Values[1].N, "%s: nothing of the buffered runs is a token timing", m.Metric)
		assert.Equal(t, "n/a", m.Versus[0].Verdict, m.Metric)
	}
	assert.Equal(t, 2, rep.Metrics[2].Values[1].N, "their TTFT stands")
	assert.Regexp(t, `warning: buffered: inter_token_latency\.avg[^\n]* left out \(n/a\) of 2 of 2 runs \[3 4\]: `+
		`\d of 4 streamed requests delivered all their tokens in one read`, strings.Join(rep.Notes, "\n"))

	table := cli(t, dir, "compare", "real", "buffered")
	require.Equal(t, ExitOK, table.code, table.stderr)
	assert.Regexp(t, `inter_token_latency\.avg[^\n]*│ +n/a │ +n/a │ n/a +│`, table.stdout, "the default view too")
}
