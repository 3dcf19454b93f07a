package metrics

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Goodput counts the successful requests that meet every SLO, by each
// metric's direction, over the benchmark's duration and over every request
// attempted; a request without a value of a named metric is not good.
func TestGoodput(t *testing.T) {
	const msNs = 1_000_000
	rec := func(sent, ttftMs, latencyMs int64, osl int) Record {
		stamps := []int64{sent + ttftMs*msNs}
		if osl > 1 {
			stamps = append(stamps, sent+latencyMs*msNs)
		}
		return Record{SentNs: sent, EndNs: sent + latencyMs*msNs, ResponseNs: StampsOf(stamps...), OutputTokens: osl,
			InputTokens: 10}
	}
	records := []Record{
		rec(0, 100, 1000, 10), // ttft 100, itl 100: good

		rec(0, 300, 1200, 10), // ttft too slow
		rec(0, 100, 4000, 10), // itl 433: too slow
		rec(0, 150, 150, 1),   // no ITL: not good
		{SentNs: 0, EndNs: 2e9, Error: &Error{Type: "HTTPError"}},                          // failed
		{SentNs: 0, EndNs: 2e9, Cancelled: true, ResponseNs: StampsOf(1), OutputTokens: 9}, // cancelled: not counted
	}
	s := Summarize(records, true, SLO{TagTTFT, 200}, SLO{TagITL, 150})
	get := func(tag string) float64 {
		m, ok := s.Get(tag)
		require.True(t, ok, tag)
		return m.Value
	}
	assert.Equal(t, 1.0, get(TagGoodRequestCount))
	assert.InDelta(t, 1/get(TagBenchmarkDuration), get(TagGoodput), 1e-12)
	assert.Equal(t, 1.0/5, get(TagGoodRequestFraction), "1 good of 4 successful + 1 failed")

	// Per-user throughput is a floor: 10 tokens/s per user at ITL 100 ms.
	s = Summarize(records, true, SLO{TagPerUserThroughput, 5})
	assert.Equal(t, 2.0, get(TagGoodRequestCount), "itl 100 ms (twice: ttft is not an objective here) = 10 tok/s ≥ 5; 433 ms = 2.3 < 5")

	_, ok := Summarize(records, true).Get(TagGoodput)
	assert.False(t, ok, "no SLOs, no goodput")
	s = Summarize(records, false, SLO{TagTTFT, 1e9})
	assert.Zero(t, get(TagGoodRequestCount), "no TTFT without streaming")
}
