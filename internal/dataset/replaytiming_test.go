package dataset

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --ignore-trace-delays drops a file's timestamps and delays;
// --inter-turn-delay-cap-seconds clamps the delays.
func TestReplayTimingControls(t *testing.T) {
	const file = "testdata/files/multi_turn.jsonl"
	_, convs := open(t, Options{InputFile: file, IgnoreDelays: true})
	for _, c := range convs {
		for k, turn := range c.Turns {
			assert.Zero(t, turn.DelayMs, "%s turn %d", c.ID, k)
			assert.False(t, turn.HasTimestamp, "%s turn %d", c.ID, k)
		}
	}
	_, convs = open(t, Options{InputFile: file, DelayCapMs: ptr(1500.0)})
	assert.Equal(t, 1500.0, convs[0].Turns[1].DelayMs, "2000 ms clamped")
	assert.Equal(t, 5000.0, convs[0].Turns[2].TimestampMs, "a timestamp is no delay")

	const trace = "testdata/files/mooncake_sessions.jsonl"
	d, convs := open(t, Options{InputFile: trace, IgnoreDelays: true, FixedSchedule: true})
	assert.NotNil(t, d.Schedule(), "no effect on a fixed schedule")
	assert.True(t, convs[0].Turns[0].HasTimestamp)
	assert.Equal(t, 300.0, convs[0].Turns[1].DelayMs)
	_, convs = open(t, Options{InputFile: trace, IgnoreDelays: true})
	assert.False(t, convs[0].Turns[0].HasTimestamp)
	assert.Zero(t, convs[0].Turns[1].DelayMs)
}

// sessionsTrace is n sessions of two rows each, a session every second.
func sessionsTrace(t *testing.T, n int) string {
	var lines []string
	for i := range n {
		lines = append(lines,
			fmt.Sprintf(`{"session_id": "s%d", "timestamp": %d, "input_length": 5, "output_length": 2}`, i, i*1000),
			fmt.Sprintf(`{"session_id": "s%d", "timestamp": %d, "input_length": 9, "output_length": 2}`, i, i*1000+500))
	}
	return writeFile(t, "sessions.jsonl", lines...)
}

func convIDs(convs []Conversation) []string {
	var ids []string
	for _, c := range convs {
		ids = append(ids, c.ID)
	}
	return ids
}

// --trace-session-sample-ratio keeps max(1, round(R × sessions)) whole
// sessions, the same ones for the same seed, in file order.
func TestSessionSampling(t *testing.T) {
	path := sessionsTrace(t, 10)
	o := Options{InputFile: path, FixedSchedule: true, Seed: 7, Replay: Replay{SampleRatio: 0.3}}
	d, convs := open(t, o)
	require.Len(t, convs, 3)
	assert.Equal(t, 6, Turns(d), "whole sessions: both rows of each")
	for _, c := range convs {
		assert.Len(t, c.Turns, 2, c.ID)
	}
	_, again := open(t, o)
	assert.Equal(t, convIDs(convs), convIDs(again), "the same seed picks the same sessions")
	assert.True(t, slices.IsSortedFunc(d.Schedule(), func(a, b Timed) int { return cmpFloat(a.AtMs, b.AtMs) }))
	o.Replay.SampleRatio = 0.01
	_, convs = open(t, o)
	assert.Len(t, convs, 1, "at least one session")
	o.Replay.SampleRatio = 1
	_, convs = open(t, o)
	assert.Len(t, convs, 10)
}

// --max-idle-gap-cap-seconds collapses every gap between consecutive
// requests (across sessions) to the cap in replay time.
func TestIdleGapCap(t *testing.T) {
	path := writeFile(t, "gaps.jsonl",
		`{"timestamp": 0, "input_length": 5}`,
		`{"session_id": "s", "timestamp": 100, "input_length": 5}`,
		`{"timestamp": 100000, "input_length": 5}`,
		`{"session_id": "s", "timestamp": 100050, "input_length": 5}`,
		`{"timestamp": 3600000, "input_length": 5}`)
	d, convs := open(t, Options{InputFile: path, FixedSchedule: true, Replay: Replay{IdleGapCapMs: ptr(1000.0)}})
	var at []float64
	for _, s := range d.Schedule() {
		at = append(at, s.AtMs)
	}
	assert.Equal(t, []float64{0, 100, 1100, 2150}, at)
	assert.Equal(t, 1150.0, convs[1].Turns[1].TimestampMs, "a later turn's timestamp is collapsed too")
	d, _ = open(t, Options{InputFile: path, FixedSchedule: true, Replay: Replay{IdleGapCapMs: ptr(1000.0), Speedup: 4}})
	assert.Equal(t, 8150.0, d.Schedule()[3].AtMs, "the cap is replay time: 4 s of recorded time at speed-up 4")
}

// --trace-idle-gap-cap-seconds compresses a session's gaps;
// --no-open-loop-replay turns its later timestamps into delays after the
// previous reply; --open-loop-strict makes every row a session.
func TestSessionTiming(t *testing.T) {
	path := writeFile(t, "session.jsonl",
		`{"session_id": "s", "timestamp": 1000, "input_length": 5}`,
		`{"session_id": "s", "timestamp": 2000, "input_length": 5}`,
		`{"session_id": "s", "timestamp": 62000, "input_length": 5}`,
		`{"session_id": "s", "delay": 90000, "input_length": 5}`)
	at := func(c Conversation) (ts, delay []float64) {
		for _, turn := range c.Turns {
			ts, delay = append(ts, turn.TimestampMs), append(delay, turn.DelayMs)
		}
		return ts, delay
	}
	_, convs := open(t, Options{InputFile: path, FixedSchedule: true, DelayCapMs: ptr(100.0),
		Replay: Replay{TraceIdleGapCapMs: ptr(5000.0)}})
	ts, delay := at(convs[0])
	assert.Equal(t, []float64{1000, 2000, 7000, 0}, ts)
	assert.Equal(t, []float64{0, 0, 0, 5000}, delay, "the trace cap replaces --inter-turn-delay-cap-seconds")

	_, convs = open(t, Options{InputFile: path, FixedSchedule: true, Replay: Replay{ClosedLoop: true, Speedup: 2}})
	ts, delay = at(convs[0])
	assert.Equal(t, []float64{1000, 0, 0, 0}, ts)
	assert.Equal(t, []float64{0, 500, 30000, 45000}, delay, "recorded gaps and delays, at the speed-up")
	assert.False(t, convs[0].Turns[1].HasTimestamp)

	d, convs := open(t, Options{InputFile: sessionsTrace(t, 2), FixedSchedule: true, Replay: Replay{Strict: true}})
	assert.Len(t, convs, 4)
	assert.Equal(t, 4, Turns(d))
	assert.Len(t, d.Schedule(), 4)
}

// The controls refuse inputs that are not indexed JSONL files.
func TestReplayControlsRefused(t *testing.T) {
	_, err := Open(context.Background(), o200k(t), Options{InputFile: "testdata/files", Replay: Replay{Strict: true}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--open-loop-strict replays the sessions of a JSONL file")
}

// A start offset that drops a session's first timed turn drops a turn timed
// by a delay after it too, which would otherwise be the session's first turn
// with nothing to be timed from: the trace is replayed, not refused for a
// line that is fine. A later turn of a session with its own timestamp inside
// the window stays, and so does a delay after it (rows are dropped one by
// one, as AIPerf drops them: TestSchedule's window).
func TestOffsetDropsTheDelaysOfADroppedTurn(t *testing.T) {
	path := writeFile(t, "offsets.jsonl",
		`{"session_id": "a", "timestamp": 0, "input_length": 5}`,
		`{"session_id": "a", "timestamp": 400, "input_length": 5}`,
		`{"session_id": "b", "timestamp": 100, "input_length": 5}`,
		`{"session_id": "a", "delay": 100, "input_length": 5}`,
		`{"session_id": "b", "delay": 600, "input_length": 5}`)
	_, convs := open(t, Options{InputFile: path, FixedSchedule: true, StartOffsetMs: ptr(300.0)})
	require.Len(t, convs, 1, "session b lost its timed turn, and its delay with it")
	assert.Equal(t, "a", convs[0].ID)
	require.Len(t, convs[0].Turns, 2, "a's turn at 400 and the delay after it")
	assert.True(t, convs[0].Turns[0].HasTimestamp)
	assert.Equal(t, 100.0, convs[0].Turns[1].DelayMs)
}
