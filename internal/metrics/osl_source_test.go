package metrics

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOSLIsTheClientsCountUnlessServerCounts: as AIPerf, a request's OSL
// is the client tokenizer's output + reasoning count, also when the
// server reported trusted usage; the server's completion_tokens is the
// OSL only under --use-server-token-count (TakeServerCounts), or, our
// extension, for a reply the client did not count (Uncounted). The ITL,
// the per-user and E2E throughputs and the output totals follow the OSL.
func TestOSLIsTheClientsCountUnlessServerCounts(t *testing.T) {
	// Sent at 0, first token at 10 ms, last at 100 ms: a 90 ms decode.
	client := Record{SentNs: 0, EndNs: 100 * msNs, ResponseNs: StampsOf(10*msNs, 50*msNs, 100*msNs), InputTokens: 30,
		OutputTokens: 9, ReasoningTokens: 1,
		Usage: &Usage{PromptTokens: 30, CompletionTokens: 19, ReasoningTokens: 1, ReasoningReported: true}}
	CheckUsage(&client)
	require.True(t, client.Usage.Trusted())
	values := func(r Record) map[string]float64 {
		out := map[string]float64{}
		for _, v := range RecordMetrics(r, true) {
			out[v.Tag] = v.V
		}
		return out
	}

	assert.Equal(t, 10, OutputSequenceLength(&client), "the client's 9 + 1, not the server's 19")
	m := values(client)
	assert.Equal(t, 10.0, m[TagOSL])
	assert.InDelta(t, 10.0, m[TagITL], 1e-9, "90 ms / (10 − 1)")
	assert.InDelta(t, 100.0, m[TagPerUserThroughput], 1e-9)
	assert.InDelta(t, 100.0, m[TagE2EOutputThroughput], 1e-9, "10 tokens / 0.1 s")
	assert.Equal(t, 19.0, m[TagUsageCompletionTokens], "the server's count is still reported as its usage")

	server := client
	require.True(t, TakeServerCounts(&server))
	assert.Equal(t, 19, OutputSequenceLength(&server), "--use-server-token-count: the server's")
	m = values(server)
	assert.Equal(t, 19.0, m[TagOSL])
	assert.InDelta(t, 5.0, m[TagITL], 1e-9, "90 ms / (19 − 1)")
	assert.Equal(t, 18.0, m[TagOutputTokenCount])
	assert.Equal(t, 1.0, m[TagReasoningTokenCount])

	uncounted := client
	uncounted.OutputTokens, uncounted.ReasoningTokens, uncounted.Uncounted = 0, 0, true
	assert.Equal(t, 19, OutputSequenceLength(&uncounted), "not counted by the client: the server's trusted count")
	m = values(uncounted)
	assert.Equal(t, 19.0, m[TagOSL])
	assert.Equal(t, 18.0, m[TagOutputTokenCount], "the output count follows the OSL")
	assert.Equal(t, 1.0, m[TagReasoningTokenCount])

	// The totals follow the same rule: total_output_tokens + total_reasoning_tokens = total_osl.
	total := func(tag string, records ...Record) float64 {
		got, ok := Summarize(records, true).Get(tag)
		require.True(t, ok, tag)
		return got.Value
	}
	for _, c := range []struct {
		name                      string
		records                   []Record
		osl, output, reasoning    float64
		outputThroughputPerSecond float64
	}{
		{"client counts", []Record{client}, 10, 9, 1, 100},
		{"server counts", []Record{server}, 19, 18, 1, 190},
		{"uncounted reply", []Record{uncounted}, 19, 18, 1, 190},
		{"all three", []Record{client, server, uncounted}, 48, 45, 3, 480},
	} {
		assert.Equal(t, c.osl, total(TagTotalOSL, c.records...), c.name)
		assert.Equal(t, c.output, total(TagTotalOutputTokens, c.records...), c.name)
		assert.Equal(t, c.reasoning, total(TagTotalReasoningTokens, c.records...), c.name)
		assert.InDelta(t, c.outputThroughputPerSecond, total(TagOutputTokenThroughput, c.records...), 1e-9,
			"%s: total OSL / the 0.1 s benchmark", c.name)
	}
}
