package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/shard"
)

// finished pushes records to f and returns them finished.
func finished(t *testing.T, f *finisher, records ...metrics.Record) []metrics.Record {
	t.Helper()
	for _, r := range records {
		f.push(r)
	}
	out, _, _, err := f.wait(context.Background())
	require.NoError(t, err)
	require.Len(t, out, len(records))
	return out
}

// usageAudit is what the usage audits say of records: each one's
// usage_prompt_tokens_diff_pct and usage_completion_tokens_diff_pct, and
// their usage_discrepancy_count.
func usageAudit(t *testing.T, records []metrics.Record) (promptDiff, completionDiff []float64, discrepancies float64) {
	t.Helper()
	for _, r := range records {
		for _, v := range metrics.RecordMetrics(r, true) {
			switch v.Tag {
			case metrics.TagUsagePromptDiffPct:
				promptDiff = append(promptDiff, v.V)
			case metrics.TagUsageCompletionDiffPct:
				completionDiff = append(completionDiff, v.V)
			}
		}
	}
	d, ok := metrics.Summarize(records, true).Get(metrics.TagUsageDiscrepancyCount)
	require.True(t, ok)
	return promptDiff, completionDiff, d.Value
}

// Under --use-server-token-count the server's counts replace the client's
// on the record, but the usage audits still compare the server with the
// client: a prompt count of 32 beside the client's 16 is a 100% difference
// and a discrepancy, as without the flag, not a 0 of the server's count
// compared with itself.
func TestFinisherServerCountsAuditedAgainstTheClients(t *testing.T) {
	usage := func() *metrics.Usage { return &metrics.Usage{PromptTokens: 32, CompletionTokens: 2} }
	f := serverFinisher(t)
	server := finished(t, f, reply(f, 0, usage()))
	assert.Equal(t, 32, server[0].InputTokens, "the server's ISL")
	promptDiff, completionDiff, d := usageAudit(t, server)
	assert.Equal(t, []float64{100}, promptDiff)
	assert.Equal(t, []float64{0}, completionDiff)
	assert.Equal(t, 1.0, d)

	f = finisherFor(t, nil)
	client := finished(t, f, reply(f, 0, usage()))
	assert.Equal(t, 16, client[0].InputTokens, "the client's ISL")
	assert.Nil(t, client[0].Client, "without the flag the record is as before")
	p, c, dd := usageAudit(t, client)
	assert.Equal(t, promptDiff, p, "the same audit with the flag and without")
	assert.Equal(t, completionDiff, c)
	assert.Equal(t, d, dd)
}

// A worker's record under --use-server-token-count reaches the coordinator
// with the client's counts beside the server's: judged again there, and
// audited, against the client's. A worker that calls usage trusted which is
// absurd beside its client's counts is overruled, and the client's counts
// stand, as on a local record.
func TestFinisherMergedServerCountsAuditedAgainstTheClients(t *testing.T) {
	w := serverFinisher(t)
	sent := finished(t, w, reply(w, 0, &metrics.Usage{PromptTokens: 32, CompletionTokens: 2}))
	var wire bytes.Buffer
	require.NoError(t, shard.NewConn(nil, &wire).Send(&shard.Msg{Type: shard.TypeRecord, Record: &sent[0]}))
	wire.WriteString(`{"t":"rec","rec":{"index":1,"phase_kind":"profiling","sent_ns":1,"end_ns":2,"response_ns":[2],` +
		`"input_tokens":1000000000,"output_tokens":2,"usage":{"prompt_tokens":1000000000,"completion_tokens":2},` +
		`"client_counts":{"input_tokens":16,"output_tokens":2}}}` + "\n")
	in := shard.NewConn(strings.NewReader(wire.String()), nil)

	f := serverFinisher(t)
	f.merged = true
	var received []metrics.Record
	for range 2 {
		m, err := in.Recv()
		require.NoError(t, err)
		received = append(received, *m.Record)
	}
	merged := finished(t, f, received...)
	honest, lying := merged[0], merged[1]
	assert.Empty(t, honest.Usage.Untrusted)
	assert.Equal(t, 32, honest.InputTokens, "the server's ISL")
	assert.Equal(t, "prompt_tokens 1000000000 is implausible beside the 16 tokens the client sent", lying.Usage.Untrusted)
	assert.Equal(t, 16, lying.InputTokens, "the client's ISL stands in for the refused count")
	assert.Nil(t, lying.Client)

	promptDiff, _, d := usageAudit(t, merged)
	assert.Equal(t, []float64{100}, promptDiff, "the honest record's difference from the client's 16; refused usage has none")
	assert.Equal(t, 2.0, d, "the 100% difference and the refused usage")
}
