package metrics

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestOSLMismatch: the signed difference from the requested max_tokens per
// request, and the count of requests off it by more than min(5%, 50
// tokens), as AIPerf's osl_mismatch metrics.
func TestOSLMismatch(t *testing.T) {
	req := func(asked, got int) Record {
		return Record{SentNs: 0, EndNs: 10 * msNs, ResponseNs: StampsOf(5*msNs, 9*msNs), InputTokens: 10,
			OutputTokens: got, RequestedOutputTokens: asked}
	}
	records := []Record{
		req(100, 94),    // 6 tokens off, more than 5: a mismatch, −6%
		req(100, 105),   // 5 off: within
		req(2000, 1960), // 40 off, within the 50-token cap: −2%
		req(2000, 1940), // 60 off: a mismatch
		req(0, 7),       // asked for nothing: no metric
	}
	var diffs []float64
	for _, r := range records {
		got, _, _ := values(RecordMetrics(r, true))
		if v, ok := got[TagOSLMismatchDiffPct]; ok {
			diffs = append(diffs, v)
		}
	}
	assert.InDeltaSlice(t, []float64{-6, 5, -2, -3}, diffs, 1e-12)
	s := Summarize(records, true)
	assert.Equal(t, 2.0, metric(t, s, TagOSLMismatchCount).Value)
	assert.Equal(t, 4, metric(t, s, TagOSLMismatchDiffPct).Stats.Count)

	// The OSL is the client's count, as AIPerf's, also beside trusted
	// usage; the server's only under --use-server-token-count.
	r := req(100, 94)
	r.Usage = &Usage{PromptTokens: 10, CompletionTokens: 100, TotalTokens: new(110)}
	assert.Equal(t, 1.0, metric(t, Summarize([]Record{r}, true), TagOSLMismatchCount).Value, "the client's 94")
	TakeServerCounts(&r)
	assert.Equal(t, 0.0, metric(t, Summarize([]Record{r}, true), TagOSLMismatchCount).Value, "the server's 100")

	_, found := Summarize(records[4:], true).Get(TagOSLMismatchCount)
	assert.False(t, found, "no request asked for an output length")
}
