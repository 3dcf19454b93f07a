package metrics

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sNs = int64(1e9)

// sweepRecords, in seconds: A sent at 0, first token at 1, ended at 3,
// ISL 10, OSL 5; C failed, sent at 1, ended at 2; B sent at 2, first
// token at 4, ended at 5, ISL 20, OSL 3; and a cancelled one, left out.
// The window is [0, 5]: 5 s.
func sweepRecords() []Record {
	return []Record{
		{SentNs: 0, ResponseNs: StampsOf(1*sNs, 3*sNs), EndNs: 3 * sNs, InputTokens: 10, OutputTokens: 5},
		{SentNs: 1 * sNs, EndNs: 2 * sNs, InputTokens: 7, Error: &Error{Code: 500, Type: "HTTPError", Message: "boom"}},
		{SentNs: 2 * sNs, ResponseNs: StampsOf(4*sNs, 5*sNs), EndNs: 5 * sNs, InputTokens: 20, OutputTokens: 3},
		{SentNs: 0, ResponseNs: StampsOf(50 * sNs), EndNs: 90 * sNs, InputTokens: 99, OutputTokens: 99, Cancelled: true},
	}
}

func sweepByTag(t *testing.T, ms []Metric) map[string]Stats {
	t.Helper()
	out := map[string]Stats{}
	for _, m := range ms {
		require.NotNil(t, m.Stats, m.Tag)
		out[m.Tag] = *m.Stats
	}
	return out
}

func TestSweepMetricsStreaming(t *testing.T) {
	got := sweepByTag(t, sweepMetrics(sweepRecords(), true))
	require.Len(t, got, len(sweepDefs))

	// In flight: [0,1) 1 (A), [1,2) 2 (A, C), [2,3) 2 (A, B; C's end
	// before B's start at 2), [3,5) 1 (B): avg (1+2+2+2·1)/5 = 1.4; std
	// √((3·0.4² + 2·0.6²)/5) = √0.24; by time, 1 holds 3 s of 5 (60%),
	// so p50 is 1 and p90…p99 are 2.
	c := got[TagEffectiveConcurrency]
	assert.InDelta(t, 1.4, c.Avg, 1e-12)
	assert.InDelta(t, math.Sqrt(0.24), c.Std, 1e-12)
	assert.Equal(t, []float64{1, 2, 1, 2, 2, 2}, []float64{c.Min, c.Max, c.P50, c.P90, c.P95, c.P99})
	assert.Zero(t, c.P1+c.P25+c.P75+c.Sum+float64(c.Count), "time-weighted: no such statistics")

	// Decode: A [1,3) at (5−1)/2 = 2 tok/s, B [4,5) at (3−1)/1 = 2 tok/s:
	// effective (2·2 + 2·1)/5 = 1.2; active over the 3 s in decode, 6/3 = 2.
	assert.InDelta(t, 1.2, got[TagEffectiveDecodeThroughput].Avg, 1e-9)
	assert.InDelta(t, 2, got[TagActiveDecodeThroughput].Avg, 1e-9)
	assert.InDelta(t, 3.0/5, got[TagEffectiveDecodeConcurrency].Avg, 1e-12, "1 for 3 s of 5")
	// Prefill: A [0,1) at 10/1, B [2,4) at 20/2 = 10 tok/s: effective 30/5 = 6,
	// active 30/3 = 10; in prefill 3 s of 5.
	assert.InDelta(t, 6, got[TagEffectivePrefillThroughput].Avg, 1e-9)
	assert.InDelta(t, 10, got[TagActivePrefillThroughput].Avg, 1e-9)
	assert.InDelta(t, 3.0/5, got[TagEffectivePrefillConcurrency].Avg, 1e-12)
	// Total: [0,1) 10, [1,2) 2, [2,3) 12, [3,4) 10, [4,5) 2: 36/5 = 7.2,
	// the same while any request is in flight (all 5 s); max 12.
	assert.InDelta(t, 7.2, got[TagEffectiveTotalThroughput].Avg, 1e-9)
	assert.InDelta(t, 7.2, got[TagActiveTotalThroughput].Avg, 1e-9)
	assert.InDelta(t, 12, got[TagEffectiveTotalThroughput].Max, 1e-9)
	// Per user: one request per phase at a time, so the rate itself where
	// the phase runs, 0 elsewhere: decode 6/5 and 2, prefill 6 and 10.
	assert.InDelta(t, 1.2, got[TagEffectiveDecodePerUser].Avg, 1e-9)
	assert.InDelta(t, 2, got[TagActiveDecodePerUser].Avg, 1e-9)
	assert.InDelta(t, 6, got[TagEffectivePrefillPerUser].Avg, 1e-9)
	assert.InDelta(t, 10, got[TagActivePrefillPerUser].Avg, 1e-9)
	// Tokens held: [0,1) 10, [1,2) 15, [2,3) 35, [3,4) 20, [4,5) 23:
	// avg 103/5 = 20.6, min 10, max 35.
	tok := got[TagTokensInFlight]
	assert.InDelta(t, 20.6, tok.Avg, 1e-12)
	assert.Equal(t, []float64{10, 35}, []float64{tok.Min, tok.Max})
}

// TestSweepMetricsNotStreamed: without streaming no first token is
// measured: the requests are in flight (1.4 as above) but no decode nor
// prefill curve moves, and those metrics are there at 0, as AIPerf's.
func TestSweepMetricsNotStreamed(t *testing.T) {
	got := sweepByTag(t, sweepMetrics(sweepRecords(), false))
	require.Len(t, got, len(sweepDefs))
	assert.InDelta(t, 1.4, got[TagEffectiveConcurrency].Avg, 1e-12)
	for _, tag := range []string{TagEffectiveDecodeThroughput, TagActiveDecodeThroughput, TagEffectivePrefillThroughput,
		TagActivePrefillThroughput, TagEffectiveTotalThroughput, TagActiveTotalThroughput, TagTokensInFlight,
		TagEffectiveDecodeConcurrency, TagActivePrefillPerUser} {
		assert.Equal(t, Stats{}, got[tag], tag)
	}
}

// TestSweepMetricsOneRequest: A alone, window [0, 3]: in flight all 3 s
// (avg 1, std 0); decode [1,3) at 2 tok/s is 4/3 effective, 2 active.
func TestSweepMetricsOneRequest(t *testing.T) {
	got := sweepByTag(t, sweepMetrics(sweepRecords()[:1], true))
	assert.Equal(t, Stats{Avg: 1, Min: 1, Max: 1, P50: 1, P90: 1, P95: 1, P99: 1}, got[TagEffectiveConcurrency])
	assert.InDelta(t, 4.0/3, got[TagEffectiveDecodeThroughput].Avg, 1e-9)
	assert.InDelta(t, 2, got[TagActiveDecodeThroughput].Avg, 1e-9)
}

// TestSweepMetricsEmptyWindow: a request that ended when it was sent
// spans no time: every metric is there, at 0 (AIPerf's zero stats); none
// without a request that was not cancelled.
func TestSweepMetricsEmptyWindow(t *testing.T) {
	got := sweepByTag(t, sweepMetrics([]Record{{SentNs: sNs, EndNs: sNs, Error: &Error{Type: "X"}}}, true))
	require.Len(t, got, len(sweepDefs))
	for tag, st := range got {
		assert.Equal(t, Stats{}, st, tag)
	}
	assert.Empty(t, sweepMetrics(sweepRecords()[3:], true), "only a cancelled request")
	assert.Empty(t, sweepMetrics(nil, true))
}

func TestTimeWeightedPartialWindow(t *testing.T) {
	// 2 on [0,4), 6 on [4,10), then 0: over [2, 6] it is 2 for 2 s and 6
	// for 2 s, avg 4, std 2, p50 2 (half the time), p90 6.
	s := sweep([]event{{0, 2}, {4, 4}, {10, -6}})
	st := timeWeighted(s, 2, 6)
	assert.Equal(t, Stats{Avg: 4, Min: 2, Max: 6, P50: 2, P90: 6, P95: 6, P99: 6, Std: 2}, st)
	// Active where a mask that is positive only on [5, 6) holds: 6 for 1 s.
	mask := sweep([]event{{5, 1}, {6, -1}})
	assert.Equal(t, Stats{Avg: 6, Min: 6, Max: 6, P50: 6, P90: 6, P95: 6, P99: 6}, activeWeighted(s, mask, 2, 6))
	assert.Equal(t, Stats{}, activeWeighted(s, step{}, 2, 6), "never active")
}

// TestSweepDecodeNeedsAToken: a streamed reply counted at OSL 0 has no
// token after its first chunk, so no decode rate: (0−1)/2 s would be −0.5
// tok/s (AIPerf counts a request's decode only from 1 output token).
func TestSweepDecodeNeedsAToken(t *testing.T) {
	r := Record{SentNs: 0, ResponseNs: StampsOf(1*sNs, 3*sNs), EndNs: 3 * sNs, InputTokens: 10, OutputTokens: 0}
	got := sweepByTag(t, sweepMetrics([]Record{r}, true))
	for _, tag := range []string{TagEffectiveDecodeThroughput, TagActiveDecodeThroughput, TagActiveDecodePerUser} {
		assert.Equal(t, Stats{}, got[tag], tag)
	}
	assert.GreaterOrEqual(t, got[TagEffectiveTotalThroughput].Min, 0.0, "the prefill's 10 tok/s, then 0")
}

// TestSweepWindowFromTheFirstCredit: AIPerf's window opens at the first
// credit issued, not at the first send. A alone, its credit issued 1 s
// before its send: in flight 3 s of a 4 s window, avg 0.75.
func TestSweepWindowFromTheFirstCredit(t *testing.T) {
	records := sweepRecords()[:1]
	records[0].SentNs, records[0].ResponseNs, records[0].EndNs = 1*sNs, StampsOf(2*sNs, 4*sNs), 4*sNs
	records[0].IssuedNs = 1 // the credit at 1 ns on the run's clock (0 reads "not known")
	got := sweepByTag(t, sweepMetrics(records, true))
	assert.InDelta(t, 0.75, got[TagEffectiveConcurrency].Avg, 1e-9)
}

// TestHasStat: a time-weighted metric has AIPerf's eight statistics only.
func TestHasStat(t *testing.T) {
	assert.True(t, HasStat(TagEffectiveConcurrency, "p99"))
	for _, st := range []string{"p1", "p25", "p75", "count", "sum"} {
		assert.False(t, HasStat(TagEffectiveConcurrency, st), st)
		assert.True(t, HasStat(TagTTFT, st), st)
	}
}
