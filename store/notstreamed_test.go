package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
)

// TestNotStreamedRoundTrip: a reply under --streaming that arrived whole
// (metrics.Record.NotStreamed) is stored with its latency and no TTFT, and
// comes back as such, so that what reads the records back (aiperf plot)
// gives it no TTFT or ITL, as the run's exports did; a streamed record
// keeps both.
func TestNotStreamedRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := MustOpenDB(t)
	in := newRun(runOpts{name: "whole", records: 3})
	whole := &in.Records[1]
	whole.ResponseNs, whole.NotStreamed = metrics.StampsOf(whole.SentNs+290e6), true

	id, err := db.SaveRun(ctx, in, "")
	require.NoError(t, err)
	assert.Equal(t, 1, count(t, db, `SELECT count(*) FROM records WHERE ttft_ns IS NULL AND latency_ns IS NOT NULL`))
	got, err := db.GetRun(ctx, id, true)
	require.NoError(t, err)
	require.Len(t, got.Records, 3)

	streamed, back := metrics.Times(&got.Records[0], true), got.Records[1]
	assert.True(t, streamed.Streamed)
	assert.Equal(t, int64(20e6), streamed.TTFTNs)
	assert.True(t, back.NotStreamed)
	tt := metrics.Times(&back, true)
	assert.False(t, tt.Streamed, "no TTFT")
	assert.False(t, tt.HasITL, "no ITL")
	assert.Equal(t, int64(290e6), tt.LatencyNs, "its latency kept")
	assert.False(t, got.Records[2].NotStreamed, "a failed record is not a whole reply")
}
