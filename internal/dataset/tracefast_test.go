package dataset

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var fastSeeds = []string{
	`{"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]}`,
	`{"input_length":10,"hash_ids":[]}`,
	` { "session_id" : "s-1", "delay": 2.5e3, "input_length": 1 } `,
	`{"timestamp": -0, "input_length": 1}`,
	`{"timestamp": -1, "input_length": 1}`,
	`{"timestamp": 1e999, "input_length": 1}`,
	`{"timestamp": 1e300, "input_length": 1}`,
	`{"session_id": "s", "delay": 1e18, "input_length": 1}`,
	`{"input_length": 5.0}`,
	`{"input_length": 01}`,
	`{"input_length": 0}`,
	`{"input_length": 16777217}`,
	`{"input_length": 600, "hash_ids": [1, 2, 3]}`,
	`{"hash_ids": [1]}`,
	`{"Input_Length": 4}`,
	`{"input_length": 4, "input_length": 5}`,
	`{"input_length": 4, "session_id": "a\"b"}`,
	`{"input_length": 4, "output_length": 0}`,
	`{"input_length": 4, "output_length": 99999999999}`,
	`{"input_length": 4, "hash_ids": [1,]}`,
	`{"input_length": 4, "hash_ids": [9223372036854775808]}`,
	`{"input_length": 4} x`,
	`{"input_length": 4, "type": "mooncake_trace"}`,
	`{"text_input": "hi"}`,
	`{"input_length": null}`,
	`[1]`,
	`{"input_length": 4,}`,
}

// Whatever the fast path accepts, the full check accepts, with the same
// values: it only ever saves the full check's work.
func FuzzFastTraceRow(f *testing.F) {
	for _, s := range fastSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		fast, ok := fastTraceRow(line, 4)
		if !ok {
			return
		}
		_, r, ps := decodeMooncake(line, 4)
		require.Nil(t, ps, "the fast path accepted %q", line)
		slow := rowOf(r)
		if math.IsNaN(slow.Timestamp) {
			require.True(t, math.IsNaN(fast.Timestamp))
			slow.Timestamp, fast.Timestamp = 0, 0
		}
		if math.IsNaN(slow.Delay) {
			require.True(t, math.IsNaN(fast.Delay))
			slow.Delay, fast.Delay = 0, 0
		}
		if len(slow.HashIDs) == 0 && len(fast.HashIDs) == 0 {
			slow.HashIDs, fast.HashIDs = nil, nil
		}
		require.Equal(t, slow, fast, "%q", line)
	})
}

func TestFastTraceRowTakesTheCommonShape(t *testing.T) {
	row, ok := fastTraceRow([]byte(fastSeeds[0]), 512)
	require.True(t, ok)
	assert.Equal(t, 6758, row.InputLength)
	assert.Len(t, row.HashIDs, 14)
	_, ok = fastTraceRow([]byte(fastSeeds[2]), 512)
	assert.True(t, ok)
}

func TestFastIntegers(t *testing.T) {
	for text, want := range map[string]int64{"0": 0, "-0": 0, "42": 42, "9223372036854775807": math.MaxInt64,
		"-9223372036854775808": math.MinInt64} {
		p := fastParser{b: []byte(text)}
		n, ok := p.integer()
		assert.True(t, ok, text)
		assert.Equal(t, want, n, text)
	}
	for _, text := range []string{"9223372036854775808", "-9223372036854775809", "99999999999999999999999", "1.5", "01", "-"} {
		p := fastParser{b: []byte(text)}
		_, ok := p.integer()
		assert.False(t, ok, text)
	}
}
