package bench

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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

// stallFirst serves chat completions: the first gets a 200 and one chunk,
// then nothing until its client goes away; every other one a 500.
func stallFirst(t *testing.T) string {
	var n atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) > 1 {
			http.Error(w, `{"error":{"message":"boom"}}`, http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}`+"\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestFailedRequestThresholdSaysSoAndSurvivesAnInterrupt: once the
// threshold trips, the log says so at once, with the requests in flight
// it waits for (one stalled request, bounded only by the request
// timeout); a Ctrl-C during that wait ends the run interrupted, and the
// error and the audit's warnings (client_audit in the JSON export, the
// store's warnings) still say the threshold stopped the sending and how
// many requests that left unsent.
func TestFailedRequestThresholdSaysSoAndSurvivesAnInterrupt(t *testing.T) {
	p := profile(stallFirst(t))
	p.NoServerMetrics = true
	p.Concurrency, p.RequestCount = plan.Ptr(2), plan.Ptr(200)
	p.FailedRequestThreshold = plan.Ptr(0.2)
	log := &syncBuffer{}
	ctx, cancel := context.WithCancelCause(context.Background())
	type outcome struct {
		run *result.Run
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		run, err := Run(ctx, Options{Profile: p, Version: "test", Log: log})
		done <- outcome{run, err}
	}()
	require.Eventually(t, func() bool { return strings.Contains(log.String(), "sending stopped") }, hangGuard, time.Millisecond,
		"the threshold trips once 10 requests have failed")
	assert.Contains(t, log.String(), "--failed-request-threshold 0.2 exceeded: ")
	assert.Contains(t, log.String(), "waiting for the requests in flight (1 now)")
	cancel(errors.Join(context.Canceled, errors.New("SIGINT (Ctrl-C)")))
	out := <-done
	require.Error(t, out.err)
	assert.ErrorIs(t, out.err, context.Canceled)
	assert.Contains(t, out.err.Error(), "after --failed-request-threshold 0.2 exceeded: ")
	assert.Contains(t, out.err.Error(), "which stopped the sending")
	assert.Equal(t, result.StatusInterrupted, out.run.Status)
	warnings := strings.Join(out.run.Audit.Warnings, "\n")
	assert.Contains(t, warnings, "--failed-request-threshold 0.2 exceeded: ")
	assert.Regexp(t, `the sending stopped there, so \d+ of 200 profiling requests were never sent`, warnings)
}
