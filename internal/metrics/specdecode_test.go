package metrics

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSpecDecodeMetrics: the acceptance the server reported per request
// gives AIPerf's per-request metrics and the run's pooled ones.
func TestSpecDecodeMetrics(t *testing.T) {
	rec := func(sd *SpecDecode) Record {
		return Record{SentNs: 0, EndNs: 10 * msNs, ResponseNs: StampsOf(5*msNs, 9*msNs), InputTokens: 10,
			OutputTokens: 8, SpecDecode: sd}
	}
	a := &SpecDecode{Engine: "vllm", MeanAcceptanceLength: 2.8, DraftAcceptanceRate: 0.6, NumAcceptedDraftTokens: 18,
		NumDraftTokens: 30, NumSpecSteps: 10, AcceptanceHistogram: map[int]int{0: 2, 1: 3, 3: 5}}
	b := &SpecDecode{Engine: "vllm", MeanAcceptanceLength: 2, DraftAcceptanceRate: 1.0 / 3, NumAcceptedDraftTokens: 5,
		NumDraftTokens: 15, NumSpecSteps: 5, AcceptanceHistogram: map[int]int{1: 5}}
	zero := &SpecDecode{Engine: "vllm", MeanAcceptanceLength: 1}
	records := []Record{rec(a), rec(b), rec(zero), rec(nil)}

	got, _, _ := values(RecordMetrics(records[0], true))
	assert.InDeltaMapValues(t, map[string]float64{
		TagSpecAcceptanceLength:    2.8,
		TagSpecDraftAcceptanceRate: 60,
		TagSpecAcceptedPerVerified: 0.7, // (18 + 10) / (30 + 10)
		TagSpecSteps:               10,
		TagSpecAcceptedDraftTokens: 18,
		TagSpecDraftTokens:         30,
	}, pick(got, TagSpecAcceptanceLength, TagSpecDraftAcceptanceRate, TagSpecAcceptedPerVerified, TagSpecSteps,
		TagSpecAcceptedDraftTokens, TagSpecDraftTokens), 1e-12)
	got, _, _ = values(RecordMetrics(records[2], true))
	assert.NotContains(t, got, TagSpecAcceptanceLength, "a zero-step request has no acceptance")

	s := Summarize(records, true)
	assert.InDelta(t, 2.4, metric(t, s, TagSpecAcceptanceLength).Stats.Avg, 1e-12, "the requests' mean")
	assert.Equal(t, 2, metric(t, s, TagSpecAcceptanceLength).Stats.Count)
	assert.Equal(t, 1.0, metric(t, s, TagSpecZeroStepRequests).Value)
	assert.Equal(t, 15.0, metric(t, s, TagTotalSpecSteps).Value)
	assert.Equal(t, 23.0, metric(t, s, TagTotalSpecAcceptedDraftToks).Value)
	assert.Equal(t, 45.0, metric(t, s, TagTotalSpecDraftTokens).Value)
	assert.InDelta(t, 1+23.0/15, metric(t, s, TagSpecWeightedLength).Value, 1e-12, "every verify step alike")
	assert.InDelta(t, 100*23.0/45, metric(t, s, TagSpecOverallAcceptanceRate).Value, 1e-12)
	assert.Equal(t, map[string]int{"0": 2, "1": 8, "3": 5}, s.SpecDecodeHistogram)

	plain := Summarize(records[3:], true)
	assert.Nil(t, plain.SpecDecodeHistogram)
	_, found := plain.Get(TagTotalSpecSteps)
	assert.False(t, found, "no acceptance reported, no spec-decode metric")
}

// pick keeps the given tags of m.
func pick(m map[string]float64, tags ...string) map[string]float64 {
	out := map[string]float64{}
	for _, t := range tags {
		if v, ok := m[t]; ok {
			out[t] = v
		}
	}
	return out
}
