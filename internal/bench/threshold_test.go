package bench

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
)

// TestFailedRequestThresholdEndsProfilingEarly: against a server failing
// 60% of requests, a 0.3 threshold ends the profiling once armed (10
// finished, concurrency 2); the requests in flight drain (none is cut), the
// results are still summarised, and the run fails naming the threshold.
func TestFailedRequestThresholdEndsProfilingEarly(t *testing.T) {
	srv, url := startMock(t, mock.Config{Fast: true, ErrorRate: 60, RandomSeed: 1})
	p := profile(url)
	p.Concurrency, p.RequestCount = plan.Ptr(2), plan.Ptr(2000)
	p.FailedRequestThreshold = plan.Ptr(0.3)
	run, err := Run(context.Background(), Options{Profile: p, Version: "test"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--failed-request-threshold 0.3 exceeded")
	require.NotNil(t, run)
	assert.Equal(t, result.StatusFailed, run.Status)
	n := len(run.Records)
	assert.GreaterOrEqual(t, n, 10, "not before it is armed")
	assert.Less(t, n, 100, "ended early")
	assert.Equal(t, n, srv.Control().InferenceRequests, "every request sent was recorded")
	failed := 0
	for _, r := range run.Records {
		assert.False(t, r.Cancelled, "in-flight requests drain, none is cut")
		if r.Error != nil {
			failed++
		}
	}
	errs, _ := run.Profiling.Get(metrics.TagErrorRequestCount)
	assert.Equal(t, float64(failed), errs.Value, "the partial results are summarised")
	assert.Greater(t, float64(failed)/float64(n), 0.3)
}

// TestFailedRequestThresholdNotExceeded: a ratio at the threshold, or
// failures only in the warmup, do not end the run.
func TestFailedRequestThresholdNotExceeded(t *testing.T) {
	_, url := startMock(t, mock.Config{Fast: true, ErrorRate: 100})
	p := profile(url)
	p.FailedRequestThreshold = plan.Ptr(1.0)
	run, err := Run(context.Background(), Options{Profile: p, Version: "test"})
	require.ErrorIs(t, err, ErrAllFailed, "a ratio of 1 never exceeds 1: the run fails for its own reason")
	assert.Len(t, run.Records, 12)

	_, url = startMock(t, mock.Config{Fast: true})
	p = profile(url)
	p.FailedRequestThreshold = plan.Ptr(0.0)
	run, err = Run(context.Background(), Options{Profile: p, Version: "test"})
	require.NoError(t, err)
	assert.Equal(t, result.StatusComplete, run.Status)
	assert.Len(t, run.Records, 12)
}
