package shard

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestEstimateTakesTheShortestRoundTrip(t *testing.T) {
	// The worker's clock is 5 ms ahead. A slow ping (its answer delayed on
	// the way back) skews its own estimate; the fastest one is within half
	// its round trip.
	const ahead = 5_000_000
	samples := []Sample{
		{T0: 1_000_000, TW: 1_000_000 + 100_000 + ahead, T1: 1_000_000 + 3_000_000}, // rtt 3 ms, answer late
		{T0: 10_000_000, TW: 10_000_000 + 50_000 + ahead, T1: 10_000_000 + 100_000}, // rtt 0.1 ms, symmetric
		{T0: 20_000_000, TW: 20_000_000 + 900_000 + ahead, T1: 20_000_000 + 1_000_000},
	}
	s := Estimate(samples)
	assert.Equal(t, int64(100_000), s.RTTNs)
	assert.Equal(t, int64(ahead), s.OffsetNs)
	assert.Equal(t, 3, s.Samples)
	assert.Equal(t, int64(ahead+100_000-1_500_000), samples[0].Offset(), "the slow ping alone is 1.4 ms off")
}

func TestOffsetOfABehindClock(t *testing.T) {
	s := Sample{T0: 2_000, TW: 2_300, T1: 5_000} // the midpoint is 3500: the worker is 1200 behind
	assert.Equal(t, int64(-1_200), s.Offset())
	assert.Equal(t, int64(3_000), s.RTT())
}
