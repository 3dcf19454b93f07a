package metrics

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAdjustForNetwork: every statistic of TTFT and request latency less
// the RTT, at least 0, the spread unchanged, each adjusted metric right
// after its source; the raw metrics and the stream's gaps (TTST, ITL)
// untouched; network_rtt its value; the clamped ones named; no RTT, no
// change.
func TestAdjustForNetwork(t *testing.T) {
	s := Summarize(summaryRecords(), true) // TTFT 10, 20, 30 ms; latencies 14, 25, 30 ms
	raw := Summarize(summaryRecords(), true)
	clamped := AdjustForNetwork(&s, 12*msNs)
	assert.Equal(t, []string{TagNetworkAdjustedTTFT}, clamped, "a TTFT of 10 ms is below 12")

	for _, c := range []struct{ adjusted, source string }{
		{TagNetworkAdjustedTTFT, TagTTFT}, {TagNetworkAdjustedLatency, TagRequestLatency}} {
		a, src := metric(t, s, c.adjusted).Stats, metric(t, raw, c.source).Stats
		require.NotNil(t, a)
		for _, pair := range [][2]float64{{a.Avg, src.Avg}, {a.Min, src.Min}, {a.Max, src.Max}, {a.P1, src.P1}, {a.P50, src.P50},
			{a.P90, src.P90}, {a.P99, src.P99}} {
			assert.InDelta(t, max(0, pair[1]-12), pair[0], 1e-9, c.adjusted)
		}
		assert.Equal(t, src.Std, a.Std, "a constant does not change the spread")
		assert.Equal(t, src.Count, a.Count)
		assert.InDelta(t, a.Avg*float64(a.Count), a.Sum, 1e-9)
		assert.Equal(t, UnitMs, metric(t, s, c.adjusted).Unit)
	}
	assert.Zero(t, metric(t, s, TagNetworkAdjustedTTFT).Stats.Min, "clamped at 0")
	assert.Equal(t, 12.0, metric(t, s, TagNetworkRTT).Value)
	for _, tag := range []string{TagTTFT, TagTTST, TagRequestLatency, TagITL} {
		assert.Equal(t, metric(t, raw, tag), metric(t, s, tag), "%s is left as it was", tag)
	}
	_, ok := s.Get("network_adjusted_inter_token_latency")
	assert.False(t, ok, "the stream's gaps hold no round trip")
	index := func(tag string) int {
		for i, m := range s.Metrics {
			if m.Tag == tag {
				return i
			}
		}
		return -1
	}
	assert.Equal(t, index(TagTTFT)+1, index(TagNetworkAdjustedTTFT))
	assert.Equal(t, index(TagRequestLatency)+1, index(TagNetworkAdjustedLatency))

	same := Summarize(summaryRecords(), true)
	assert.Empty(t, AdjustForNetwork(&same, 0))
	assert.Equal(t, raw, same, "a zero RTT adds nothing")
	assert.Contains(t, RecordTags(), TagNetworkAdjustedTTFT, "a distribution, for compare")
	assert.Contains(t, ScalarTags(), TagNetworkRTT)
}
