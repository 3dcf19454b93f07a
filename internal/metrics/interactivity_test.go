package metrics

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func interactivityRecords() []Record {
	return []Record{
		// latency 2 s, OSL 4: 0.5 s per token
		{SentNs: 0, ResponseNs: StampsOf(1*sNs, 2*sNs), EndNs: 2 * sNs, InputTokens: 5, OutputTokens: 4},
		// latency 1 s, OSL 4: 0.25 s per token
		{SentNs: 0, ResponseNs: StampsOf(sNs/2, 1*sNs), EndNs: 1 * sNs, InputTokens: 5, OutputTokens: 4},
		// latency 3 s, OSL 2: 1.5 s per token
		{SentNs: 0, ResponseNs: StampsOf(1*sNs, 3*sNs), EndNs: 3 * sNs, InputTokens: 5, OutputTokens: 2},
		// no OSL: left out; failed: left out
		{SentNs: 0, ResponseNs: StampsOf(1 * sNs), EndNs: 9 * sNs, InputTokens: 5},
		{SentNs: 0, EndNs: 9 * sNs, InputTokens: 5, Error: &Error{Type: "X"}},
	}
}

func scalarsOf(t *testing.T, records []Record, streaming bool) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, m := range Summarize(records, streaming).Metrics {
		if m.Stats == nil {
			out[m.Tag] = m.Value
		}
	}
	return out
}

func TestE2ENormalizedInteractivity(t *testing.T) {
	got := scalarsOf(t, interactivityRecords(), true)
	// sorted ratios 0.25, 0.5, 1.5; numpy p75: index 1.5, 0.5 + 0.5·1.0 = 1.0,
	// so 1/1.0 = 1 tok/s; p90: index 1.8, 0.5 + 0.8·1.0 = 1.3, 1/1.3.
	assert.InDelta(t, 1, got[TagE2EInteractivityP75], 1e-12)
	assert.InDelta(t, 1/1.3, got[TagE2EInteractivityP90], 1e-12)
	assert.Equal(t, GroupNone, GroupOf(TagE2EInteractivityP90), "exported only")
	assert.Equal(t, UnitPerUser, UnitOf(TagE2EInteractivityP75))

	// one request: both are its own rate, 4 tokens in 2 s
	one := scalarsOf(t, interactivityRecords()[:1], true)
	assert.InDelta(t, 2, one[TagE2EInteractivityP75], 1e-12)
	assert.InDelta(t, 2, one[TagE2EInteractivityP90], 1e-12)

	// without streaming no TTFT is measured, so none is required: the same ratios
	notStreamed := scalarsOf(t, interactivityRecords(), false)
	assert.InDelta(t, 1, notStreamed[TagE2EInteractivityP75], 1e-12)

	// a streamed run drops a request whose TTFT is not positive
	records := interactivityRecords()
	records[2].ResponseNs = StampsOf(0, 3*sNs) // TTFT 0: left out, ratios 0.25, 0.5
	got = scalarsOf(t, records, true)
	assert.InDelta(t, 1/(0.25+0.75*0.25), got[TagE2EInteractivityP75], 1e-12, "index 0.75: 0.25 + 0.75·0.25")

	// nothing kept (every request failed): neither metric
	none := scalarsOf(t, interactivityRecords()[4:], true)
	assert.NotContains(t, none, TagE2EInteractivityP75)
}

func TestInputTokenThroughput(t *testing.T) {
	got := scalarsOf(t, summaryRecords(), true)
	// successes' ISL 10 + 20 + 30 = 60 over 0 → 40 ms (first send to last
	// response of the successes): 1,500 tokens/sec
	assert.InDelta(t, 1500, got[TagInputTokenThroughput], 1e-9)
	assert.InDelta(t, got[TagTotalTokenThroughput]-got[TagOutputTokenThroughput], got[TagInputTokenThroughput], 1e-9,
		"the input half of total_token_throughput")
	require.Equal(t, GroupNone, GroupOf(TagInputTokenThroughput))
	failedOnly := scalarsOf(t, summaryRecords()[3:4], true)
	assert.NotContains(t, failedOnly, TagInputTokenThroughput, "no successful request: no total_isl")
}
