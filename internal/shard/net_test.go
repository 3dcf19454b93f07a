package shard_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/shard"
)

// warnings collects a listener's warnings.
type warnings struct {
	mu    sync.Mutex
	lines []string
	first chan struct{} // closed at the first
}

func newWarnings() *warnings { return &warnings{first: make(chan struct{})} }

func (w *warnings) warn(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.lines) == 0 {
		close(w.first)
	}
	w.lines = append(w.lines, err.Error())
}

// listen listens on loopback for n workers presenting token, its warnings
// collected; it returns the address the workers dial.
func listen(t *testing.T, token string, n int) (*shard.Listener, *warnings, string) {
	t.Helper()
	warned := newWarnings()
	l, err := shard.Listen("127.0.0.1:0", token, n, warned.warn)
	require.NoError(t, err)
	t.Cleanup(l.Close)
	return l, warned, fmt.Sprintf("127.0.0.1:%d", l.Port())
}

func (w *warnings) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.lines...)
}

// TestListenerJoinsWorkersByToken: a worker with the cell's token gets its
// slot and the channel; a wrong token, a number out of range or a second
// join of one number is refused with an error message and never reaches a
// slot, and the token presented is never echoed. The refusals are
// summarised: the first told at once, the rest counted.
func TestListenerJoinsWorkersByToken(t *testing.T) {
	token := shard.NewToken()
	require.Len(t, token, 32)
	assert.NotEqual(t, token, shard.NewToken())
	l, warned, addr := listen(t, token, 2)
	ctx := context.Background()

	refused := func(tok string, i int) string {
		_, err := shard.Dial(ctx, addr, tok, i, time.Second)
		require.Error(t, err)
		return err.Error()
	}
	msg := refused("not-the-token", 0)
	assert.Contains(t, msg, "the coordinator refused this worker")
	assert.Contains(t, msg, "wrong token")
	assert.NotContains(t, msg, "not-the-token")
	assert.Contains(t, refused(token, 2), "worker 2 is not one of the cell's 2")

	c1, err := shard.Dial(ctx, addr, token, 1, time.Second)
	require.NoError(t, err)
	defer c1.Close()
	got, err := l.Conn(ctx, 1)
	require.NoError(t, err)
	defer got.Close()
	assert.Contains(t, refused(token, 1), "worker 1 already joined")

	// The channel works over the joined connection.
	require.NoError(t, shard.NewConn(got, got).Send(&shard.Msg{Type: shard.TypeSpec, Spec: &shard.Spec{Worker: 1, Workers: 2}}))
	w, err := shard.Accept(c1, c1)
	require.NoError(t, err)
	assert.Equal(t, 1, w.Spec().Worker)

	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err = l.Conn(short, 0)
	assert.ErrorIs(t, err, context.DeadlineExceeded, "worker 0 never joined: the refused ones took no slot")
	lines := warned.all()
	require.Len(t, lines, 1, "the first refusal is told at once, the others held back")
	assert.Contains(t, lines[0], "wrong token")
	l.Close()
	lines = warned.all()
	require.Len(t, lines, 2)
	assert.Contains(t, lines[1], "refused 2 more worker connections (the last: ")
	assert.NotContains(t, strings.Join(lines, " "), "not-the-token")
}

func TestDialGivesUpOnAnUnreachableCoordinator(t *testing.T) {
	l, err := shard.Listen("127.0.0.1:0", "t", 1, nil)
	require.NoError(t, err)
	addr := fmt.Sprintf("127.0.0.1:%d", l.Port())
	l.Close()
	_, err = shard.Dial(context.Background(), addr, "t", 0, 300*time.Millisecond)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "connect to the coordinator at "+addr)
}

// TestListenerOutlastsAFlood: hundreds of connections that never join
// (held open) and hundreds that join with a wrong token do not keep the
// real worker out, and are told in a line or two, not one each.
func TestListenerOutlastsAFlood(t *testing.T) {
	token := shard.NewToken()
	l, warned, addr := listen(t, token, 1)
	ctx := context.Background()

	var idle []net.Conn
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	for range 300 {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		idle = append(idle, c) // says nothing, stays open
	}
	for range 300 {
		_, err := shard.Dial(ctx, addr, "guess", 0, time.Second)
		require.ErrorContains(t, err, "wrong token")
	}
	c, err := shard.Dial(ctx, addr, token, 0, 30*time.Second)
	require.NoError(t, err, "the real worker joins")
	defer c.Close()
	got, err := l.Conn(ctx, 0)
	require.NoError(t, err)
	got.Close()
	assert.LessOrEqual(t, len(warned.all()), 2, "600 refusals told in a line or two: %q", warned.all())
	l.Close()
	lines := warned.all()
	assert.LessOrEqual(t, len(lines), 3)
	assert.Regexp(t, `refused \d+ more worker connections`, strings.Join(lines, "\n"))
}
