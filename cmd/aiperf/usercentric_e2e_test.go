package main

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// TestUserCentricRateAgainstMock: 4 users at 40 req/s send their turns in
// order, one at a time, each turn 100 ms (num_users/QPS) after the one
// before was due, or at its reply when that came later, read from the
// records' send times; new users start on the fixed spawn schedule
// (stagger 1/QPS), whatever the response times, so more than the first 4
// users send. (When every reply came within the gap, the total is 40 sends
// a second; the exact schedule is tested on the pure functions in
// internal/load.)
func TestUserCentricRateAgainstMock(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--user-centric-rate", "40", "--num-users", "4", "--session-turns-mean", "4",
		"--benchmark-duration", "1.2", "--artifact-dir", "out", "--no-store")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	lines := jsonlLines(t, filepath.Join(dir, "out", "profile_export.jsonl"))
	require.NotEmpty(t, lines)
	const gap, stagger = int64(100e6), int64(25e6)
	byUser := map[string][]jsonlLine{}
	first := lines[0].Metadata.ScheduledNs
	for _, l := range lines {
		byUser[l.Metadata.XCorrelationID] = append(byUser[l.Metadata.XCorrelationID], l)
		first = min(first, l.Metadata.ScheduledNs)
	}
	late := 0
	for id, turns := range byUser {
		slices.SortFunc(turns, func(a, b jsonlLine) int { return a.Metadata.TurnIndex - b.Metadata.TurnIndex })
		at := turns[0].Metadata.ScheduledNs - first
		assert.Zero(t, at%stagger, "user %s starts on the spawn schedule, at %d ns", id, at)
		for i := range turns {
			assert.Equal(t, i, turns[i].Metadata.TurnIndex, "user %s sends its turns in order", id)
			assert.Equal(t, turns[0].Metadata.SessionNum, turns[i].Metadata.SessionNum, "one session per user")
			if i == 0 {
				continue
			}
			prev, cur := turns[i-1].Metadata, turns[i].Metadata
			assert.GreaterOrEqual(t, cur.RequestStartNs, prev.RequestEndNs, "user %s: never two turns in flight", id)
			if d := cur.ScheduledNs - prev.ScheduledNs; d != gap {
				late++
				assert.Greater(t, d, gap, "user %s: turns at least num_users/QPS apart", id)
				assert.GreaterOrEqual(t, cur.ScheduledNs, prev.RequestEndNs, "user %s: a turn later than the gap waited for its reply", id)
			}
		}
	}
	assert.Greater(t, len(byUser), 4, "new users join as old ones finish")
	if late > 0 {
		t.Logf("%d turns waited for a late reply: the total rate is not checked", late)
		return
	}
	window := 0
	for _, l := range lines {
		if at := l.Metadata.ScheduledNs - first; at >= 200e6 && at < 1200e6 {
			window++
		}
	}
	assert.InDelta(t, 40, window, 6, "40 sends a second over the steady second")
}
