package main

import (
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// uuid4 is the canonical form of a version-4 UUID.
var uuid4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// TestRequestIDsAreUUIDs: as AIPerf, every request carries a fresh
// version-4 UUID as X-Request-ID and every session one as
// X-Correlation-ID, and profile_export.jsonl names each request by the ids
// the server received (x_request_id, x_correlation_id).
func TestRequestIDsAreUUIDs(t *testing.T) {
	var got captured
	m := startMockBehind(t, mock.Config{}, got.wrap)
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--request-count", "12", "--concurrency", "3", "--conversation-turn-mean", "2",
		"--warmup-request-count", "2", "--artifact-dir", filepath.Join(dir, "out"), "--no-store")...)
	require.Equal(t, 0, inv.code, inv.stderr)

	lines := jsonlLines(t, filepath.Join(dir, "out", "profile_export.jsonl"))
	require.Len(t, lines, 12)
	received := map[string]string{} // X-Request-ID → X-Correlation-ID, as the server received them
	for _, r := range got.all() {
		received[r.header.Get("X-Request-ID")] = r.header.Get("X-Correlation-ID")
	}
	require.Len(t, received, 14, "warmup and profiling requests, each its own id")
	sessions := map[string]int{}
	for _, l := range lines {
		id, corr := l.Metadata.XRequestID, l.Metadata.XCorrelationID
		assert.Regexp(t, uuid4, id)
		assert.Regexp(t, uuid4, corr)
		sent, ok := received[id]
		require.True(t, ok, "request %s was received under its exported id", id)
		assert.Equal(t, sent, corr, "x_correlation_id is the X-Correlation-ID sent")
		assert.NotEqual(t, id, corr)
		sessions[corr]++
	}
	assert.Less(t, len(sessions), len(lines), "a session's turns share their correlation id")
	for corr, n := range sessions {
		assert.LessOrEqual(t, n, 2, "session %s", corr)
	}
}
