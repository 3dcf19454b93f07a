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

// TestGoodputDirectionIsAIPerfs: an SLO is a floor (the value at least the
// threshold) on every metric AIPerf flags LARGER_IS_BETTER, a ceiling (at
// most) on every other, as AIPerf's GoodRequestCountMetric._passes. The
// OSL, the prefill throughput per user and the usage prompt count are
// floors; a latency and a cache-miss count are ceilings.
func TestGoodputDirectionIsAIPerfs(t *testing.T) {
	rec := func(osl, isl int, ttftMs int64) Record {
		return Record{SentNs: 0, EndNs: 100 * msNs, ResponseNs: StampsOf(ttftMs*msNs, 100*msNs), InputTokens: isl,
			OutputTokens: osl, Usage: &Usage{PromptTokens: isl, CompletionTokens: osl, CacheMissTokens: new(isl / 2)}}
	}
	// OSL 5, 15, 25; ISL 100, 200, 300 (prefill 100/0.01 s = 10,000, 200/0.02 s = 10,000, 300/0.05 s = 6,000 tokens/s).
	records := []Record{rec(5, 100, 10), rec(15, 200, 20), rec(25, 300, 50)}
	good := func(slo SLO) float64 {
		return metric(t, Summarize(records, true, slo), TagGoodRequestCount).Value
	}
	assert.Equal(t, 1.0, good(SLO{TagOSL, 25}), "only OSL 25 is at least 25 (at most 25: all three)")
	assert.Equal(t, 2.0, good(SLO{TagPrefillPerUser, 8000}), "10,000 tokens/s twice")
	assert.Equal(t, 1.0, good(SLO{TagUsagePromptTokens, 300}), "300 prompt tokens")
	assert.Equal(t, 1.0, good(SLO{TagISL, 300}))
	assert.Equal(t, 1.0, good(SLO{TagOutputTokenCount, 25}))
	assert.Equal(t, 1.0, good(SLO{TagUsageCacheMissTokens, 50}), "a ceiling: 50 misses")
	assert.Equal(t, 1.0, good(SLO{TagTTFT, 10}), "a ceiling: 10 ms")
}

// TestGoodRequestFractionHeader: AIPerf's header and unit.
func TestGoodRequestFractionHeader(t *testing.T) {
	s := Summarize(summaryRecords()[:3], true, SLO{TagRequestLatency, 25})
	m := metric(t, s, TagGoodRequestFraction)
	assert.Equal(t, "GoodRequestFraction", m.Header)
	assert.Equal(t, UnitRatio, m.Unit)
}

// TestLargerIsBetterIsAIPerfsFlag: the record metrics AIPerf flags
// LARGER_IS_BETTER, each one this package computes, and image_throughput
// (our documented exception); where compare judges a metric
// higher-is-better without AIPerf's flag, it is named here.
func TestLargerIsBetterIsAIPerfsFlag(t *testing.T) {
	want := []string{TagPerUserThroughput, TagFullPerUser, TagE2EOutputThroughput, TagPrefillPerUser, TagOSL, TagISL,
		TagOutputTokenCount, TagReasoningTokenCount, TagUsagePromptTokens, TagUsageCacheReadTokens,
		TagUsageCompletionTokens, TagUsageReasoningTokens, TagUsageAcceptedPrediction, TagUsageTotalTokens,
		TagSpecAcceptanceLength, TagSpecDraftAcceptanceRate, TagSpecAcceptedPerVerified, TagRTFX,
		TagImageThroughput} // the last one ours: AIPerf does not flag it
	var got []string
	for _, tag := range RecordTags() {
		if LargerIsBetter(tag) {
			got = append(got, tag)
		}
	}
	assert.ElementsMatch(t, want, got)
	notFlagged := map[string]bool{TagHTTPConnectionReused: true, TagSpecAcceptedDraftTokens: true}
	for _, d := range sweepDefs { // AIPerf's sweep results, no registry metric: no flags
		notFlagged[d.tag] = true
	}
	for _, tag := range RecordTags() {
		if BetterOf(tag) == Higher && !notFlagged[tag] {
			assert.True(t, LargerIsBetter(tag), "%s: higher is better in compare but not a goodput floor", tag)
		}
		if LargerIsBetter(tag) {
			assert.NotEqual(t, Lower, BetterOf(tag), tag)
		}
	}
}

// TestGoodputTags: every record metric with one value per successful
// request can be an objective; the inter-chunk latencies (a list per
// request) and error_isl (a failed request's) cannot.
func TestGoodputTags(t *testing.T) {
	tags := GoodputTags()
	for _, tag := range RecordTags() {
		switch tag {
		case TagICL, TagErrorISL, TagNetworkAdjustedTTFT, TagNetworkAdjustedTTFO, TagNetworkAdjustedLatency:
			assert.NotContains(t, tags, tag)
		case TagEffectiveLatency, TagCreditToStartLatency: // run-level results, as AIPerf's (no registry metric)
			assert.NotContains(t, tags, tag)
		case TagEffectiveConcurrency, TagEffectiveDecodeThroughput, TagEffectivePrefillThroughput,
			TagEffectiveDecodeConcurrency, TagEffectivePrefillConcurrency, TagEffectiveTotalThroughput,
			TagEffectiveDecodePerUser, TagEffectivePrefillPerUser, TagTokensInFlight, TagActiveDecodeThroughput,
			TagActivePrefillThroughput, TagActiveDecodePerUser, TagActivePrefillPerUser, TagActiveTotalThroughput:
			assert.NotContains(t, tags, tag, "time-weighted over the run, no request's value")
		default:
			assert.Contains(t, tags, tag)
		}
	}
	assert.Contains(t, tags, TagPrefillPerUser)
	assert.Contains(t, tags, TagE2EOutputThroughput)
}
