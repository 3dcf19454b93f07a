package dataset

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
