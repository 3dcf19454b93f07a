package bench

import (
	"context"
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
