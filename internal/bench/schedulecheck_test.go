package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/ctxtest"
	"github.com/aiperf-go/aiperf/internal/load"
	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
)

// lateTrace is a timestamped trace whose first record is at 1000 ms.
func lateTrace(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "late.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(`{"timestamp": 1000, "input_length": 10, "output_length": 2}
{"timestamp": 1200, "input_length": 11, "output_length": 2}
`), 0o644))
	return path
}

// A fixed schedule whose first timestamp comes after --benchmark-duration
// would send nothing: refused before any traffic, naming the duration, the
// first timestamp and the fixes.
func TestFixedScheduleAfterTheDurationIsRefused(t *testing.T) {
	srv, url := startMock(t, mock.Config{Fast: true})
	p := profile(url)
	p.InputFile, p.RequestCount, p.BenchmarkDuration = lateTrace(t), nil, plan.Ptr(0.5)
	_, err := Run(context.Background(), Options{Profile: p})
	var input *InputError
	require.ErrorAs(t, err, &input)
	assert.Equal(t, "--benchmark-duration 0.5: the fixed schedule's first request (first timestamp 1000) is due 1000 ms "+
		"after the start, when the 0.5 s duration has ended: no request would be sent; give a duration above 1 s, or "+
		"--fixed-schedule-auto-offset to start the schedule at its first timestamp (nothing was sent)", err.Error())
	assert.Zero(t, srv.Control().InferenceRequests)

	// The speed-up brings it within the duration: the run goes.
	p.ReplaySpeedup = plan.Ptr(4.0)
	run, err := Run(context.Background(), Options{Profile: p})
	require.NoError(t, err)
	assert.Len(t, run.Records, 2)
}

// A run whose profiling phase sent nothing is a failure the client could
// not drive (ErrAllFailed), not a complete run of no records.
func TestRunThatSentNothingIsFlagged(t *testing.T) {
	c := newCell(Options{Profile: plan.NewProfile()})
	c.phases = []plan.Phase{{Name: "warmup", Kind: plan.KindWarmup, Requests: 2},
		{Name: "profiling", Kind: plan.KindProfiling, Fixed: true, Duration: 0.5}}
	reports := []load.PhaseReport{{Phase: c.phases[0], Sent: 2}, {Phase: c.phases[1]}}
	run, err := c.finish(context.Background(), phasesOutcome{reports: reports})
	require.ErrorIs(t, err, ErrAllFailed)
	assert.Equal(t, "no profiling request was sent: phase profiling sent nothing (its 0.5 s duration ended before its "+
		"first send), so there is nothing to measure", err.Error())
	assert.Equal(t, result.StatusFailed, run.Status)
}

// A Ctrl-C while the dataset is being prepared is reported as such, not
// as a wait for the server that never began.
func TestInterruptWhilePreparingNamesTheStage(t *testing.T) {
	srv, url := startMock(t, mock.Config{Fast: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := &ctxtest.CancelOn{Marker: "tokens counted with", Cancel: cancel} // written by prepare, before the dataset opens
	run, err := Run(ctx, Options{Profile: profile(url), Log: log})
	require.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "interrupted while preparing the dataset (nothing was sent)")
	assert.Equal(t, result.StatusInterrupted, run.Status)
	assert.Zero(t, srv.Control().InferenceRequests)
}

// A fixed schedule held back by --concurrency names the schedule's rate
// in its warning (it has no target rate: it said 0.0 req/s).
func TestFixedScheduleHeldByTheCapNamesItsRate(t *testing.T) {
	_, url := startMock(t, mock.Config{TTFT: 20, ITL: 5})
	path := filepath.Join(t.TempDir(), "cc.jsonl")
	var trace []byte
	for i := range 5 {
		trace = fmt.Appendf(trace, `{"timestamp": %d, "input_length": 8, "output_length": 50}`+"\n", 10*i)
	}
	require.NoError(t, os.WriteFile(path, trace, 0o644))
	p := profile(url)
	p.InputFile, p.RequestCount, p.Concurrency = path, nil, plan.Ptr(1)
	run, err := Run(context.Background(), Options{Profile: p})
	require.NoError(t, err)
	assert.Equal(t, "fixed", run.Audit.Mode)
	assert.Zero(t, run.Audit.TargetRate)
	require.Equal(t, 4, run.Audit.CapDelayed, "each request of 265 ms or more holds the next four sends, 10 ms apart")
	assert.Contains(t, run.Audit.Warnings, fmt.Sprintf("4 of 5 sends waited for a free in-flight slot (--concurrency cap): "+
		"the server did not keep up with the schedule's %.1f req/s at this cap; latency counts from the actual send",
		run.Audit.ScheduledRate))
	assert.InDelta(t, 100, run.Audit.ScheduledRate, 1)
}
