package store_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
)

// TestAuditTalliesRoundTrip: the client audit's tallies without a column
// of their own (the requests cut and why, client errors, bursts, replies
// not streamed, malformed chunks, untrusted usage and video, dropped cache counts, a DAG run's
// branches) come back from the store as the run had them, so runs export
// writes its client_audit whole.
func TestAuditTalliesRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := MustOpenDB(t)
	in := newRun(runOpts{name: "tallies", records: 3})
	a := &in.Audit
	a.Cut, a.CutGracePeriod, a.CutInterrupt, a.CutOnPurpose, a.CutStopped = 10, 1, 2, 3, 4
	a.ClientErrors, a.Bursts, a.Malformed, a.UsageUntrusted, a.NotStreamed = 5, 6, 7, 8, 12
	a.VideoUntrusted, a.VideoUntrustedFirst, a.CacheDropped, a.CacheDroppedFirst = 9, "seconds 0", 11, "cached_tokens 9 > prompt_tokens 5"
	a.Branches = &metrics.BranchStats{ChildrenSpawned: 4, ChildrenCompleted: 3, ParentsSuspended: 2}
	id, err := db.SaveRun(ctx, in, "")
	require.NoError(t, err)
	got, err := db.GetRun(ctx, id, false)
	require.NoError(t, err)
	assert.Equal(t, in.Audit, got.Audit)

	id, err = db.SaveRun(ctx, newRun(runOpts{name: "none", records: 2}), "")
	require.NoError(t, err)
	got, err = db.GetRun(ctx, id, false)
	require.NoError(t, err)
	assert.Zero(t, got.Audit.Cut)
	assert.Nil(t, got.Audit.Branches)
}

// TestAuditTalliesMigration: a run stored before audit_tallies existed
// (schema 17) loads as it did, its tallies zero, once the upgrade has added
// the column.
func TestAuditTalliesMigration(t *testing.T) {
	t.Parallel()
	_, old := upgradedRun(t, false, `ALTER TABLE runs DROP COLUMN audit_tallies`,
		`DELETE FROM migrations WHERE name = 'migration/0018_audit_tallies.sql'`)
	assert.Zero(t, old.Audit.Cut)
	assert.Nil(t, old.Audit.Branches)
	assert.Equal(t, "concurrency", old.Audit.Mode, "the rest of its audit as before")
}

// TestEveryAuditCountRoundTrips: every count of the client audit (each int
// field of result.Audit, one added later included) comes back from the
// store as saved, in a column of its own or among the tallies: a count
// left out of both would be dropped from runs export.
func TestEveryAuditCountRoundTrips(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := MustOpenDB(t)
	in := newRun(runOpts{name: "counts", records: 3})
	v := reflect.ValueOf(&in.Audit).Elem()
	var counts []string
	for i := range v.NumField() {
		if f := v.Type().Field(i); f.IsExported() && f.Type.Kind() == reflect.Int {
			v.Field(i).SetInt(int64(7 + i))
			counts = append(counts, f.Name)
		}
	}
	require.NotEmpty(t, counts)
	id, err := db.SaveRun(ctx, in, "")
	require.NoError(t, err)
	got, err := db.GetRun(ctx, id, false)
	require.NoError(t, err)
	g := reflect.ValueOf(&got.Audit).Elem()
	for _, name := range counts {
		assert.Equal(t, v.FieldByName(name).Int(), g.FieldByName(name).Int(), "Audit.%s", name)
	}
}
