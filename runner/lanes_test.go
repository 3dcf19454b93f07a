package runner_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/runner"
)

// twoServerSweep has cells a1, b1, a2, b2 (in that order), the a cells
// loading server a, the b cells server b.
func twoServerSweep(trials int, cooldown float64) plan.Sweep {
	sw := testSweep(trials, cooldown, 1, 2, 3, 4)
	for i := range sw.Cells {
		sw.Cells[i].Profile.URL = []string{[]string{"http://a:1", "http://b:2"}[i%2]}
	}
	return sw
}

// serverOf says which server a launched spec loads.
func serverOf(spec runner.Spec) string { return spec.Profile.URL[0] }

// overlapExecutor runs every trial until a trial of each server has
// started (so two servers' trials provably overlap, without timing) and
// records, per server, how many of its trials run at once.
type overlapExecutor struct {
	fakeExecutor
	mu       sync.Mutex
	inFlight map[string]int
	maxIn    map[string]int
	seen     map[string]bool
	both     chan struct{}
}

func newOverlapExecutor() *overlapExecutor {
	e := &overlapExecutor{inFlight: map[string]int{}, maxIn: map[string]int{}, seen: map[string]bool{}, both: make(chan struct{})}
	e.respond = func(ctx context.Context, _ int, spec runner.Spec) (*result.Run, error) {
		srv := serverOf(spec)
		e.mu.Lock()
		e.inFlight[srv]++
		e.maxIn[srv] = max(e.maxIn[srv], e.inFlight[srv])
		if e.seen[srv] = true; len(e.seen) == 2 && e.both != nil {
			close(e.both)
			e.both = nil
		}
		both := e.both
		e.mu.Unlock()
		if both != nil {
			select {
			case <-both:
			case <-ctx.Done():
			}
		}
		e.mu.Lock()
		e.inFlight[srv]--
		e.mu.Unlock()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return completeRun(spec, 10), nil
	}
	return e
}

func TestParallelLanesNeverShareAServer(t *testing.T) {
	sw := twoServerSweep(2, 0.01)
	e, s := newOverlapExecutor(), &fakeStore{}
	o, _ := options(t, e, s)
	o.Parallel = 4 // more than the two lanes
	var progress bytes.Buffer
	o.Progress = &progress

	out, err := runWithin(t, context.Background(), sw, o)
	require.NoError(t, err)
	assert.Equal(t, runner.Outcome{Total: 8, Completed: 8}, out)
	assert.Equal(t, map[string]int{"http://a:1": 1, "http://b:2": 1}, e.maxIn, "one trial at a time per server")
	assert.Len(t, s.runs(), 8, "every trial stored once")

	byServer := map[string][]string{}
	for _, k := range e.keys() {
		for _, tr := range sw.TrialList() {
			if tr.Key() == k {
				byServer[serverOf(runner.Spec{Profile: tr.Cell.Profile})] = append(byServer[serverOf(runner.Spec{Profile: tr.Cell.Profile})], k)
			}
		}
	}
	for _, l := range runner.Lanes(sw, 2) {
		var want []string
		for _, tr := range l.Trials {
			want = append(want, tr.Key())
		}
		assert.Equal(t, want, byServer[l.Servers[0]], "a lane's trials in plan order")
	}
	for i := 1; i <= 8; i++ {
		assert.Equal(t, 2, strings.Count(progress.String(), fmt.Sprintf("[%d/8] ", i)), "trial %d: a running and an end line", i)
	}
	assert.Contains(t, progress.String(), "(ETA 0s)")
}

func TestParallelOneKeepsPlanOrder(t *testing.T) {
	sw := twoServerSweep(1, 0)
	for _, parallel := range []int{0, 1} {
		l := &fakeExecutor{}
		o, _ := options(t, l, &fakeStore{})
		o.Parallel = parallel
		_, err := runner.Run(context.Background(), sw, o)
		require.NoError(t, err)
		var want []string
		for _, tr := range sw.TrialList() {
			want = append(want, tr.Key())
		}
		assert.Equal(t, want, l.keys(), "--parallel %d: the plan's order, servers interleaved", parallel)
	}
	assert.Len(t, runner.Lanes(sw, 1), 1)
	assert.Len(t, runner.Lanes(testSweep(1, 0, 1, 2), 8), 1, "one server: one lane whatever --parallel")
}

func TestParallelCancellationStopsEveryLane(t *testing.T) {
	sw := twoServerSweep(2, 0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	running := 0
	var stopped []string
	l := &fakeExecutor{respond: func(ctx context.Context, _ int, spec runner.Spec) (*result.Run, error) {
		mu.Lock()
		if running++; running == 2 {
			cancel() // Ctrl-C while both lanes run a trial
		}
		mu.Unlock()
		<-ctx.Done()
		mu.Lock()
		stopped = append(stopped, serverOf(spec))
		mu.Unlock()
		return nil, ctx.Err()
	}}
	s := &fakeStore{}
	o, _ := options(t, l, s)
	o.Parallel = 2
	var progress bytes.Buffer
	o.Progress = &progress
	out, err := runWithin(t, ctx, sw, o)
	require.ErrorIs(t, err, context.Canceled)
	assert.True(t, out.Interrupted)
	assert.ElementsMatch(t, []string{"http://a:1", "http://b:2"}, stopped, "both running trials saw the cancellation")
	assert.Len(t, l.calls, 2, "nothing launched after it")
	assert.Empty(t, s.runs(), "interrupted trials are not stored")
	assert.Equal(t, 2, strings.Count(progress.String(), "interrupted (not stored)"))
}

func TestParallelStoreFailureStopsTheSweep(t *testing.T) {
	sw := twoServerSweep(3, 0)
	e := newOverlapExecutor()
	o, _ := options(t, e, &failingStore{})
	o.Parallel = 2
	out, err := runWithin(t, context.Background(), sw, o)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "disk full")
	assert.Zero(t, out.Completed)
	assert.LessOrEqual(t, len(e.calls), 2, "no trial launched after the store failed")
}

type failingStore struct{ fakeStore }

func (*failingStore) SaveRun(context.Context, *result.Run, string) (int64, error) {
	return 0, errors.New("disk full")
}
