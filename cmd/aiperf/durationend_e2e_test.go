package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// TestNothingSentAfterTheDuration: a request claimed in time but not on
// the wire when --benchmark-duration ends is not sent, counted and said. At
// concurrency 3 under --prefill-concurrency 1, the three slots claim their
// first request at once; one goes out, and the two others wait for its
// first token (2 s, after the 1 s duration). They went out then, after the
// duration (the second at 2 s, the third at 4 s), and were profiled; now
// neither is sent, and a warning says how many were due but not sent.
func TestNothingSentAfterTheDuration(t *testing.T) {
	m := startMock(t, mock.Config{TTFT: 2000, ITL: 1})
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--concurrency", "3", "--prefill-concurrency", "1", "--benchmark-duration", "1",
		"--benchmark-grace-period", "8", "--artifact-dir", "out", "--no-store")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	lines := jsonlLines(t, filepath.Join(dir, "out", "profile_export.jsonl"))
	require.NotEmpty(t, lines)
	start := lines[0].Metadata.ScheduledNs // the slots claimed at the start
	for _, l := range lines {
		start = min(start, l.Metadata.ScheduledNs)
	}
	for _, l := range lines {
		assert.Less(t, l.Metadata.RequestStartNs-start, int64(1e9), "a request went out after the 1 s duration")
	}
	assert.Len(t, lines, 1, "only the first slot's request went out before the end")
	const said = "2 requests came due before the --benchmark-duration ended but were not sent"
	assert.Contains(t, inv.stdout+inv.stderr, said, "the console says so")
	audit := readJSON(t, filepath.Join(dir, "out", "profile_export_aiperf.json"))["client_audit"].(map[string]any)
	warnings, _ := audit["warnings"].([]any)
	assert.True(t, slices.ContainsFunc(warnings, func(w any) bool { return strings.HasPrefix(w.(string), said) }),
		"client_audit's warnings say so: %v", warnings)
}
