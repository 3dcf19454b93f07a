package metrics

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// AIPerf's totals: output and reasoning tokens of successful requests,
// trusted usage summed, the wall-clock first send and last response of
// every request, and the % of requests that ended in error.
func TestTotals(t *testing.T) {
	ok := func(wall int64, out, reasoning int, u *Usage) Record {
		return Record{SentNs: 10, EndNs: 50, ResponseNs: StampsOf(20, 40), WallStartNs: wall, OutputTokens: out,
			ReasoningTokens: reasoning, Usage: u}
	}
	records := []Record{
		ok(1000, 5, 0, &Usage{PromptTokens: 7, CompletionTokens: 5, TotalTokens: new(12)}),
		ok(2000, 6, 3, &Usage{PromptTokens: 8, CompletionTokens: 9, TotalTokens: new(17)}),
		ok(1500, 4, 0, &Usage{PromptTokens: -1, Untrusted: "negative"}),
		{SentNs: 10, EndNs: 90, WallStartNs: 500, Error: &Error{Type: "HTTPError"}},
	}
	s := Summarize(records, true)
	get := func(tag string) float64 {
		m, found := s.Get(tag)
		require.True(t, found, tag)
		return m.Value
	}
	assert.Equal(t, 15.0, get(TagTotalOutputTokens))
	assert.Equal(t, 3.0, get(TagTotalReasoningTokens))
	assert.Equal(t, 15.0, get(TagTotalUsagePromptTokens), "the untrusted usage is left out")
	assert.Equal(t, 14.0, get(TagTotalUsageCompletion))
	assert.Equal(t, 29.0, get(TagTotalUsageTotalTokens))
	assert.Equal(t, 500.0, get(TagMinRequestTimestamp), "failed requests count")
	assert.Equal(t, 2000.0+30, get(TagMaxResponseTimestamp), "wall send + latency (last response − send)")
	assert.Equal(t, 25.0, get(TagRequestErrorRate))
}
