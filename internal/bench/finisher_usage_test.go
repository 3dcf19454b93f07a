package bench

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/load"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// serverFinisher is a finisher under --use-server-token-count.
func serverFinisher(t *testing.T) *finisher {
	t.Helper()
	tok, err := tokenizer.Load(tokenizer.Default)
	require.NoError(t, err)
	return newFinisher(tok, load.NewClock(), true, true, nil, nil, 0)
}

// reply is a successful 16-token request with the reply "hello there" (2
// tokens) and the given usage.
func reply(f *finisher, index int, u *metrics.Usage) metrics.Record {
	f.text(index, "hello there", "", nil)
	return metrics.Record{Index: index, PhaseKind: plan.KindProfiling, InputTokens: 16, SentNs: 1, EndNs: 2,
		ResponseNs: metrics.StampsOf(2), Usage: u}
}

// Under --use-server-token-count the server's counts are judged against
// the client's own before they replace them: an absurd prompt or
// completion count, or a prompt count of 0, is refused, and the client's
// counts stand (ISL 16, not 1,000,000,000).
func TestFinisherServerCountsChecked(t *testing.T) {
	f := serverFinisher(t)
	f.push(reply(f, 0, &metrics.Usage{PromptTokens: 1_000_000_000, CompletionTokens: 2}))
	f.push(reply(f, 1, &metrics.Usage{PromptTokens: 0, CompletionTokens: 2}))
	f.push(reply(f, 2, &metrics.Usage{PromptTokens: 16, CompletionTokens: 900_000}))
	f.push(reply(f, 3, &metrics.Usage{PromptTokens: 25, CompletionTokens: 3, ReasoningTokens: 1}))
	f.push(reply(f, 4, nil))
	records, uncounted, _, err := f.wait(context.Background())
	require.NoError(t, err)
	require.Len(t, records, 5)
	assert.Zero(t, uncounted)
	for i, want := range []string{
		"prompt_tokens 1000000000 is implausible beside the 16 tokens the client sent",
		"prompt_tokens is 0 for a prompt the client counted 16 tokens in",
		"completion_tokens 900000 is implausible beside the 2 tokens the client counted",
	} {
		r := records[i]
		assert.Equal(t, want, r.Usage.Untrusted, "record %d", i)
		assert.Equal(t, 16, r.InputTokens, "record %d: the client's ISL", i)
		assert.Equal(t, 2, r.OutputTokens, "record %d: the client's count", i)
		assert.Equal(t, 2, metrics.OutputSequenceLength(&r))
	}
	honest := records[3]
	assert.Empty(t, honest.Usage.Untrusted)
	assert.Equal(t, 25, honest.InputTokens, "the server's prompt count, chat template included")
	assert.Equal(t, 2, honest.OutputTokens)
	assert.Equal(t, 1, honest.ReasoningTokens)
	assert.Equal(t, 16, records[4].InputTokens, "no usage: the client's counts")
	assert.Equal(t, 2, records[4].OutputTokens)

	s := metrics.Summarize(records, true)
	isl, ok := s.Get(metrics.TagISL)
	require.True(t, ok)
	assert.Equal(t, 25.0, isl.Stats.Max, "no absurd ISL")
	assert.Equal(t, 16.0, isl.Stats.Min, "no ISL of 0")
	d, ok := s.Get(metrics.TagUsageDiscrepancyCount)
	require.True(t, ok)
	assert.Equal(t, 4.0, d.Value, "each refused usage is a discrepancy, and so is the honest one's prompt count, 56% off "+
		"the client's 16 (judged against the client's count, not the server's that replaced it)")
	a := audit(plan.NewProfile(), nil, records, 0, 0)
	assert.Equal(t, 3, a.UsageUntrusted)
}

// Without the flag the prompt count of 0 beside a prompt is refused too.
func TestFinisherPromptZeroUntrusted(t *testing.T) {
	f := finisherFor(t, nil)
	f.push(reply(f, 0, &metrics.Usage{PromptTokens: 0, CompletionTokens: 2}))
	records, _, _, err := f.wait(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "prompt_tokens is 0 for a prompt the client counted 16 tokens in", records[0].Usage.Untrusted)
	assert.Equal(t, 16, records[0].InputTokens)
}

// Interrupted while counting, a reply left uncounted has no OSL of 0: its
// OSL is the server's trusted usage, or unknown and left out of the OSL
// metrics; the warning says which.
func TestFinisherUncountedHasNoFakeOSL(t *testing.T) {
	for _, server := range []bool{false, true} {
		f := finisherFor(t, nil)
		if server {
			f = serverFinisher(t)
		}
		f.push(reply(f, 0, nil)) // counted before the interruption
		records, _, _, err := f.wait(context.Background())
		require.NoError(t, err)
		f = finisherFor(t, nil)
		if server {
			f = serverFinisher(t)
		}
		f.stop.Store(true) // as wait does once ctx ends
		f.push(reply(f, 1, nil))
		f.push(reply(f, 2, nil))
		f.push(reply(f, 3, &metrics.Usage{PromptTokens: 16, CompletionTokens: 10}))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		rest, uncounted, _, err := f.wait(ctx)
		require.NoError(t, err)
		assert.Equal(t, 3, uncounted)
		records = append(records, rest...)

		for _, r := range records[1:3] {
			assert.True(t, r.Uncounted)
			assert.False(t, metrics.OSLKnown(&r))
		}
		withUsage := records[3]
		assert.Empty(t, withUsage.Usage.Untrusted, "server %v: a count not made is no ground to refuse the server's", server)
		assert.True(t, metrics.OSLKnown(&withUsage))
		assert.Equal(t, 10, metrics.OutputSequenceLength(&withUsage))

		s := metrics.Summarize(records, true)
		osl, ok := s.Get(metrics.TagOSL)
		require.True(t, ok)
		assert.Equal(t, 2, osl.Stats.Count, "server %v: the unknown OSLs are left out", server)
		assert.Equal(t, 2.0, osl.Stats.Min, "no OSL of 0")
		total, ok := s.Get(metrics.TagTotalOSL)
		require.True(t, ok)
		assert.Equal(t, 12.0, total.Value)
		lat, ok := s.Get(metrics.TagRequestLatency)
		require.True(t, ok)
		assert.Equal(t, 4, lat.Stats.Count, "their latency stands")

		w := f.uncountedWarning(uncounted)
		assert.Contains(t, w, "3 responses were not counted by the client; 2 of them had no plausible server usage either: their OSL is unknown")
	}
	f := finisherFor(t, nil)
	assert.Equal(t, "interrupted while counting output tokens: 1 responses were not counted by the client (their OSL is the server's usage)",
		f.uncountedWarning(1))
	_, _, _, _ = f.wait(context.Background())
}

// Interrupted while counting, a reply cut in flight (or failed, or a
// warmup's) is no uncounted reply of the metrics: a run whose every reply
// was cut warned "1 responses were not counted by the client (their OSL is
// the server's usage)" beside a Request Count of 0, with no usage at all.
// Only the profiling replies that returned are said to be uncounted.
func TestFinisherCutRepliesNotUncounted(t *testing.T) {
	f := finisherFor(t, nil)
	f.stop.Store(true) // as wait does once ctx ends
	cut := reply(f, 0, nil)
	cut.Cancelled, cut.CutBy = true, metrics.CutInterrupt
	f.push(cut)
	failed := reply(f, 1, nil)
	failed.Error = &metrics.Error{Type: "ServerError", Message: "500"}
	f.push(failed)
	warm := reply(f, 2, &metrics.Usage{PromptTokens: 16, CompletionTokens: 2})
	warm.PhaseKind = plan.KindWarmup
	f.push(warm)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, uncounted, _, err := f.wait(ctx)
	require.NoError(t, err)
	assert.Zero(t, uncounted, "no reply of the metrics was left uncounted: no warning")

	f = finisherFor(t, nil)
	f.stop.Store(true)
	f.text(0, "hello there", "", nil)
	f.push(cut)
	f.push(reply(f, 1, &metrics.Usage{PromptTokens: 16, CompletionTokens: 2}))
	_, uncounted, _, err = f.wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, uncounted)
	assert.Equal(t, "interrupted while counting output tokens: 1 responses were not counted by the client (their OSL is the server's usage)",
		f.uncountedWarning(uncounted))
}

// A worker interrupted while counting says so in its own audit: the
// coordinator, judging the merged records, cannot see which of a worker's
// replies went uncounted.
func TestWorkerSaysItsUncountedReplies(t *testing.T) {
	f := finisherFor(t, nil)
	c := &cell{run: &result.Run{}, fin: f}
	c.judgeShare(nil, phasesOutcome{}, 2)
	assert.Contains(t, c.run.Audit.Warnings, f.uncountedWarning(2))
	c.judgeShare(nil, phasesOutcome{}, 0)
	assert.Empty(t, c.run.Audit.Warnings, "nothing uncounted, nothing said")
	_, _, _, _ = f.wait(context.Background())
}
