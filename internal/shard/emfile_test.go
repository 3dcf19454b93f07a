//go:build linux

package shard_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/shard"
)

const emfileChild = "AIPERF_SHARD_EMFILE_CHILD"

// TestListenerSurvivesEMFILE: out of file descriptors, the listener's
// accept fails (EMFILE); it tells so, backs off and, once descriptors are
// free again, takes the worker that was waiting. It runs in a child
// process of its own: it lowers the process's descriptor limit.
func TestListenerSurvivesEMFILE(t *testing.T) {
	if os.Getenv(emfileChild) == "1" {
		emfileScenario(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestListenerSurvivesEMFILE$", "-test.v")
	cmd.Env = append(os.Environ(), emfileChild+"=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "--- PASS: TestListenerSurvivesEMFILE")
}

func emfileScenario(t *testing.T) {
	open, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	var lim syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim))
	lim.Cur = uint64(len(open) + 32)
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim))

	token := shard.NewToken()
	l, warned, addr := listen(t, token, 1)

	// Take every descriptor but one: the worker's socket takes that one,
	// and the listener has none left to accept it with.
	var fill []*os.File
	for {
		f, err := os.Open(os.DevNull)
		if err != nil {
			require.ErrorIs(t, err, syscall.EMFILE)
			break
		}
		fill = append(fill, f)
	}
	fill[len(fill)-1].Close()
	fill = fill[:len(fill)-1]
	joined := make(chan error, 1)
	go func() {
		c, err := shard.Dial(context.Background(), addr, token, 0, time.Minute)
		if err == nil {
			c.Close()
		}
		joined <- err
	}()
	select {
	case <-warned.first:
	case <-time.After(time.Minute): // a hang guard only
		t.Fatal("the listener never told of an accept error")
	}
	assert.Contains(t, warned.all()[0], "accept a worker connection (retrying)")
	assert.Contains(t, warned.all()[0], "too many open files")
	for _, f := range fill {
		f.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard only
	defer cancel()
	c, err := l.Conn(ctx, 0)
	require.NoError(t, err, "the listener kept accepting")
	c.Close()
	require.NoError(t, <-joined)
	assert.False(t, errors.Is(ctx.Err(), context.DeadlineExceeded))
}
