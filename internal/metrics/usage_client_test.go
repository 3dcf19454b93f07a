package metrics

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// usageAudit is what the usage audits say of r: its per-request
// differences from the client's counts and its discrepancy count.
func usageAudit(t *testing.T, r Record) map[string]float64 {
	t.Helper()
	got := map[string]float64{}
	for _, v := range RecordMetrics(r, true) {
		switch v.Tag {
		case TagUsagePromptDiffPct, TagUsageCompletionDiffPct, TagUsageReasoningDiffPct:
			got[v.Tag] = v.V
		}
	}
	d, ok := Summarize([]Record{r}, true).Get(TagUsageDiscrepancyCount)
	require.True(t, ok)
	got[TagUsageDiscrepancyCount] = d.Value
	return got
}

// TestServerCountsAuditedAgainstTheClients: once the server's usage has
// replaced a record's counts (--use-server-token-count), its audits still
// compare the server with the client, as without the flag: a prompt count
// 50% off the client's is a 50% difference and a discrepancy, not a 0 of
// the server compared with itself.
func TestServerCountsAuditedAgainstTheClients(t *testing.T) {
	client := Record{SentNs: 0, EndNs: 10 * msNs, ResponseNs: StampsOf(5*msNs, 10*msNs), InputTokens: 100,
		OutputTokens: 20, ReasoningTokens: 10,
		Usage: &Usage{PromptTokens: 150, CompletionTokens: 30, ReasoningTokens: 15, ReasoningReported: true}}
	CheckUsage(&client)
	require.True(t, client.Usage.Trusted())
	want := map[string]float64{TagUsagePromptDiffPct: 50, TagUsageCompletionDiffPct: 0,
		TagUsageReasoningDiffPct: 50, TagUsageDiscrepancyCount: 1}
	assert.Equal(t, want, usageAudit(t, client), "without the flag")

	server := client
	require.True(t, TakeServerCounts(&server))
	assert.Equal(t, 150, server.InputTokens, "the server's ISL")
	assert.Equal(t, 15, server.OutputTokens)
	assert.Equal(t, 15, server.ReasoningTokens)
	assert.Equal(t, &ClientCounts{InputTokens: 100, OutputTokens: 20, ReasoningTokens: 10}, server.Client)
	assert.Equal(t, want, usageAudit(t, server), "with the flag: the same audit")

	// The client's counts travel with the record (a worker's, to the
	// coordinator; the store), under a key of their own.
	b, err := json.Marshal(server)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"client_counts":{"input_tokens":100,"output_tokens":20,"reasoning_tokens":10}`)
	var back Record
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, want, usageAudit(t, back), "read back")
	b, err = json.Marshal(client)
	require.NoError(t, err)
	assert.NotContains(t, string(b), "client_counts", "without the flag the record's shape is unchanged")

	untrusted := client
	untrusted.Usage = &Usage{PromptTokens: 150, CompletionTokens: 30, Untrusted: "completion_tokens is null"}
	assert.False(t, TakeServerCounts(&untrusted))
	assert.Nil(t, untrusted.Client)
	assert.Equal(t, 100, untrusted.InputTokens, "the client's counts stand")
}

// TestCheckUsageOfReplacedCounts: usage judged again once the server's
// counts replaced the client's (a merged worker's record) is judged
// against the client's; refused, it gives the client's counts back. A
// reply the client did not count stays judged by max_tokens only.
func TestCheckUsageOfReplacedCounts(t *testing.T) {
	r := Record{InputTokens: 1_000_000_000, OutputTokens: 2, Client: &ClientCounts{InputTokens: 16, OutputTokens: 2},
		Usage: &Usage{PromptTokens: 1_000_000_000, CompletionTokens: 2}}
	CheckUsage(&r)
	assert.Equal(t, "prompt_tokens 1000000000 is implausible beside the 16 tokens the client sent", r.Usage.Untrusted)
	RestoreClientCounts(&r)
	assert.Equal(t, 16, r.InputTokens)
	assert.Nil(t, r.Client)
	RestoreClientCounts(&r) // nothing kept: nothing to restore
	assert.Equal(t, 16, r.InputTokens)

	uncounted := Record{InputTokens: 16, Uncounted: true, RequestedOutputTokens: 500,
		Usage: &Usage{PromptTokens: 16, CompletionTokens: 400}}
	require.True(t, TakeServerCounts(&uncounted))
	assert.False(t, uncounted.Uncounted, "the server's count is the OSL")
	CheckUsage(&uncounted)
	assert.Empty(t, uncounted.Usage.Untrusted, "a count not made is no ground to refuse the server's")
	uncounted.Usage.Untrusted = "refused"
	RestoreClientCounts(&uncounted)
	assert.True(t, uncounted.Uncounted)
	assert.False(t, OSLKnown(&uncounted))
}
