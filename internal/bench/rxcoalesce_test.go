package bench

import (
	"context"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/rxcoalesce"
)

// TestRunWithReceiveCoalescing runs a cell whose connections are read
// through the coalescing poller (as a client on one CPU does by default):
// every stream is read whole, each event stamped in order after the send.
func TestRunWithReceiveCoalescing(t *testing.T) {
	srv, url := startMock(t, mock.Config{Fast: true})
	p := profile(url)
	p.RxCoalesceUsecs = plan.Ptr(20)
	p.OutputTokensMean = plan.Ptr(64)
	p.Concurrency, p.RequestCount = plan.Ptr(16), plan.Ptr(400)
	before := rxcoalesce.Adopted()
	run, err := Run(context.Background(), Options{Profile: p, Version: "test"})
	require.NoError(t, err)
	if runtime.GOOS == "linux" {
		assert.GreaterOrEqual(t, rxcoalesce.Adopted()-before, int64(16), "each of the 16 connections read through the poller")
	}
	assert.Equal(t, result.StatusComplete, run.Status)
	assert.Equal(t, 20, run.Audit.RxCoalesceUsecs, "the audit says which window the client read with")
	require.Len(t, run.Records, 400)
	for _, r := range run.Records {
		require.True(t, r.OK(), "%+v", r.Error)
		assert.Equal(t, 64, r.OutputTokens)
		stamps := r.ResponseNs.Slice()
		require.GreaterOrEqual(t, len(stamps), 64, "a stamp per content event")
		assert.Greater(t, stamps[0], r.SentNs)
		for i := 1; i < len(stamps); i++ {
			require.GreaterOrEqual(t, stamps[i], stamps[i-1], "stamps in reading order")
		}
		assert.LessOrEqual(t, stamps[len(stamps)-1], r.EndNs)
	}
	assert.Equal(t, 400, srv.Control().InferenceRequests)
}
