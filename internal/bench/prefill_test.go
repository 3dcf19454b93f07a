package bench

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// TestPrefillConcurrencyOne: against a real stream, --prefill-concurrency 1
// under --concurrency 4 lets one request at a time wait for its first
// token: no request is sent before the previous one's first token arrived,
// while later tokens of several requests overlap.
func TestPrefillConcurrencyOne(t *testing.T) {
	_, url := startMock(t, mock.Config{TTFT: 20, ITL: 20})
	p := profile(url)
	p.Concurrency, p.RequestCount, p.PrefillConcurrency = plan.Ptr(4), plan.Ptr(8), plan.Ptr(1)
	require.NoError(t, p.Check())
	run, err := Run(context.Background(), Options{Profile: p, Version: "test"})
	require.NoError(t, err)
	recs := slices.Clone(run.Records)
	require.Len(t, recs, 8)
	slices.SortFunc(recs, func(a, b metrics.Record) int { return int(a.SentNs - b.SentNs) })
	overlap := false
	for i := 1; i < len(recs); i++ {
		prev := recs[i-1]
		require.False(t, prev.ResponseNs.IsZero())
		assert.GreaterOrEqual(t, recs[i].SentNs, prev.ResponseNs.First(), "sent after the previous first token")
		overlap = overlap || recs[i].SentNs < prev.EndNs
	}
	assert.True(t, overlap, "decoding overlaps: the cap is on prefill only")
}
