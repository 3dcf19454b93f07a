package metrics

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNotStreamedHasNoStreamingMetrics: a reply under --streaming that
// arrived as one whole body has its latency, OSL and throughput, but
// none of the streaming-only metrics (its one stamp is the body's end,
// not a first token: TTFT would be its latency and ITL 0), as in AIPerf;
// no SLO on such a metric counts it good, where one on its latency does.
func TestNotStreamedHasNoStreamingMetrics(t *testing.T) {
	whole := Record{SentNs: 0, EndNs: 50 * msNs, ResponseNs: StampsOf(50 * msNs), FirstOutputNs: 50 * msNs,
		InputTokens: 100, OutputTokens: 50, Streaming: true, NotStreamed: true}
	got, lists, _ := values(RecordMetrics(whole, true))
	assert.Empty(t, lists)
	for _, tag := range streamingOnlyTags {
		assert.NotContains(t, got, tag)
	}
	assert.Equal(t, 50.0, got[TagRequestLatency])
	assert.Equal(t, 50.0, got[TagOSL])
	assert.Equal(t, 1000.0, got[TagE2EOutputThroughput], "50 tokens in 50 ms")

	streamed := whole
	streamed.NotStreamed, streamed.ResponseNs = false, StampsOf(5*msNs, 50*msNs)
	records := []Record{streamed, whole, whole}
	s := Summarize(records, true, SLO{TagITL, 1e6}, SLO{TagTTFT, 1e6})
	good, ok := s.Get(TagGoodRequestCount)
	require.True(t, ok)
	assert.Equal(t, 1.0, good.Value, "the streamed reply only")
	ttft, ok := s.Get(TagTTFT)
	require.True(t, ok)
	assert.Equal(t, 1, ttft.Stats.Count, "the streamed reply's TTFT only")

	s = Summarize(records, true, SLO{TagRequestLatency, 1e6})
	good, _ = s.Get(TagGoodRequestCount)
	assert.Equal(t, 3.0, good.Value, "every reply has a latency")
}
