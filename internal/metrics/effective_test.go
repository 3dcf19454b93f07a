package metrics

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIssuedLatencies(t *testing.T) {
	records := []Record{
		// issued 1 ms, sent 3 ms, ended 10 ms: effective 9 ms, credit-to-start 2 ms
		{IssuedNs: 1 * msNs, SentNs: 3 * msNs, ResponseNs: StampsOf(8 * msNs), EndNs: 10 * msNs},
		// issued and sent at 2 ms, ended 6 ms: effective 4 ms, credit-to-start 0
		{IssuedNs: 2 * msNs, SentNs: 2 * msNs, ResponseNs: StampsOf(6 * msNs), EndNs: 6 * msNs},
		// failed: left out, as from every latency
		{IssuedNs: 1 * msNs, SentNs: 1 * msNs, EndNs: 500 * msNs, Error: &Error{Type: "X"}},
		// issue time not known (read back from the store): left out
		{SentNs: 1 * msNs, ResponseNs: StampsOf(2 * msNs), EndNs: 900 * msNs},
	}
	ms := issuedLatencies(records)
	require.Len(t, ms, 2)
	eff, start := ms[0], ms[1]
	assert.Equal(t, TagEffectiveLatency, eff.Tag)
	assert.Equal(t, "Effective Latency (CO-aware)", eff.Header)
	assert.Equal(t, UnitMs, eff.Unit)
	// effective over {9, 4}: avg 6.5, p50 6.5, min 4, max 9, count 2, sum 13
	assert.Equal(t, []float64{6.5, 4, 9, 6.5, 13}, []float64{eff.Stats.Avg, eff.Stats.Min, eff.Stats.Max, eff.Stats.P50,
		eff.Stats.Sum})
	assert.Equal(t, 2, eff.Stats.Count)
	// credit-to-start over {2, 0}: avg 1
	assert.Equal(t, TagCreditToStartLatency, start.Tag)
	assert.InDelta(t, 1, start.Stats.Avg, 1e-12)
	assert.Equal(t, GroupEffective, GroupOf(TagEffectiveLatency))
	assert.Equal(t, GroupNone, GroupOf(TagCreditToStartLatency), "exported only, as AIPerf's")

	// one request: its own values
	one := issuedLatencies(records[:1])
	assert.Equal(t, 9.0, one[0].Stats.P99)
	// a request sent before its credit's stamp (clock noise) reads 0, not negative
	noisy := issuedLatencies([]Record{{IssuedNs: 5 * msNs, SentNs: 4 * msNs, EndNs: 4 * msNs}})
	assert.Equal(t, []float64{0, 0}, []float64{noisy[0].Stats.Max, noisy[1].Stats.Max})
	assert.Empty(t, issuedLatencies(records[2:]), "no successful request with a known issue time")
}

func TestSummarizeIssuedLatencies(t *testing.T) {
	records := summaryRecords()
	for i := range records {
		records[i].IssuedNs = records[i].SentNs + 1 // a credit issued 1 ns before each send
		records[i].SentNs += 1
	}
	s := Summarize(records, true)
	m := metric(t, s, TagEffectiveLatency)
	// the successes end at 15, 31 and 41 ms, issued at 0, 5 and 10 ms (+1 ns)
	assert.InDelta(t, (15.0+26+31)/3, m.Stats.Avg, 1e-5)
	assert.Equal(t, 3, m.Stats.Count, "the failed and the cancelled request are left out")
}
