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
	lines, first := userCentricRun(t, m.URL, "40", "4", "1.2")
	const gap, stagger = int64(100e6), int64(25e6)
	byUser := map[string][]jsonlLine{}
	for _, l := range lines {
		byUser[l.Metadata.XCorrelationID] = append(byUser[l.Metadata.XCorrelationID], l)
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

// TestUserCentricSendsNothingAtTheDurationsEnd: user-centric turns fall on
// a 1/QPS grid from the phase's start, so one is due exactly when a 0.5 s
// --benchmark-duration ends. As in rate mode it is never sent: it went out
// or not as the turn's timer or the duration's fired first, so the same run
// sent 10 or 11 requests. Each of several runs (the race went either way)
// sends only turns due before the end.
func TestUserCentricSendsNothingAtTheDurationsEnd(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	const end = int64(500e6)
	for run := range 8 {
		lines, first := userCentricRun(t, m.URL, "20", "2", "0.5")
		for _, l := range lines {
			assert.Less(t, l.Metadata.ScheduledNs-first, end, "run %d: a turn due at or after the 0.5 s duration was sent", run)
		}
	}
}

// userCentricRun profiles url in user-centric mode (rate, users, 4-turn
// sessions, a duration in seconds) and returns its profiling records and
// the earliest one's schedule: the phase's start, where a user's first
// turn is due.
func userCentricRun(t *testing.T, url, rate, users, duration string) (lines []jsonlLine, first int64) {
	t.Helper()
	dir := t.TempDir()
	inv := cli(t, dir, quick(url, "--user-centric-rate", rate, "--num-users", users, "--session-turns-mean", "4",
		"--benchmark-duration", duration, "--artifact-dir", "out", "--no-store")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	lines = jsonlLines(t, filepath.Join(dir, "out", "profile_export.jsonl"))
	require.NotEmpty(t, lines)
	first = lines[0].Metadata.ScheduledNs
	for _, l := range lines {
		first = min(first, l.Metadata.ScheduledNs)
	}
	return lines, first
}
