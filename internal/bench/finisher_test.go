package bench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/load"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

func finisherFor(t *testing.T, sink *jsonlSink, store ...RecordSink) *finisher {
	t.Helper()
	tok, err := tokenizer.Load(tokenizer.Default)
	require.NoError(t, err)
	var s RecordSink
	if len(store) > 0 {
		s = store[0]
	}
	return newFinisher(tok, load.NewClock(), true, false, sink, s, 0)
}

// Records are finished in the order their requests ended: a turn's input
// length gains the replies its session re-sent, counted before it; the
// JSONL line of each profiling request is written as it is finished, its
// error message redacted.
func TestFinisher(t *testing.T) {
	final := filepath.Join(t.TempDir(), "artifacts", "profile_export.jsonl") // created with the first line
	f := finisherFor(t, newJSONLSink(final, func(s string) string { return strings.ReplaceAll(s, "sk-secret", "***") }))
	turn := func(index, turn int, reply string) metrics.Record {
		f.text(index, reply, "", nil)
		return metrics.Record{Index: index, PhaseKind: plan.KindProfiling, Session: 7, Turn: turn, History: true,
			InputTokens: 10, SentNs: 1, EndNs: 2, ResponseNs: metrics.StampsOf(2)}
	}
	f.push(turn(0, 0, "hello there"))
	f.push(turn(1, 1, "general kenobi"))
	failed := metrics.Record{Index: 2, PhaseKind: plan.KindProfiling, Session: 8, Error: &metrics.Error{Type: "HTTPError", Message: "bad key sk-secret"}}
	f.push(failed)
	f.push(metrics.Record{Index: 3, PhaseKind: plan.KindWarmup})
	records, uncounted, partial, err := f.wait(context.Background())
	require.NoError(t, err)
	require.Len(t, records, 4)
	assert.Zero(t, uncounted)
	assert.Equal(t, 2, records[0].OutputTokens, `"hello there"`)
	assert.Equal(t, 10, records[0].InputTokens, "the first turn re-sent nothing")
	assert.Equal(t, 10+2, records[1].InputTokens, "the second re-sent the first reply")
	assert.Equal(t, "bad key sk-secret", records[2].Error.Message, "the record keeps its message; the store's copy is redacted later")
	assert.Equal(t, final+".partial", partial)
	b, err := os.ReadFile(partial)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	require.Len(t, lines, 3, "profiling requests only")
	assert.Contains(t, lines[2], "bad key ***")
	assert.NotContains(t, string(b), "sk-secret")
}

// A sink that cannot write gives up (the export is written after the run)
// and leaves no partial file.
func TestFinisherSinkFailure(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	f := finisherFor(t, newJSONLSink(filepath.Join(file, "profile_export.jsonl"), nil)) // a file where its directory should be
	f.push(metrics.Record{Index: 0, PhaseKind: plan.KindProfiling})
	records, _, partial, err := f.wait(context.Background())
	assert.Len(t, records, 1, "the records are finished anyway")
	assert.Empty(t, partial)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "it is written after the run instead")
}

// Interrupted, the finisher finishes every record without counting the
// rest, and says how many it left uncounted.
func TestFinisherInterrupted(t *testing.T) {
	f := finisherFor(t, nil)
	f.stop.Store(true) // as wait does once ctx ends
	f.text(0, "some words", "", nil)
	f.push(metrics.Record{Index: 0, PhaseKind: plan.KindProfiling})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	records, uncounted, _, err := f.wait(ctx)
	require.NoError(t, err)
	assert.Len(t, records, 1)
	assert.Equal(t, 1, uncounted)
	assert.Zero(t, records[0].OutputTokens)
}

// batches is a RecordSink that keeps the size of each batch it was given
// and fails from the batch numbered failAt (0: never).
type batches struct {
	sizes  []int
	failAt int
}

func (b *batches) Add(records []metrics.Record) error {
	b.sizes = append(b.sizes, len(records))
	if len(b.sizes) == b.failAt {
		return errors.New("disk full")
	}
	return nil
}

// The finished records go to the store while the load goes, the first at
// once (a run killed early still has its row) and then in batches, the
// rest when it ends; after a failure the store is given nothing more and
// wait says so.
func TestFinisherStoresRecords(t *testing.T) {
	for _, c := range []struct {
		failAt int
		want   []int
	}{{0, []int{1, storeBatch, 903}}, {1, []int{1}}} {
		b := &batches{failAt: c.failAt}
		f := finisherFor(t, nil, b)
		for i := range storeBatch + 904 {
			f.push(metrics.Record{Index: i, PhaseKind: plan.KindProfiling})
		}
		records, _, _, err := f.wait(context.Background())
		assert.Len(t, records, storeBatch+904)
		assert.Equal(t, c.want, b.sizes)
		if c.failAt > 0 {
			require.Error(t, err)
			assert.Contains(t, err.Error(), "disk full (they are all stored when the run ends)")
		} else {
			assert.NoError(t, err)
		}
	}
}

// A worker's record (merged) has its server usage judged here as a local
// record's is: implausible counts are untrusted, whatever the worker said.
func TestFinisherChecksMergedUsage(t *testing.T) {
	f := finisherFor(t, nil)
	f.merged = true
	f.push(metrics.Record{Index: 0, PhaseKind: plan.KindProfiling, InputTokens: 16, OutputTokens: 4, RequestedOutputTokens: 4,
		SentNs: 1, EndNs: 2, Usage: &metrics.Usage{PromptTokens: 16, CompletionTokens: 4_000_000, TotalTokens: new(4_000_016)}})
	f.push(metrics.Record{Index: 1, PhaseKind: plan.KindProfiling, InputTokens: 16, OutputTokens: 4, RequestedOutputTokens: 4,
		SentNs: 1, EndNs: 2, Usage: &metrics.Usage{PromptTokens: 16, CompletionTokens: 4, TotalTokens: new(20)}})
	records, _, _, err := f.wait(context.Background())
	require.NoError(t, err)
	require.Len(t, records, 2)
	assert.Contains(t, records[0].Usage.Untrusted, "completion_tokens 4000000 exceeds the 4 max tokens requested")
	assert.Empty(t, records[1].Usage.Untrusted)
	assert.Equal(t, 4, records[0].OutputTokens, "the worker's count stands")
}
