package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/store"
)

// perChunkRun is a run of 4 streamed records of 64 tokens: record 0 with
// trusted usage and a first content chunk of 4 tokens (--per-chunk-usage),
// record 1 with the same count in untrusted usage, records 2 and 3
// without usage (record 3 failed).
func perChunkRun() *result.Run {
	r := newRun(runOpts{name: "chunks", records: 4})
	r.Records[0].Usage = &metrics.Usage{PromptTokens: 550, CompletionTokens: 64, FirstChunkTokens: new(4)}
	r.Records[1].Usage = &metrics.Usage{PromptTokens: 550, CompletionTokens: 64, FirstChunkTokens: new(4),
		Untrusted: "completion_tokens 64 is implausible"}
	return r
}

// itls are the records' inter_token_latency (ns) as metrics.Times gives it.
func itls(records []metrics.Record) []float64 {
	out := make([]float64, len(records))
	for i := range records {
		out[i] = metrics.Times(&records[i], true).ITLNs
	}
	return out
}

// TestFirstChunkTokensRoundTrip: a record's first content chunk count
// (--per-chunk-usage) comes back from the store, so its ITL divides by
// the tokens after that chunk (OSL − 4) as the run's exports did, not by
// OSL − 1; a record without a trusted count loads with no usage, as
// before, and the same ITL.
func TestFirstChunkTokensRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := MustOpenDB(t)
	in := perChunkRun()
	want := itls(in.Records)
	decode := float64(in.Records[0].ResponseNs.Last() - in.Records[0].ResponseNs.First())
	require.InDelta(t, decode/60, want[0], 1e-9, "the run's own ITL: (latency − TTFT) / (64 − 4)")
	require.InDelta(t, decode/63, want[1], 1e-9, "untrusted usage: / (64 − 1)")

	id, err := db.SaveRun(ctx, in, "")
	require.NoError(t, err)
	got, err := db.GetRun(ctx, id, true)
	require.NoError(t, err)
	require.Len(t, got.Records, 4)
	require.NotNil(t, got.Records[0].Usage)
	require.NotNil(t, got.Records[0].Usage.FirstChunkTokens)
	assert.Equal(t, 4, *got.Records[0].Usage.FirstChunkTokens)
	for i := 1; i < 4; i++ {
		assert.Nil(t, got.Records[i].Usage, "record %d: loads as before", i)
	}
	assert.InDeltaSlice(t, want, itls(got.Records), 1e-9)
	assert.Equal(t, 1, count(t, db, `SELECT count(*) FROM records WHERE first_chunk_tokens IS NOT NULL`))
}

// upgradedRun is the one run of a store that stmts took back to before a
// migration, opened again (which applies it anew): the store, and the run
// as it loads (with its records when withRecords).
func upgradedRun(t *testing.T, withRecords bool, stmts ...string) (*store.DB, *result.Run) {
	t.Helper()
	db := openAt(t, execOn(t, storeWithRuns(t, 1), stmts...))
	assert.Equal(t, store.MigrationCount(), count(t, db, `SELECT count(*) FROM migrations`))
	runs, err := db.ListRuns(context.Background(), store.RunFilter{})
	require.NoError(t, err)
	require.Len(t, runs, 1)
	run, err := db.GetRun(context.Background(), runs[0].ID, withRecords)
	require.NoError(t, err)
	return db, run
}

// TestFirstChunkTokensMigration: records stored before first_chunk_tokens
// existed (schema 12) load as they did, without usage, once the upgrade
// has added the column; a run stored after it keeps its counts.
func TestFirstChunkTokensMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, old := upgradedRun(t, true, `ALTER TABLE records DROP COLUMN first_chunk_tokens`,
		`DELETE FROM migrations WHERE name = 'migration/0013_first_chunk_tokens.sql'`)
	require.Len(t, old.Records, 200)
	for i := range old.Records {
		require.Nil(t, old.Records[i].Usage, "record %d", i)
	}
	assert.InDelta(t, float64(290e6-20e6)/63, metrics.Times(&old.Records[0], true).ITLNs, 1e-9, "/ (OSL − 1)")

	in := perChunkRun()
	id, err := db.SaveRun(ctx, in, "")
	require.NoError(t, err)
	got, err := db.GetRun(ctx, id, true)
	require.NoError(t, err)
	assert.InDeltaSlice(t, itls(in.Records), itls(got.Records), 1e-9)
}
