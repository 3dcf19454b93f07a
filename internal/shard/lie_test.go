package shard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/shard"
	"github.com/aiperf-go/aiperf/internal/shard/fakeworker"
)

// TestLyingWorkerFailsTheCell: a worker whose records or account cannot be
// true (a record twice, a request never assigned to it, a record
// relabelled as a phase it drained, a done or progress report the records
// that arrived belie) fails the cell, named with what was wrong: at the
// record when the record itself gives it away, else at its done report.
// No record is merged twice, its lying account is not taken into the
// merged reports, and the honest worker is not blamed.
func TestLyingWorkerFailsTheCell(t *testing.T) {
	profiling := func(requests int) []plan.Phase {
		return []plan.Phase{{Name: "profiling", Kind: plan.KindProfiling, Concurrency: 2, Requests: requests}}
	}
	for _, tc := range []struct {
		name   string
		mode   fakeworker.Mode
		phases []plan.Phase
		want   string
	}{
		{"duplicate", fakeworker.Duplicate, profiling(0),
			`sent an impossible record: record 0: request_num 0 of the profiling phase arrived twice \(a duplicate\)`},
		{"foreign in a counted phase", fakeworker.Foreign, profiling(2),
			`sent an impossible record: record 100000: request_num 100000 is beyond this worker's share of the ` +
				`profiling phase \(1 requests, request_num 0 to 0\): a request never assigned to it`},
		{"foreign in an uncounted phase", fakeworker.Foreign, profiling(0),
			`sent an impossible done report: it reported sending 1 requests of the profiling phase, but 2 records of it arrived`},
		{"wrong phase", fakeworker.WrongPhase, []plan.Phase{{Name: "warmup", Kind: plan.KindWarmup, Concurrency: 2},
			{Name: "profiling", Kind: plan.KindProfiling, Concurrency: 2}},
			`sent an impossible done report: it reported sending 1 requests of the warmup phase, but 2 records of it arrived`},
		{"done beyond the share", fakeworker.DoneInflated, profiling(2),
			`sent an impossible done report: it reported sending 1000000 requests of the profiling phase, beyond its share of 1`},
		{"done beyond the records", fakeworker.DoneInflated, profiling(0),
			`sent an impossible done report: it reported sending 1000000 requests of the profiling phase, but 1 records of it arrived`},
		{"done negative", fakeworker.DoneNegative, profiling(2),
			`sent an impossible done report: its report of the profiling phase has sessions -5, out of range`},
		{"short of its share", fakeworker.Short, profiling(4),
			`sent an impossible done report: it reported sending 1 requests of the profiling phase \(1 records of it ` +
				`arrived\), short of its share of 2, though nothing cut the phase short \(no interrupt, halt, failure or duration\)`},
		{"short of its sessions", fakeworker.Short,
			[]plan.Phase{{Name: "profiling", Kind: plan.KindProfiling, Concurrency: 2, Sessions: 4}},
			`sent an impossible done report: it reported starting 1 sessions of the profiling phase \(1 records of it ` +
				`arrived\), short of its share of 2, though nothing cut the phase short \(no interrupt, halt, failure or duration\)`},
		{"progress inflated", fakeworker.ProgressInflated, profiling(2),
			`sent an impossible progress report: 1000000000000000 requests of the profiling phase sent, out of range`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCell(t, shard.Deadlines{}, fakeworker.Good, tc.mode)
			out, err := c.runPhases(context.Background(), tc.phases)
			require.Error(t, err, "a lying worker fails the cell")
			assert.Regexp(t, `^worker 1 \(pid \d+, `+string(tc.mode)+`\) `+tc.want+
				`; it was killed \(\d+ records received from it are kept\)$`, err.Error())
			assert.NotContains(t, err.Error(), "worker 0")
			require.Len(t, out.Workers, 2)
			assert.NotNil(t, out.Workers[0].Done)
			assert.Nil(t, out.Workers[1].Done, "the liar's account is not taken")
			for _, r := range out.Reports {
				assert.LessOrEqual(t, r.Sent, 2, "%s: no lie in the merged report", r.Phase.Name)
				assert.GreaterOrEqual(t, r.Sessions, 0)
				assert.GreaterOrEqual(t, r.Cancelled, 0)
			}
			c.mu.Lock()
			defer c.mu.Unlock()
			seen := map[[2]int]bool{}
			for _, r := range c.records {
				key := [2]int{r.Worker, r.Index}
				assert.False(t, seen[key], "no record merged twice: %+v", r)
				seen[key] = true
			}
			c.gone()
		})
	}
}

// TestHonestWorkersPassTheChecks: workers that tell the truth over three
// phases, counted by requests, by sessions or not at all, pass the checks
// of their records and accounts.
func TestHonestWorkersPassTheChecks(t *testing.T) {
	c := newCell(t, shard.Deadlines{}, fakeworker.Good, fakeworker.Good, fakeworker.Good)
	out, err := c.runPhases(context.Background(), []plan.Phase{
		{Name: "warmup", Kind: plan.KindWarmup, Concurrency: 3, Requests: 7},
		{Name: "sessions", Kind: plan.KindProfiling, Concurrency: 3, Sessions: 5},
		{Name: "profiling", Kind: plan.KindProfiling, Concurrency: 3}})
	require.NoError(t, err)
	require.Len(t, out.Reports, 3)
	assert.Equal(t, 7, out.Reports[0].Sent)
	assert.Equal(t, 5, out.Reports[1].Sessions)
	assert.Equal(t, 3, out.Reports[2].Sent)
	assert.Equal(t, 15, c.kept())
	c.gone()
}

// TestShortWorkerOfACutPhase: a worker's share of a counted phase may end
// short when the phase was cut: by its duration, or by the coordinator's
// halt (the failed-request threshold, here on the first record of each
// worker, before its done report). The cell passes.
func TestShortWorkerOfACutPhase(t *testing.T) {
	counted := plan.Phase{Name: "profiling", Kind: plan.KindProfiling, Concurrency: 2, Requests: 8}
	timed := counted
	timed.Duration = 60
	t.Run("a duration", func(t *testing.T) {
		c := newCell(t, shard.Deadlines{}, fakeworker.Short, fakeworker.Short)
		out, err := c.runPhases(context.Background(), []plan.Phase{timed})
		require.NoError(t, err)
		assert.Equal(t, 2, out.Reports[0].Sent)
		c.gone()
	})
	t.Run("halted", func(t *testing.T) {
		c := newCell(t, shard.Deadlines{}, fakeworker.Short, fakeworker.Short)
		take := c.co.OnRecord
		c.co.OnRecord = func(r metrics.Record) { take(r); c.co.Halt() }
		out, err := c.runPhases(context.Background(), []plan.Phase{counted})
		require.NoError(t, err)
		assert.Equal(t, 2, out.Reports[0].Sent)
		c.gone()
	})
}

// TestStopCauseMarksTheCut: a worker's request cut because the
// coordinator stopped the workers when another worker died is marked so
// (shard.CutWorkerFailed), not as cut by an interrupt; one cut by an
// interrupt (the run's context ended) stays an interrupt's.
func TestStopCauseMarksTheCut(t *testing.T) {
	cuts := func(c *cell) []string {
		c.mu.Lock()
		defer c.mu.Unlock()
		var why []string
		for _, r := range c.records {
			if r.Cancelled {
				why = append(why, fmt.Sprintf("worker %d: %s", r.Worker, r.CutBy))
			}
		}
		return why
	}
	t.Run("a worker died", func(t *testing.T) {
		c := newCell(t, shard.Deadlines{}, fakeworker.CutOnStop, fakeworker.Crash)
		out, err := c.run(context.Background())
		require.Error(t, err)
		assert.Regexp(t, `^worker 1 \(pid \d+, crash\) died during the profiling phase \(1 records received from it are kept\)`,
			err.Error())
		assert.NotContains(t, err.Error(), "worker 0")
		assert.Equal(t, []string{"worker 0: " + shard.CutWorkerFailed}, cuts(c))
		require.NotNil(t, out.Workers[0].Done, "the stopped worker's account passed the checks")
		assert.Equal(t, 1, out.Reports[0].Cancelled)
		c.gone()
	})
	t.Run("interrupted", func(t *testing.T) {
		c := newCell(t, shard.Deadlines{}, fakeworker.CutOnStop, fakeworker.CutOnStop)
		ctx, cancel := context.WithCancelCause(context.Background())
		go func() {
			<-c.arrived
			<-c.arrived
			cancel(fmt.Errorf("%w by interrupt", context.Canceled))
		}()
		out, err := c.run(ctx)
		require.ErrorIs(t, err, context.Canceled)
		assert.ElementsMatch(t, []string{"worker 0: " + metrics.CutInterrupt, "worker 1: " + metrics.CutInterrupt}, cuts(c))
		assert.Equal(t, 2, out.Reports[0].Cancelled)
		c.gone()
	})
}
