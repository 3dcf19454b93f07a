package metrics

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const msNs = int64(1_000_000)

// reasoningStream is a streamed request: sent at 1 ms (scheduled 0.5 ms),
// chunks at 41, 45, 49 and 53 ms, the first one reasoning text.
func reasoningStream() Record {
	return Record{
		ScheduledNs:     msNs / 2,
		SentNs:          1 * msNs,
		ResponseNs:      StampsOf(41*msNs, 45*msNs, 49*msNs, 53*msNs),
		FirstOutputNs:   45 * msNs,
		EndNs:           54 * msNs,
		InputTokens:     100,
		OutputTokens:    3,
		ReasoningTokens: 1,
	}
}

// values flattens RecordMetrics into tag → value (lists under their tag).
func values(vs []Value) (map[string]float64, map[string][]float64, []string) {
	scalars := map[string]float64{}
	lists := map[string][]float64{}
	var order []string
	for _, v := range vs {
		order = append(order, v.Tag)
		if v.List != nil {
			lists[v.Tag] = v.List
			continue
		}
		scalars[v.Tag] = v.V
	}
	return scalars, lists, order
}

func TestRecordMetricsStreaming(t *testing.T) {
	got, lists, order := values(RecordMetrics(reasoningStream(), true))
	want := map[string]float64{
		TagTTFT:                40, // 41 − 1
		TagTTST:                4,  // 45 − 41
		TagTTFO:                44, // 45 − 1: the first non-reasoning chunk
		TagRequestLatency:      52, // 53 − 1: last content chunk, not EndNs
		TagDecodeDuration:      12, // 52 − 40
		TagFullDecodeDuration:  13, // 54 − 41: the end of the response, not the last chunk
		TagITL:                 4,  // (52 − 40) / (4 − 1)
		TagFullITL:             13.0 / 3,
		TagPerUserThroughput:   250,
		TagFullPerUser:         3e3 / 13,   // 1 / (13 ms / 3)
		TagE2EOutputThroughput: 4 / 0.052,  // OSL / latency in s
		TagPrefillPerUser:      100 / 0.04, // ISL / TTFT in s
		TagOSL:                 4,          // output 3 + reasoning 1 (no usage)
		TagISL:                 100,
		TagOutputTokenCount:    3,
		TagReasoningTokenCount: 1,
		TagSendLag:             0.5,
	}
	assert.InDeltaMapValues(t, want, got, 1e-9)
	assert.Len(t, got, len(want))
	assert.Equal(t, map[string][]float64{TagICL: {4, 4, 4}}, lists)
	assert.Equal(t, []string{TagTTFT, TagTTST, TagTTFO, TagRequestLatency, TagDecodeDuration, TagFullDecodeDuration,
		TagITL, TagFullITL, TagICL, TagPerUserThroughput, TagFullPerUser, TagE2EOutputThroughput, TagPrefillPerUser,
		TagOSL, TagISL, TagOutputTokenCount, TagReasoningTokenCount, TagSendLag}, order)
}

func TestRecordMetricsUsage(t *testing.T) {
	r := reasoningStream()
	r.Usage = &Usage{PromptTokens: 110, CompletionTokens: 5, TotalTokens: new(115)}
	got, _, _ := values(RecordMetrics(r, true))
	want := map[string]float64{
		TagOSL:                    4, // the client's 3 + 1, as AIPerf's, not the server's 5
		TagITL:                    4, // (52 − 40) / (4 − 1)
		TagPerUserThroughput:      250,
		TagOutputTokenCount:       3,
		TagUsagePromptTokens:      110,
		TagUsageCompletionTokens:  5,
		TagUsagePromptDiffPct:     10, // |110 − 100| / 100
		TagUsageCompletionDiffPct: 25, // |5 − 4| / 4: against the client's OSL
	}
	for tag, v := range want {
		assert.InDelta(t, v, got[tag], 1e-9, tag)
	}

	// --use-server-token-count: the server's counts are the record's.
	require.True(t, TakeServerCounts(&r))
	got, _, _ = values(RecordMetrics(r, true))
	want[TagOSL], want[TagITL], want[TagPerUserThroughput], want[TagOutputTokenCount] = 5, 3, 1e3/3, 5
	want[TagISL] = 110
	for tag, v := range want {
		assert.InDelta(t, v, got[tag], 1e-9, tag)
	}
}

func TestRecordMetricsNotStreaming(t *testing.T) {
	r := reasoningStream()
	r.ResponseNs = StampsOf(53 * msNs)
	r.FirstOutputNs = 53 * msNs
	got, lists, _ := values(RecordMetrics(r, false))
	assert.Equal(t, map[string]float64{
		TagRequestLatency: 52, TagE2EOutputThroughput: 4 / 0.052, TagOSL: 4, TagISL: 100, TagOutputTokenCount: 3,
		TagReasoningTokenCount: 1, TagSendLag: 0.5,
	}, got, "the end-to-end throughput is the only one without streaming")
	assert.Empty(t, lists)
}

func TestRecordMetricsApplicability(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(*Record)
		absent []string
		check  map[string]float64
	}{
		{
			name:   "one chunk: no TTST, ICL; ITL from OSL",
			edit:   func(r *Record) { r.ResponseNs = StampsOf(r.ResponseNs.First()); r.FirstOutputNs = 0 },
			absent: []string{TagTTST, TagICL, TagTTFO, TagPerUserThroughput},
			check:  map[string]float64{TagTTFT: 40, TagRequestLatency: 40, TagITL: 0},
		},
		{
			name:   "one output token: no ITL nor per-user throughput",
			edit:   func(r *Record) { r.OutputTokens, r.ReasoningTokens = 1, 0 },
			absent: []string{TagITL, TagPerUserThroughput, TagReasoningTokenCount},
			check:  map[string]float64{TagTTFT: 40, TagOSL: 1},
		},
		{
			name:   "no content at all: latency runs to the end",
			edit:   func(r *Record) { r.ResponseNs, r.FirstOutputNs, r.OutputTokens, r.ReasoningTokens = Stamps{}, 0, 0, 0 },
			absent: []string{TagTTFT, TagTTST, TagTTFO, TagITL, TagICL, TagPerUserThroughput},
			check:  map[string]float64{TagRequestLatency: 53, TagOSL: 0},
		},
		{
			name: "usage without client tokens: no diff against zero",
			edit: func(r *Record) {
				r.InputTokens, r.OutputTokens, r.ReasoningTokens = 0, 0, 0
				r.Usage = &Usage{PromptTokens: 7}
			},
			absent: []string{TagUsagePromptDiffPct, TagUsageCompletionDiffPct},
			check:  map[string]float64{TagUsagePromptTokens: 7, TagUsageCompletionTokens: 0},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := reasoningStream()
			tc.edit(&r)
			got, lists, _ := values(RecordMetrics(r, true))
			for _, tag := range tc.absent {
				assert.NotContains(t, got, tag)
				assert.NotContains(t, lists, tag)
			}
			for tag, v := range tc.check {
				require.Contains(t, got, tag)
				assert.InDelta(t, v, got[tag], 1e-9, tag)
			}
		})
	}
}

func TestRecordMetricsFailedAndCancelled(t *testing.T) {
	failed := reasoningStream()
	failed.Error = &Error{Code: 500, Type: "HTTPError", Message: "boom"}
	assert.Equal(t, []Value{{Tag: TagErrorISL, Unit: UnitTokens, V: 100}}, RecordMetrics(failed, true))

	cancelled := reasoningStream()
	cancelled.Cancelled = true
	assert.Equal(t, []Value{{Tag: TagErrorISL, Unit: UnitTokens, V: 100}}, RecordMetrics(cancelled, true))
}

// summaryRecords: three successes, one failure and one cancelled request.
func summaryRecords() []Record {
	return []Record{
		{SentNs: 0, ResponseNs: StampsOf(10*msNs, 12*msNs, 14*msNs), EndNs: 15 * msNs, InputTokens: 10, OutputTokens: 3},
		{SentNs: 5 * msNs, ResponseNs: StampsOf(25*msNs, 30*msNs), EndNs: 31 * msNs, InputTokens: 20, OutputTokens: 2},
		{SentNs: 10 * msNs, ResponseNs: StampsOf(40 * msNs), EndNs: 41 * msNs, InputTokens: 30, OutputTokens: 1},
		{SentNs: 12 * msNs, EndNs: 100 * msNs, InputTokens: 40, Status: 500,
			Error: &Error{Code: 500, Type: "HTTPError", Message: "Internal Server Error"}},
		{SentNs: 1 * msNs, ResponseNs: StampsOf(500*msNs, 900*msNs), EndNs: 900 * msNs, InputTokens: 1000,
			OutputTokens: 50, Cancelled: true},
	}
}

func metric(t *testing.T, s Summary, tag string) Metric {
	t.Helper()
	m, ok := s.Get(tag)
	require.True(t, ok, "summary lacks %s", tag)
	return m
}

func TestSummarizeStreaming(t *testing.T) {
	s := Summarize(summaryRecords(), true)

	var tags []string
	for _, m := range s.Metrics {
		tags = append(tags, m.Tag)
		assert.NotEmpty(t, m.Header, m.Tag)
		assert.NotEmpty(t, m.Unit, m.Tag)
	}
	assert.Equal(t, []string{
		TagTTFT, TagTTST, TagRequestLatency, TagDecodeDuration, TagFullDecodeDuration, TagITL, TagFullITL, TagICL,
		TagPerUserThroughput, TagFullPerUser, TagE2EOutputThroughput, TagPrefillPerUser, TagOSL, TagISL,
		TagOutputTokenCount, TagSendLag, TagErrorISL,
		TagEffectiveConcurrency, TagEffectiveDecodeThroughput, TagEffectivePrefillThroughput,
		TagEffectiveDecodeConcurrency, TagEffectivePrefillConcurrency, TagEffectiveTotalThroughput,
		TagEffectiveDecodePerUser, TagEffectivePrefillPerUser, TagTokensInFlight, TagActiveDecodeThroughput,
		TagActivePrefillThroughput, TagActiveDecodePerUser, TagActivePrefillPerUser, TagActiveTotalThroughput,
		TagOutputTokenThroughput, TagInputTokenThroughput, TagTotalTokenThroughput, TagRequestThroughput,
		TagE2EInteractivityP75, TagE2EInteractivityP90, TagRequestCount,
		TagErrorRequestCount, TagTotalISL, TagTotalOSL, TagTotalErrorISL, TagBenchmarkDuration, TagCancelledRequestCount,
		TagTotalOutputTokens, TagRequestErrorRate,
	}, tags)

	ttft := metric(t, s, TagTTFT)
	assert.Equal(t, "Time to First Token", ttft.Header)
	assert.Equal(t, "ms", ttft.Unit)
	assert.Equal(t, 3, ttft.Stats.Count) // the cancelled request is left out
	assert.InDelta(t, 20, ttft.Stats.Avg, 1e-9)
	assert.Equal(t, 10.0, ttft.Stats.Min)
	assert.Equal(t, 30.0, ttft.Stats.Max)
	assert.Equal(t, 20.0, ttft.Stats.P50)

	itl := metric(t, s, TagITL) // (14−10)/2 and (25−20)/1; the 1-token request has none
	assert.Equal(t, 2, itl.Stats.Count)
	assert.InDelta(t, 3.5, itl.Stats.Avg, 1e-9)

	icl := metric(t, s, TagICL) // every gap of every request in one distribution
	assert.Equal(t, 3, icl.Stats.Count)
	assert.InDelta(t, 9, icl.Stats.Sum, 1e-9)
	assert.Equal(t, 5.0, icl.Stats.Max)

	lat := metric(t, s, TagRequestLatency)
	assert.InDelta(t, 69, lat.Stats.Sum, 1e-9) // 14 + 25 + 30

	errISL := metric(t, s, TagErrorISL)
	assert.Equal(t, 1, errISL.Stats.Count)
	assert.Equal(t, 40.0, errISL.Stats.Avg)

	// Window: first send at 0, last response at 10 + 30 = 40 ms. The failed
	// request's end (100 ms) does not stretch it.
	scalars := map[string]float64{
		TagBenchmarkDuration:     0.04,
		TagRequestCount:          3,
		TagErrorRequestCount:     1,
		TagRequestThroughput:     75,   // 3 / 0.04
		TagTotalISL:              60,   // 10 + 20 + 30
		TagTotalOSL:              6,    // 3 + 2 + 1
		TagOutputTokenThroughput: 150,  // 6 / 0.04
		TagTotalTokenThroughput:  1650, // 66 / 0.04
		TagTotalErrorISL:         40,
	}
	for tag, want := range scalars {
		m := metric(t, s, tag)
		assert.Nil(t, m.Stats, tag)
		assert.InDelta(t, want, m.Value, 1e-9, tag)
	}
	assert.Equal(t, "requests/sec", metric(t, s, TagRequestThroughput).Unit)
	assert.Equal(t, "sec", metric(t, s, TagBenchmarkDuration).Unit)
}

func TestSummarizeNotStreaming(t *testing.T) {
	s := Summarize(summaryRecords(), false)
	for _, tag := range []string{TagTTFT, TagTTST, TagTTFO, TagITL, TagICL, TagPerUserThroughput} {
		_, ok := s.Get(tag)
		assert.False(t, ok, "non-streaming summary must not publish %s", tag)
	}
	lat := metric(t, s, TagRequestLatency)
	assert.Equal(t, 3, lat.Stats.Count)
	assert.Equal(t, 3.0, metric(t, s, TagRequestCount).Value)
}

func TestSummarizeUsageMetricsOnlyWhenReported(t *testing.T) {
	recs := summaryRecords()
	_, ok := Summarize(recs, true).Get(TagUsageCompletionTokens)
	assert.False(t, ok)

	recs[0].Usage = &Usage{PromptTokens: 11, CompletionTokens: 4}
	s := Summarize(recs, true)
	assert.Equal(t, 1, metric(t, s, TagUsageCompletionTokens).Stats.Count)
	assert.InDelta(t, 10, metric(t, s, TagUsagePromptDiffPct).Stats.Avg, 1e-9)
	assert.InDelta(t, 100.0/3, metric(t, s, TagUsageCompletionDiffPct).Stats.Avg, 1e-9)
	for _, tag := range []string{TagUsageTotalTokens, TagTotalUsageTotalTokens} {
		_, ok = s.Get(tag)
		assert.False(t, ok, "%s: no server reported a total, which is not a total of 0", tag)
	}
	// The OSL stays the client's 3 for the first request, as AIPerf's: 3 + 2 + 1.
	assert.Equal(t, 6.0, metric(t, s, TagTotalOSL).Value)
}

func TestSummarizeAllFailed(t *testing.T) {
	recs := []Record{
		{SentNs: 10 * msNs, EndNs: 30 * msNs, InputTokens: 5, Error: &Error{Type: "ConnectionError", Message: "refused"}},
		{SentNs: 20 * msNs, EndNs: 60 * msNs, InputTokens: 6, Error: &Error{Type: "ConnectionError", Message: "refused"}},
		{SentNs: 0, Cancelled: true},
	}
	s := Summarize(recs, true)
	assert.Equal(t, 0.0, metric(t, s, TagRequestCount).Value)
	assert.Equal(t, 2.0, metric(t, s, TagErrorRequestCount).Value)
	assert.InDelta(t, 0.05, metric(t, s, TagBenchmarkDuration).Value, 1e-12) // 10 → 60 ms
	assert.Equal(t, 0.0, metric(t, s, TagRequestThroughput).Value)
	for _, tag := range []string{TagRequestLatency, TagOutputTokenThroughput, TagTotalISL, TagTotalOSL} {
		_, ok := s.Get(tag)
		assert.False(t, ok, tag)
	}
}

func TestSummarizeEmpty(t *testing.T) {
	s := Summarize(nil, true)
	require.Len(t, s.Metrics, 2)
	assert.Equal(t, Metric{Tag: TagRequestCount, Header: "Request Count", Unit: "requests"}, s.Metrics[0])
	assert.Equal(t, Metric{Tag: TagErrorRequestCount, Header: "Error Request Count", Unit: "requests"}, s.Metrics[1])
}

func TestSummarizeReasoningOnlyWhenPresent(t *testing.T) {
	recs := summaryRecords()
	_, ok := Summarize(recs, true).Get(TagReasoningTokenCount)
	assert.False(t, ok)
	recs[1].ReasoningTokens = 6
	s := Summarize(recs, true)
	assert.Equal(t, 1, metric(t, s, TagReasoningTokenCount).Stats.Count)
	assert.Equal(t, 12.0, metric(t, s, TagTotalOSL).Value) // 3 + (2+6) + 1
}

func TestErrors(t *testing.T) {
	e500 := Error{Code: 500, Type: "HTTPError", Message: "Internal Server Error"}
	e429 := Error{Code: 429, Type: "HTTPError", Message: "Too Many Requests"}
	drop := Error{Type: "IncompleteStream", Message: "connection closed before [DONE]"}
	recs := []Record{
		{Error: &e429}, {}, {Error: &e500}, {Error: &drop}, {Error: &e500},
		{Error: &e500, Cancelled: true}, {Error: &drop},
		{Error: &Error{Code: 500, Type: "HTTPError", Message: "other"}},
	}
	assert.Equal(t, []ErrorCount{
		{Error: e500, Count: 2},
		{Error: drop, Count: 2},
		{Error: e429, Count: 1},
		{Error: Error{Code: 500, Type: "HTTPError", Message: "other"}, Count: 1},
	}, Errors(recs))
	assert.Empty(t, Errors(nil))
}

func TestErrorsGroupVolatileMessages(t *testing.T) {
	var recs []Record
	// 6,563 connection resets from as many local ports: a handful of groups.
	for i := range 6563 {
		recs = append(recs, Record{Error: &Error{Type: "IncompleteStream",
			Message: fmt.Sprintf("read tcp 127.0.0.1:%d->10.0.0.%d:8000: read: connection reset by peer", 30000+i, i%3)}})
	}
	for i := range 5 {
		recs = append(recs, Record{Error: &Error{Code: 400, Type: "HTTPError",
			Message: fmt.Sprintf("This model's maximum context length is 4096 tokens. However, you requested %d tokens (request id chatcmpl-%08x)", 4100+i, i*7919)}})
	}
	same := Error{Code: 503, Type: "HTTPError", Message: "upstream connect error on port 8000"}
	recs = append(recs, Record{Error: &same}, Record{Error: &same},
		Record{Error: &Error{Type: "ConnectionError", Message: "connect to [::1]:8000: connection refused"}},
		Record{Error: &Error{Type: "ConnectionError", Message: "connect to [::1]:8001: connection refused"}},
		Record{Error: &Error{Type: "Timeout", Message: "request timed out after 1m0s"}})
	got := Errors(recs)
	assert.Equal(t, []ErrorCount{
		{Error: Error{Type: "IncompleteStream", Message: "read tcp <addr>-><addr>: read: connection reset by peer"}, Count: 6563},
		{Error: Error{Code: 400, Type: "HTTPError", Message: "This model's maximum context length is N tokens. However, you requested N tokens (request id <id>)"}, Count: 5},
		{Error: same, Count: 2},
		{Error: Error{Type: "ConnectionError", Message: "connect to <addr>: connection refused"}, Count: 2},
		{Error: Error{Type: "Timeout", Message: "request timed out after 1m0s"}, Count: 1},
	}, got, "identical messages are shown verbatim, varied ones normalised")
}

func TestNormalizeMessage(t *testing.T) {
	for in, want := range map[string]string{
		"dial tcp 192.168.1.20:8000: connect: connection refused":      "dial tcp <addr>: connect: connection refused",
		"Get \"http://gpu-node-3:30000/health\": EOF":                  "Get \"http://gpu-node-N:<port>/health\": EOF",
		"request 5b0e7c2a-1f0e-4d5a-9c3b-1a2b3c4d5e6f failed":          "request <id> failed",
		"stream ended before data: [DONE]":                             "stream ended before data: [DONE]",
		"write tcp [2001:db8::1]:443->[2001:db8::2]:51234: EPIPE":      "write tcp <addr>-><addr>: EPIPE",
		"KV cache is full: 98.5% used, 1024 blocks":                    "KV cache is full: N% used, N blocks",
		"the client ran out of file descriptors (too many open files)": "the client ran out of file descriptors (too many open files)",
	} {
		assert.Equal(t, want, NormalizeMessage(in), in)
	}
}

func TestUnitOf(t *testing.T) {
	for tag, unit := range map[string]string{TagTTFT: UnitMs, TagITL: UnitMs, TagOutputTokenThroughput: UnitTokensPerSec,
		TagGoodput: UnitRequestsSec, TagGoodRequestFraction: UnitRatio, TagRequestErrorRate: UnitPercent, "no_such_metric": ""} {
		assert.Equal(t, unit, UnitOf(tag), tag)
	}
}

// TestSummarizeDropsWhatOverflows: values whose sum is past a float64 (a
// server's absurd figures) give no statistics an export could hold: the
// metric is left out and named, and the rest is summarised.
func TestSummarizeDropsWhatOverflows(t *testing.T) {
	huge := 1e308
	var recs []Record
	for range 3 {
		r := reasoningStream()
		r.Media = &MediaStats{VideoPeakMemoryMB: &huge}
		recs = append(recs, r)
	}
	s := Summarize(recs, true)
	assert.Equal(t, []string{TagVideoPeakMemory}, s.Dropped)
	_, ok := s.Get(TagVideoPeakMemory)
	assert.False(t, ok)
	ttft, ok := s.Get(TagTTFT)
	require.True(t, ok, "the other metrics stay")
	assert.Equal(t, 3, ttft.Stats.Count)
}
