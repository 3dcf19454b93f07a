package metrics

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// every is an rttOf giving every record the same round trip.
func every(ns int64) func(*Record) int64 { return func(*Record) int64 { return ns } }

// TestAdjustForNetwork: with no request below the RTT, every statistic of
// TTFT and request latency is the source's less the RTT, the spread
// unchanged, each adjusted metric right after its source; the raw metrics
// and the stream's gaps (TTST, ITL) untouched; network_rtt its value.
func TestAdjustForNetwork(t *testing.T) {
	s := Summarize(summaryRecords(), true) // TTFT 10, 20, 30 ms; latencies 14, 25, 30 ms
	raw := Summarize(summaryRecords(), true)
	adj := AdjustForNetwork(&s, summaryRecords(), true, every(4*msNs), 0)
	assert.Empty(t, adj.Clamped)
	assert.Equal(t, 4*msNs, adj.MeanRTTNs)
	assert.Zero(t, adj.Left)

	for _, c := range []struct{ adjusted, source string }{
		{TagNetworkAdjustedTTFT, TagTTFT}, {TagNetworkAdjustedLatency, TagRequestLatency}} {
		a, src := metric(t, s, c.adjusted).Stats, metric(t, raw, c.source).Stats
		require.NotNil(t, a)
		for _, pair := range [][2]float64{{a.Avg, src.Avg}, {a.Min, src.Min}, {a.Max, src.Max}, {a.P1, src.P1}, {a.P50, src.P50},
			{a.P90, src.P90}, {a.P99, src.P99}} {
			assert.InDelta(t, pair[1]-4, pair[0], 1e-9, c.adjusted)
		}
		assert.Equal(t, src.Std, a.Std, "a constant does not change the spread")
		assert.Equal(t, src.Count, a.Count)
		assert.InDelta(t, a.Avg*float64(a.Count), a.Sum, 1e-9)
		assert.Equal(t, UnitMs, metric(t, s, c.adjusted).Unit)
	}
	assert.Equal(t, 4.0, metric(t, s, TagNetworkRTT).Value)
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
	assert.Zero(t, AdjustForNetwork(&same, summaryRecords(), true, every(0), 0).MeanRTTNs)
	assert.Equal(t, raw, same, "a zero RTT adds nothing")
	assert.Contains(t, RecordTags(), TagNetworkAdjustedTTFT, "a distribution, for compare")
	assert.Contains(t, ScalarTags(), TagNetworkRTT)
}

// TestAdjustForNetworkClampsEachRequest: a round trip above some requests'
// values floors those requests at 0, and every statistic (mean, sum,
// spread, percentiles) is that of the floored values: a coherent
// distribution, the clamped metric named.
func TestAdjustForNetworkClampsEachRequest(t *testing.T) {
	s := Summarize(summaryRecords(), true)
	adj := AdjustForNetwork(&s, summaryRecords(), true, every(12*msNs), 0)
	assert.Equal(t, []string{TagNetworkAdjustedTTFT}, adj.Clamped, "a TTFT of 10 ms is below 12")
	assert.Equal(t, Compute([]float64{0, 8, 18}), *metric(t, s, TagNetworkAdjustedTTFT).Stats)
	assert.Equal(t, Compute([]float64{2, 13, 18}), *metric(t, s, TagNetworkAdjustedLatency).Stats)

	s = Summarize(summaryRecords(), true)
	adj = AdjustForNetwork(&s, summaryRecords(), true, every(35*msNs), 0)
	ttft := metric(t, s, TagNetworkAdjustedTTFT).Stats
	assert.Equal(t, Stats{Count: 3}, *ttft, "every request at 0: a mean, sum and spread of 0, and a max of 0 too")
	assert.Equal(t, []string{TagNetworkAdjustedTTFT, TagNetworkAdjustedLatency}, adj.Clamped)
}

// TestAdjustForNetworkPerOrigin: each request is adjusted by its own
// origin's round trip; a request whose origin has none is left out of the
// adjusted metrics and counted; network_rtt is the mean taken out.
func TestAdjustForNetworkPerOrigin(t *testing.T) {
	records := summaryRecords() // TTFT 10, 20, 30 ms
	records[0].URL, records[1].URL, records[2].URL = 0, 1, 0
	byURL := func(r *Record) int64 { return []int64{2 * msNs, 5 * msNs}[r.URL] }
	s := Summarize(records, true)
	adj := AdjustForNetwork(&s, records, true, byURL, 0)
	assert.Equal(t, Compute([]float64{8, 15, 28}), *metric(t, s, TagNetworkAdjustedTTFT).Stats)
	assert.Equal(t, Compute([]float64{12, 20, 28}), *metric(t, s, TagNetworkAdjustedLatency).Stats)
	assert.Equal(t, int64(3*msNs), adj.MeanRTTNs, "(2 + 5 + 2) / 3 ms")
	assert.InDelta(t, 3.0, metric(t, s, TagNetworkRTT).Value, 1e-12)

	none := func(r *Record) int64 { return []int64{2 * msNs, 0}[r.URL] }
	s = Summarize(records, true)
	adj = AdjustForNetwork(&s, records, true, none, 0)
	assert.Equal(t, 1, adj.Left, "the request to the origin with no round trip")
	assert.Equal(t, Compute([]float64{8, 28}), *metric(t, s, TagNetworkAdjustedTTFT).Stats)

	s = Summarize(records, true)
	adj = AdjustForNetwork(&s, records, true, every(0), 7*msNs)
	assert.Equal(t, 3, adj.Left)
	assert.Equal(t, 7.0, metric(t, s, TagNetworkRTT).Value, "no request adjusted: the fallback round trip is shown")
	_, ok := s.Get(TagNetworkAdjustedTTFT)
	assert.False(t, ok)
}
