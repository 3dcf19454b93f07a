package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/store"
)

// cachedTokensServer answers every chat request with usage whose
// prompt_tokens_details.cached_tokens is cached (JSON), and its reset 200.
func cachedTokensServer(t *testing.T, cached string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			return // the reset, /metrics: 200, empty
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"x","object":"chat.completion","model":"mock-model","choices":[{"index":0,`+
			`"message":{"role":"assistant","content":"a b c d"},"finish_reason":"stop"}],"usage":{"prompt_tokens":16,`+
			`"completion_tokens":4,"total_tokens":20,"prompt_tokens_details":{"cached_tokens":%s}}}`, cached)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestResetUnverifiableSaysWhy: a reset that cannot be checked says why
// (every request failed; the server's cached_tokens were invalid and
// dropped), the same in the console, the export and the store, instead of
// blaming a server flag that was never missing.
func TestResetUnverifiableSaysWhy(t *testing.T) {
	failing := startMock(t, mock.Config{Fast: true, ErrorRate: 100})
	for name, tc := range map[string]struct{ url, want string }{
		"every request failed": {failing.URL, "no request succeeded after the reset"},
		"cached_tokens 10x the prompt": {cachedTokensServer(t, "160"),
			"the server's cached_tokens values were invalid and dropped (160 cached tokens, more than the 16 prompt tokens)"},
		"cached_tokens negative": {cachedTokensServer(t, "-500"), "the server's cached_tokens values were invalid and dropped"},
		"cached_tokens a string": {cachedTokensServer(t, `"str"`), "the server's cached_tokens values were invalid and dropped"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			args := []string{"profile", "-m", "mock-model", "-u", tc.url, "--ui", "none", "--isl", "16", "--osl", "4",
				"--num-dataset-entries", "4", "--request-count", "4", "--reset-kv-cache", "--artifact-dir", "out"}
			inv := cli(t, dir, args...)
			require.NotEqual(t, ExitUsage, inv.code, "stdout:\n%s\nstderr:\n%s", inv.stdout, inv.stderr)
			assert.Contains(t, inv.stdout, "KV cache reset unverifiable: "+tc.want)

			audit := readJSON(t, filepath.Join(dir, "out", "profile_export_aiperf.json"))["client_audit"].(map[string]any)
			assert.Equal(t, result.ResetUnverifiable, audit["kv_reset"])
			assert.Contains(t, audit["kv_reset_detail"], tc.want)
			assert.NotContains(t, audit["kv_reset_detail"], "--enable-prompt-tokens-details", "no server flag is missing")

			runs, err := openStore(t, dir).ListRuns(context.Background(), store.RunFilter{})
			require.NoError(t, err)
			require.Len(t, runs, 1)
			run, err := openStore(t, dir).GetRun(context.Background(), runs[0].ID, false)
			require.NoError(t, err)
			assert.Contains(t, run.Audit.KVResetDetail, tc.want)
		})
	}
}
