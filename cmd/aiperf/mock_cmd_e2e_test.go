package main

import (
	"context"
	"errors"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMockServerInterrupted: `aiperf mock-server` stopped by Ctrl-C exits
// 130 as every interrupted command does, saying so (it exited 0).
func TestMockServerInterrupted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cmd := exec.CommandContext(ctx, builtBinary(t, "aiperf"), "mock-server", "--port", "0", "--fast")
	var stderr lockedBuffer
	pipe, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	copied := make(chan struct{})
	go func() { _, _ = io.Copy(&stderr, pipe); close(copied) }()
	require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "listening on http://") },
		hangGuard, 10*time.Millisecond, "stderr: %s", stderr.String())
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	<-copied
	err = cmd.Wait()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "exit: %v", err)
	assert.Equal(t, ExitInterrupted, exit.ExitCode())
	assert.Contains(t, stderr.String(), "aiperf: error: interrupted while serving: SIGINT (Ctrl-C)\n")
}
