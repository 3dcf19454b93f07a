package metrics

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStamps(t *testing.T) {
	for _, ts := range [][]int64{nil, {7}, {7, 9}, {5, 5, 6, 1 << 40, 1<<40 + 3}, {10, 4, 12}} {
		s := StampsOf(ts...)
		assert.Equal(t, len(ts), s.Len())
		if len(ts) == 0 {
			assert.Nil(t, s.Slice())
			assert.True(t, s.IsZero())
			continue
		}
		assert.Equal(t, ts, s.Slice(), "exact, a gap that goes back included")
		assert.Equal(t, ts[0], s.First())
		assert.Equal(t, ts[len(ts)-1], s.Last())
		second, ok := s.Second()
		assert.Equal(t, len(ts) >= 2, ok)
		if ok {
			assert.Equal(t, ts[1], second)
		}
		b, err := json.Marshal(s)
		require.NoError(t, err)
		var back Stamps
		require.NoError(t, json.Unmarshal(b, &back))
		assert.Equal(t, ts, back.Slice(), "JSON is the array of stamps: %s", b)
	}
}

// A 64-chunk stream with 4 ms gaps keeps 63 four-byte varints beside the
// first and last stamps: under half the 512 bytes of an []int64.
func TestStampsAreCompact(t *testing.T) {
	s := StampsFrom(64, func(i int) int64 { return 1e12 + int64(i)*4e6 })
	assert.Equal(t, 63*4, len(s.gaps))
	assert.Equal(t, int64(1e12+63*4e6), s.Last())
}
