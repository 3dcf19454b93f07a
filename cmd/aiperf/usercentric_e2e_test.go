package main

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// TestUserCentricRateAgainstMock: 4 users at 40 req/s keep each user's
// turns 100 ms apart (num_users/QPS), one at a time, and 40 sends a second
// in all, read from the records' send times.
func TestUserCentricRateAgainstMock(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--user-centric-rate", "40", "--num-users", "4", "--session-turns-mean", "4",
		"--benchmark-duration", "1.2", "--artifact-dir", "out", "--no-store")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	lines := jsonlLines(t, filepath.Join(dir, "out", "profile_export.jsonl"))
	require.NotEmpty(t, lines)
	const gap = int64(100e6)
	byUser := map[string][]jsonlLine{}
	first := lines[0].Metadata.ScheduledNs
	for _, l := range lines {
		byUser[l.Metadata.XCorrelationID] = append(byUser[l.Metadata.XCorrelationID], l)
		first = min(first, l.Metadata.ScheduledNs)
	}
	exact, total := 0, 0
	for id, turns := range byUser {
		slices.SortFunc(turns, func(a, b jsonlLine) int { return a.Metadata.TurnIndex - b.Metadata.TurnIndex })
		for i := range turns {
			assert.Equal(t, i, turns[i].Metadata.TurnIndex, "user %s sends its turns in order", id)
			assert.Equal(t, turns[0].Metadata.SessionNum, turns[i].Metadata.SessionNum, "one session per user")
			if i == 0 {
				continue
			}
			d := turns[i].Metadata.ScheduledNs - turns[i-1].Metadata.ScheduledNs
			assert.GreaterOrEqual(t, d, gap, "user %s: turns at least num_users/QPS apart", id)
			assert.GreaterOrEqual(t, turns[i].Metadata.RequestStartNs, turns[i-1].Metadata.RequestEndNs,
				"user %s: never two turns in flight", id)
			total++
			if d == gap {
				exact++
			}
		}
	}
	assert.Greater(t, exact*5, total*4, "the mock answers within the gap: the gap holds exactly")
	window := 0
	for _, l := range lines {
		if at := l.Metadata.ScheduledNs - first; at >= 200e6 && at < 1200e6 {
			window++
		}
	}
	assert.InDelta(t, 40, window, 6, "40 sends a second over the steady second")
	assert.Greater(t, len(byUser), 4, "new users join as old ones finish")
}
