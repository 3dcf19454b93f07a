package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/bench"
	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/shard"
	"github.com/aiperf-go/aiperf/runner"
)

// exitCodes wraps a cell's workers to keep each one's exit code, which its
// coordinator alone sees (it reaps the process).
type exitCodes struct {
	bench.Workers
	mu    sync.Mutex
	pids  map[int]int // worker → its pid
	codes map[int]int // worker → its exit code
}

func (x *exitCodes) Start(ctx context.Context, i int) (*shard.Peer, error) {
	p, err := x.Workers.Start(ctx, i)
	if err != nil {
		return p, err
	}
	var pid int
	if _, err := fmt.Sscanf(p.Name, "worker %d (pid %d)", new(int), &pid); err != nil {
		return nil, fmt.Errorf("no pid in %q: %w", p.Name, err)
	}
	x.mu.Lock()
	x.pids[i] = pid
	x.mu.Unlock()
	wait := p.Wait
	p.Wait = func() error {
		err := wait()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			code = -1
		}
		x.mu.Lock()
		x.codes[i] = code
		x.mu.Unlock()
		return err
	}
	return p, nil
}

func (x *exitCodes) code(i int) (int, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	c, ok := x.codes[i]
	return c, ok
}

func (x *exitCodes) pid(i int) int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.pids[i]
}

// TestWorkerInterruptedExits130: a worker stopped by SIGTERM (its pod
// deleted) or SIGINT during its load exits 130, so that whatever
// supervises it knows it did not finish its share; its coordinator, which
// got the worker's records and done report, judges the cell as before: it
// failed, naming the worker whose share was cut short.
func TestWorkerInterruptedExits130(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			subprocesses(t)
			tok := tinyTokenizer(t)
			m := startMock(t, mock.Config{TTFT: 2, ITL: 1})
			fw := &failingWorkers{bad: 1, watched: make(chan struct{})} // worker 1 real, its first record seen
			x := &exitCodes{Workers: fw, pids: map[int]int{}, codes: map[int]int{}}
			prev := startWorkers
			startWorkers = func(self string, n int, log io.Writer) bench.Workers {
				fw.Workers = runner.Workers{Binary: self, Count: n, Log: log}
				return x
			}
			t.Cleanup(func() { startWorkers = prev })
			signalled := make(chan error, 1)
			go func() {
				select {
				case <-fw.watched: // worker 1 is under way: a record of its load arrived
				case <-time.After(hangGuard):
					signalled <- errors.New("no record of worker 1 arrived")
					return
				}
				signalled <- syscall.Kill(x.pid(1), sig)
			}()
			dir := t.TempDir()
			inv := cli(t, dir, quick(m.URL, "--tokenizer", tok, "--concurrency", "4", "--request-count", "400",
				"--workers", "2", "--artifact-dir", filepath.Join(dir, "out"), "--no-store")...)
			require.NoError(t, <-signalled)
			code, ok := x.code(1)
			require.True(t, ok, "worker 1 was waited for")
			assert.Equal(t, ExitInterrupted, code, "the interrupted worker's exit code")
			code, ok = x.code(0)
			require.True(t, ok, "worker 0 was waited for")
			assert.Equal(t, ExitOK, code, "the other worker finished its share")
			// As before: the cell fails, naming the worker whose share was cut.
			assert.Equal(t, ExitFailure, inv.code, inv.stderr)
			assert.Contains(t, inv.stderr, fmt.Sprintf("aiperf: error: worker 1 (pid %d): stopped by %s during its load",
				x.pid(1), map[syscall.Signal]string{syscall.SIGTERM: "SIGTERM", syscall.SIGINT: "SIGINT (Ctrl-C)"}[sig]))
			assert.NotContains(t, inv.stderr, "context canceled")
		})
	}
}
