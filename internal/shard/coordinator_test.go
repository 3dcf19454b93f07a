package shard_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/load"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/shard"
	"github.com/aiperf-go/aiperf/internal/shard/fakeworker"
)

// hangGuard bounds a cell that should end by itself: never the assertion.
const hangGuard = 2 * time.Minute

// cell is a sharded cell of fake worker processes, one per mode.
type cell struct {
	t    *testing.T
	co   *shard.Coordinator
	pids []int

	mu      sync.Mutex
	records []metrics.Record
	arrived chan int // the worker of each record, as it arrives
	hooks   []string
}

func newCell(t *testing.T, d shard.Deadlines, modes ...fakeworker.Mode) *cell {
	c := &cell{t: t, arrived: make(chan int, 16)}
	c.co = &shard.Coordinator{Clock: load.NewClock(), Deadlines: d, Lead: 10 * time.Millisecond, Pings: 2,
		OnRecord: func(r metrics.Record) {
			c.mu.Lock()
			c.records = append(c.records, r)
			c.mu.Unlock()
			c.arrived <- r.Worker
		},
		Hooks: load.Hooks{
			BeforeSend: func(_ context.Context, ph plan.Phase) error { c.hook("start " + ph.Name); return nil },
			Drained:    func(ph plan.Phase) { c.hook("drained " + ph.Name) },
		}}
	for i, mode := range modes {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), fakeworker.Env+"="+string(mode), "GORACE=atexit_sleep_ms=0")
		in, err := cmd.StdinPipe()
		require.NoError(t, err)
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		cmd.Stderr = os.Stderr
		require.NoError(t, cmd.Start())
		c.pids = append(c.pids, cmd.Process.Pid)
		t.Cleanup(func() { _ = cmd.Process.Kill() }) // should the test fail before the cell ends
		c.co.Peers = append(c.co.Peers, &shard.Peer{
			Name: fmt.Sprintf("worker %d (pid %d, %s)", i, cmd.Process.Pid, mode),
			Conn: shard.NewConn(out, in),
			Wait: func() error { in.Close(); return cmd.Wait() },
			Kill: func() { _ = cmd.Process.Kill() },
		})
	}
	return c
}

func (c *cell) hook(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hooks = append(c.hooks, s)
}

// run runs the cell's one profiling phase until it ends by itself.
func (c *cell) run(ctx context.Context) (shard.Outcome, error) {
	n := len(c.co.Peers)
	return c.runPhases(ctx, []plan.Phase{{Name: "profiling", Kind: plan.KindProfiling, Concurrency: n}})
}

// runPhases runs phases, split among the cell's workers, until the cell
// ends by itself.
func (c *cell) runPhases(ctx context.Context, phases []plan.Phase) (shard.Outcome, error) {
	n := len(c.co.Peers)
	shares, err := shard.Split(phases, n)
	require.NoError(c.t, err)
	specs := make([]shard.Spec, n)
	for i := range specs {
		specs[i] = shard.Spec{Worker: i, Workers: n, Phases: shares[i]}
	}
	type result struct {
		out shard.Outcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := c.co.Run(ctx, phases, specs)
		done <- result{out, err}
	}()
	select {
	case r := <-done:
		return r.out, r.err
	case <-time.After(hangGuard):
		c.t.Fatal("the cell did not end by itself")
		return shard.Outcome{}, nil
	}
}

// gone asserts that every worker process ended and was reaped.
func (c *cell) gone() {
	for _, pid := range c.pids {
		assert.ErrorIs(c.t, syscall.Kill(pid, 0), syscall.ESRCH, "pid %d is gone", pid)
	}
}

func (c *cell) kept() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.records)
}

// TestStoppedWorkerFailsTheCell: a worker stopped (SIGSTOP) in the middle
// of its phase goes silent; past the silence deadline it is killed and
// named, the other is told to stop, the records that arrived are kept.
func TestStoppedWorkerFailsTheCell(t *testing.T) {
	c := newCell(t, shard.Deadlines{Silence: time.Second, Handshake: time.Minute},
		fakeworker.NeverDrained, fakeworker.NeverDrained)
	go func() {
		for range 2 { // both are in the phase once their records arrived
			<-c.arrived
		}
		_ = syscall.Kill(c.pids[1], syscall.SIGSTOP)
	}()
	out, err := c.run(context.Background())
	require.Error(t, err)
	assert.Regexp(t, `worker 1 \(pid \d+, never-drained\) sent nothing for [\d.]+m?s during the profiling phase `+
		`\(--worker-silence-timeout 1s\): stopped or hung; it was killed \(1 records received from it are kept\)`, err.Error())
	assert.NotContains(t, err.Error(), "worker 0", "the other was stopped, not failed")
	assert.Equal(t, 2, c.kept())
	assert.Equal(t, "start profiling", c.hooks[0])
	require.Len(t, out.Workers, 2)
	assert.NotNil(t, out.Workers[0].Done, "the other worker ended well once told to stop")
	assert.Contains(t, out.Workers[1].Error, "sent nothing for")
	c.gone()
}

// TestWorkerThatNeverDrainsFailsTheCell: a worker alive (it beats) that
// never says its phase drained, while the other did, fails the cell by
// name past the drain deadline.
func TestWorkerThatNeverDrainsFailsTheCell(t *testing.T) {
	c := newCell(t, shard.Deadlines{Drain: 500 * time.Millisecond}, fakeworker.Good, fakeworker.NeverDrained)
	_, err := c.run(context.Background())
	require.Error(t, err)
	assert.Regexp(t, `worker 1 \(pid \d+, never-drained\) did not report the end of the profiling phase within 500ms `+
		`of another worker's, nor sent a record \(--worker-drain-timeout 500ms\); it was killed \(1 records`, err.Error())
	assert.Equal(t, 2, c.kept())
	c.gone()
}

// TestGraceKillFiresOnItsOwn: workers that ignore the stop (and keep
// beating, so that nothing else happens) are killed once the grace period
// after the stop ran out.
func TestGraceKillFiresOnItsOwn(t *testing.T) {
	c := newCell(t, shard.Deadlines{Grace: 300 * time.Millisecond}, fakeworker.IgnoreStop, fakeworker.IgnoreStop)
	ctx, cancel := context.WithCancelCause(context.Background())
	go func() {
		<-c.arrived
		<-c.arrived
		cancel(fmt.Errorf("%w by interrupt", context.Canceled))
	}()
	_, err := c.run(ctx)
	require.ErrorIs(t, err, context.Canceled)
	assert.Regexp(t, `worker 0 \(pid \d+, ignore-stop\) did not end within 300ms of being told to stop; it was killed`, err.Error())
	assert.Regexp(t, `worker 1 \(pid \d+, ignore-stop\) did not end within 300ms of being told to stop; it was killed`, err.Error())
	c.gone()
}

// TestHandshakeTimeout: a worker that reads its spec and never says it is
// prepared (it beats: it is not silent) fails the cell past the handshake
// deadline, before any phase starts.
func TestHandshakeTimeout(t *testing.T) {
	// Long enough for the good worker's hello on a loaded machine under the
	// race detector (500 ms was not, in CI): the test then waits it out.
	c := newCell(t, shard.Deadlines{Handshake: 5 * time.Second}, fakeworker.Good, fakeworker.NoHello)
	_, err := c.run(context.Background())
	require.Error(t, err)
	assert.Regexp(t, `worker 1 \(pid \d+, no-hello\) was not prepared \(no hello\) within 5s of its spec `+
		`\(--worker-handshake-timeout\); it was killed`, err.Error())
	assert.NotContains(t, err.Error(), "worker 0")
	assert.Empty(t, c.hooks, "no phase started")
	c.gone()
}

// TestHostileWorkerFailsTheCell: a worker that sends an impossible record
// or a line over the limit is killed and named; nothing it sent after is
// taken, the other is stopped and its records kept.
func TestHostileWorkerFailsTheCell(t *testing.T) {
	for mode, want := range map[fakeworker.Mode]string{
		fakeworker.Impossible: `sent an impossible record: record 0: a negative duration: end_ns is [\d.]+ ms before sent_ns`,
		fakeworker.Future: `sent an impossible record: record 0: end_ns [\d.]+ ms is outside the profiling phase's window ` +
			`\([-\d.]+ ms to [\d.]+ ms on the coordinator's clock\)`,
		fakeworker.Oversized: `broke the protocol \(message too large: a line over 16777216 bytes\)`,
	} {
		t.Run(string(mode), func(t *testing.T) {
			c := newCell(t, shard.Deadlines{}, fakeworker.NeverDrained, mode)
			_, err := c.run(context.Background())
			require.Error(t, err)
			assert.Regexp(t, `worker 1 \(pid \d+, `+string(mode)+`\) `+want+`; it was killed \(0 records received`, err.Error())
			assert.NotContains(t, err.Error(), "worker 0")
			c.mu.Lock()
			require.Len(t, c.records, 1, "worker 0's record only")
			assert.Equal(t, 0, c.records[0].Worker)
			c.mu.Unlock()
			c.gone()
		})
	}
}
