package metrics

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func ptr(n int) *int { return &n }

// TestRecordMetricsServerUsageDetails: every count a server's usage
// reports becomes its AIPerf metric, in AIPerf's order, and the reasoning
// count is judged against the client's like the prompt and completion.
func TestRecordMetricsServerUsageDetails(t *testing.T) {
	r := reasoningStream() // client: 100 prompt, 3 output + 1 reasoning tokens
	r.Usage = &Usage{PromptTokens: 120, CompletionTokens: 4, TotalTokens: new(124), ReasoningTokens: 2, ReasoningReported: true,
		CachedTokens: ptr(96), CacheWriteTokens: ptr(16), CacheMissTokens: ptr(8),
		AcceptedPredictionTokens: ptr(3), RejectedPredictionTokens: ptr(1)}
	got, _, order := values(RecordMetrics(r, true))
	want := map[string]float64{
		TagUsagePromptTokens:       120,
		TagUsageCacheReadTokens:    96,
		TagUsageCacheWriteTokens:   16,
		TagUsageCacheMissTokens:    8,
		TagUsageCompletionTokens:   4,
		TagUsageReasoningTokens:    2,
		TagUsageAcceptedPrediction: 3,
		TagUsageRejectedPrediction: 1,
		TagUsageTotalTokens:        124,
		TagUsagePromptDiffPct:      20,  // |120 − 100| / 100
		TagUsageCompletionDiffPct:  0,   // 4 against 3 + 1
		TagUsageReasoningDiffPct:   100, // |2 − 1| / 1
	}
	for tag, v := range want {
		assert.InDelta(t, v, got[tag], 1e-9, tag)
	}
	var usage []string
	for _, tag := range order {
		if _, ok := want[tag]; ok {
			usage = append(usage, tag)
		}
	}
	assert.Equal(t, []string{TagUsagePromptTokens, TagUsageCacheReadTokens, TagUsageCacheWriteTokens,
		TagUsageCacheMissTokens, TagUsageCompletionTokens, TagUsageReasoningTokens, TagUsageAcceptedPrediction,
		TagUsageRejectedPrediction, TagUsageTotalTokens, TagUsagePromptDiffPct, TagUsageCompletionDiffPct,
		TagUsageReasoningDiffPct}, usage)

	// A count not reported is not a zero; a reported zero is.
	r.Usage = &Usage{PromptTokens: 100, CompletionTokens: 4, TotalTokens: new(104), CachedTokens: ptr(0)}
	got, _, _ = values(RecordMetrics(r, true))
	assert.Contains(t, got, TagUsageCacheReadTokens)
	assert.Zero(t, got[TagUsageCacheReadTokens])
	for _, absent := range []string{TagUsageCacheWriteTokens, TagUsageCacheMissTokens, TagUsageReasoningTokens,
		TagUsageReasoningDiffPct, TagUsageAcceptedPrediction, TagUsageRejectedPrediction} {
		assert.NotContains(t, got, absent)
	}
	r.Usage.ReasoningReported = true
	got, _, _ = values(RecordMetrics(r, true))
	assert.Contains(t, got, TagUsageReasoningTokens, "reasoning_tokens: 0 was reported")
	assert.InDelta(t, 100, got[TagUsageReasoningDiffPct], 1e-9, "the server saw none of the client's reasoning token")

	// Untrusted usage gives none of its counts.
	r.Usage = &Usage{PromptTokens: 100, CachedTokens: ptr(64), Untrusted: "completion_tokens is missing"}
	got, _, _ = values(RecordMetrics(r, true))
	assert.NotContains(t, got, TagUsageCacheReadTokens)
}

// TestPromptCacheTotals: the cache totals sum what the successful requests
// with trusted usage reported, and the overall cache-read share weighs
// every prompt token alike (AIPerf's overall_usage_prompt_cache_read_pct).
func TestPromptCacheTotals(t *testing.T) {
	ok := func(u *Usage) Record {
		return Record{SentNs: 0, EndNs: 10 * msNs, ResponseNs: StampsOf(5*msNs, 9*msNs), InputTokens: u.PromptTokens,
			OutputTokens: 2, Usage: u}
	}
	records := []Record{
		ok(&Usage{PromptTokens: 120, CompletionTokens: 2, TotalTokens: new(122), CachedTokens: ptr(96), CacheWriteTokens: ptr(16)}),
		ok(&Usage{PromptTokens: 80, CompletionTokens: 2, TotalTokens: new(82), CachedTokens: ptr(0), ReasoningReported: true}),
		ok(&Usage{PromptTokens: 100, CompletionTokens: 2, TotalTokens: new(102)}), // no cache report
		ok(&Usage{PromptTokens: 50, CachedTokens: ptr(50), Untrusted: "completion_tokens is missing"}),
		{SentNs: 0, EndNs: 3 * msNs, InputTokens: 64, Error: &Error{Type: "HTTPError"},
			Usage: &Usage{PromptTokens: 64, CompletionTokens: 0, CachedTokens: ptr(64)}},
	}
	s := Summarize(records, true)
	get := func(tag string) float64 { return metric(t, s, tag).Value }
	assert.Equal(t, 300.0, get(TagTotalUsagePromptTokens))
	assert.Equal(t, 96.0, get(TagTotalUsageCacheRead), "the untrusted and the failed requests' reads are left out")
	assert.InDelta(t, 32, get(TagOverallCacheReadPct), 1e-12, "96 of 300 prompt tokens")
	assert.Equal(t, 16.0, get(TagTotalUsageCacheWrite))
	assert.Equal(t, 0.0, get(TagTotalUsageReasoning), "a reported zero is a total")
	_, miss := s.Get(TagTotalUsageCacheMiss)
	assert.False(t, miss, "nobody reported cache misses")
	read := metric(t, s, TagUsageCacheReadTokens)
	assert.Equal(t, 2, read.Stats.Count)
	assert.Equal(t, 96.0, read.Stats.Sum)

	none := Summarize(records[2:3], true)
	for _, absent := range []string{TagTotalUsageCacheRead, TagOverallCacheReadPct, TagUsageCacheReadTokens} {
		_, found := none.Get(absent)
		assert.False(t, found, "%s without a cache report", absent)
	}
}

// TestUsageDiscrepancyCountsReasoning: a reasoning count more than 10%
// off the client's makes the request a usage discrepancy, as in AIPerf.
func TestUsageDiscrepancyCountsReasoning(t *testing.T) {
	r := reasoningStream() // 3 output + 1 reasoning tokens, ISL 100
	r.Usage = &Usage{PromptTokens: 100, CompletionTokens: 4, TotalTokens: new(104), ReasoningTokens: 1, ReasoningReported: true}
	agree := r
	r.Usage = &Usage{PromptTokens: 100, CompletionTokens: 4, TotalTokens: new(104), ReasoningTokens: 2, ReasoningReported: true}
	s := Summarize([]Record{agree, r}, true)
	assert.Equal(t, 1.0, metric(t, s, TagUsageDiscrepancyCount).Value)
}
