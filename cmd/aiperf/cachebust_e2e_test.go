package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// sentMessages reads each profiling request's chat messages from
// profile_export_raw.jsonl, in the order the lines were written.
func sentMessages(t *testing.T, path string) [][]struct{ Role, Content string } {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var out [][]struct{ Role, Content string }
	for l := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		var line struct {
			Payload struct {
				Messages []struct{ Role, Content string } `json:"messages"`
			} `json:"payload"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &line))
		out = append(out, line.Payload.Messages)
	}
	return out
}

var ridMarker = regexp.MustCompile(`^\[rid:[0-9a-f]{12}\]\n\n`)

// --cache-bust first_turn_prefix: two prompts sent over and over hit the
// mock's prefix cache without it, and never with it, every request
// carrying a marker of its own at token 0; its ISL still about --isl.
func TestCacheBustDefeatsThePrefixCache(t *testing.T) {
	run := func(t *testing.T, extra ...string) (hits float64, dir string) {
		m := startMock(t, mock.Config{Fast: true})
		dir = t.TempDir()
		args := append([]string{"profile", "-m", "m", "--url", m.URL, "--isl", "200", "--osl", "4", "--num-dataset-entries", "2",
			"--request-count", "12", "--concurrency", "1", "--export-level", "raw", "--artifact-dir", "out", "--no-store"}, extra...)
		inv := cli(t, dir, args...)
		require.Equal(t, ExitOK, inv.code, inv.stderr)
		return scrape(t, m.URL, "vllm:prefix_cache_hits_total")["vllm:prefix_cache_hits_total"], dir
	}
	hits, _ := run(t)
	assert.Positive(t, hits, "without --cache-bust the two prompts are served from the cache")

	hits, dir := run(t, "--cache-bust", "first_turn_prefix")
	assert.Zero(t, hits, "with --cache-bust no prompt shares a block with another")
	markers := map[string]bool{}
	for i, msgs := range sentMessages(t, filepath.Join(dir, "out", "profile_export_raw.jsonl")) {
		require.Len(t, msgs, 1)
		m := ridMarker.FindString(msgs[0].Content)
		require.NotEmpty(t, m, "request %d: %q", i, msgs[0].Content[:min(40, len(msgs[0].Content))])
		markers[m] = true
	}
	assert.Len(t, markers, 12, "a marker of its own for each session")
	for _, l := range jsonlMetrics(t, filepath.Join(dir, "out", "profile_export.jsonl")) {
		// Drawn shorter by the marker's mean tokens, as AIPerf: a marker's
		// count varies with its hex digits by a few tokens.
		assert.InDelta(t, 200, l["input_sequence_length"], 5)
	}
}

// warmup_isolation_first_turn marks the warmup's requests only; a
// shared system prompt is left alone, so it stays cached.
func TestCacheBustWarmupIsolation(t *testing.T) {
	var marked atomic.Int32 // requests the server got with the warmup marker
	m := startMockBehind(t, mock.Config{Fast: true}, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, err := io.ReadAll(r.Body)
			require.NoError(t, err)
			if strings.Contains(string(body), `"content":"[warmup]\n\n`) {
				marked.Add(1)
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			h.ServeHTTP(w, r)
		})
	})
	dir := t.TempDir()
	inv := cli(t, dir, "profile", "-m", "m", "--url", m.URL, "--isl", "40", "--osl", "4", "--num-dataset-entries", "3",
		"--warmup-request-count", "3", "--request-count", "6", "--concurrency", "1", "--shared-system-prompt-length", "64",
		"--cache-bust", "warmup_isolation_first_turn", "--export-level", "raw", "--artifact-dir", "out", "--no-store")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Equal(t, int32(3), marked.Load(), "the three warmup requests, at the start of their user turn")
	for _, msgs := range sentMessages(t, filepath.Join(dir, "out", "profile_export_raw.jsonl")) {
		require.Len(t, msgs, 2)
		assert.Equal(t, "system", msgs[0].Role)
		assert.NotContains(t, msgs[0].Content+msgs[1].Content, "[warmup]", "profiling requests carry no marker")
	}
	assert.Positive(t, scrape(t, m.URL, "vllm:prefix_cache_hits_total")["vllm:prefix_cache_hits_total"],
		"the system prompt is served from the cache")

	inv = cli(t, dir, "profile", "-m", "m", "--url", m.URL, "--cache-bust", "warmup_isolation_system", "--no-store")
	assert.Equal(t, ExitUsage, inv.code)
	assert.Contains(t, inv.stderr, "--cache-bust warmup_isolation_system needs a system message to mark: "+
		"give --shared-system-prompt-length or --system-prompt, or use warmup_isolation_first_turn")
}
