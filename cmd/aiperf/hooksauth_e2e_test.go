package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// TestHookCallsSendTheURLsCredentials: behind a gateway that wants Basic
// auth on every route, credentials given in the --url reach the control
// calls as they reach the inference requests, and are never printed or
// exported.
func TestHookCallsSendTheURLsCredentials(t *testing.T) {
	const user, password = "alice", "s3cret-pw"
	m := startMockBehind(t, mock.Config{Fast: true}, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if u, p, ok := r.BasicAuth(); !ok || u != user || p != password {
				w.Header().Set("WWW-Authenticate", "Basic")
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	url := strings.Replace(m.URL, "http://", "http://"+user+":"+password+"@", 1)
	dir := t.TempDir()
	inv := cli(t, dir, quick(url, "--reset-kv-cache", "--server-profiler", "--request-count", "4",
		"--artifact-dir", "out")...)
	require.Equal(t, ExitOK, inv.code, "stdout:\n%s\nstderr:\n%s", inv.stdout, inv.stderr)
	ctl := m.control()
	assert.Equal(t, 1, ctl.ResetCount)
	assert.Equal(t, 1, ctl.ProfilerStarts)
	assert.Equal(t, 1, ctl.ProfilerStops)
	assert.NotContains(t, inv.stdout+inv.stderr, password)
	export, err := os.ReadFile(filepath.Join(dir, "out", "profile_export_aiperf.json"))
	require.NoError(t, err)
	assert.NotContains(t, string(export), password)
}
