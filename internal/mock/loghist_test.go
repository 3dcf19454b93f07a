package mock

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestLogBounds(t *testing.T) {
	assert.Equal(t, int64(time.Microsecond), logBounds[0])
	assert.Equal(t, int64(10*time.Microsecond), logBounds[logPerDecade])
	assert.Equal(t, int64(time.Millisecond), logBounds[3*logPerDecade])
	assert.Equal(t, int64(10*time.Second), logBounds[logSpan])
	for i := 1; i < len(logBounds); i++ {
		assert.Greater(t, logBounds[i], logBounds[i-1])
	}
}

func TestLogBucket(t *testing.T) {
	for _, c := range []struct {
		v    int64
		want int
	}{
		{-5, 0}, {0, 0}, {999, 0}, // below 1 µs
		{1000, 1}, {logBounds[1] - 1, 1}, // [1 µs, 1.023 µs)
		{logBounds[1], 2},
		{int64(2 * time.Millisecond), 3*logPerDecade + 31}, // log10(2) = 0.30103: [10^(30/100), 10^(31/100)) ms
		{int64(10*time.Second) - 1, logSpan},
		{int64(10 * time.Second), logSpan + 1},
		{int64(time.Hour), logSpan + 1},
	} {
		assert.Equal(t, c.want, logBucket(c.v), "v=%d", c.v)
	}
	for i := 1; i <= logSpan; i++ { // every bucket holds its lower edge
		assert.Equal(t, i, logBucket(logBounds[i-1]))
	}
}

func TestLogHistStats(t *testing.T) {
	var h logHist
	s := h.snapshot()
	assert.Equal(t, histStats{}, s.stats(), "empty")

	for range 90 {
		h.observe(int64(10 * time.Microsecond))
	}
	for range 10 {
		h.observe(int64(time.Millisecond))
	}
	s = h.snapshot()
	st := s.stats()
	assert.Equal(t, uint64(100), st.Count)
	assert.InDelta(t, 90*10+10*1000, st.SumUS, 1e-9, "the sum is exact")
	assert.InDelta(t, 109, st.MeanUS, 1e-9)
	assert.InDelta(t, 1000, st.MaxUS, 1e-9)
	assert.InDelta(t, 10, st.MinUS, 1e-9)
	// Quantiles land in the bucket of the value at their rank.
	inBucket := func(name string, got float64, v time.Duration) {
		i := logBucket(int64(v))
		lo, hi := float64(logBounds[i-1])/1e3, float64(logBounds[i])/1e3
		assert.True(t, got >= lo*(1-1e-12) && got <= hi*(1+1e-12), "%s %.3f µs outside [%.3f, %.3f]", name, got, lo, hi)
	}
	inBucket("p50", st.P50US, 10*time.Microsecond)
	inBucket("p90", st.P90US, 10*time.Microsecond)
	inBucket("p99", st.P99US, time.Millisecond)
	assert.LessOrEqual(t, st.P99US, st.MaxUS, "never above the largest")

	h.observe(int64(20 * time.Second)) // above the last edge
	h.observe(-int64(time.Microsecond))
	s = h.snapshot()
	assert.Equal(t, uint64(102), s.count)
	assert.Equal(t, float64(20*time.Second), s.quantile(1), "the top bucket reports the largest")
	assert.Equal(t, 0.0, s.quantile(0), "clamped to the least observation, a negative one counting as 0")

	var one logHist
	one.observe(int64(20*time.Millisecond + 123*time.Microsecond))
	s = one.snapshot()
	assert.Equal(t, float64(20*time.Millisecond+123*time.Microsecond), s.quantile(0.5), "a single observation is exact")
}

func TestLogHistConcurrent(t *testing.T) {
	var h logHist
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 1000 {
				h.observe(int64(g*1000 + i))
			}
		}()
	}
	for range 4 {
		<-done
	}
	s := h.snapshot()
	assert.Equal(t, uint64(4000), s.count)
	assert.Equal(t, int64(4000*3999/2), s.sum)
	assert.Equal(t, int64(3999), s.max)
	assert.Equal(t, int64(0), s.min)
}
