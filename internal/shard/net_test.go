package shard_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/shard"
)

// TestListenerJoinsWorkersByToken: a worker with the cell's token gets its
// slot and the channel; a wrong token, a number out of range or a second
// join of one number is refused with an error message and never reaches a
// slot, and the token presented is never echoed.
func TestListenerJoinsWorkersByToken(t *testing.T) {
	token := shard.NewToken()
	require.Len(t, token, 32)
	assert.NotEqual(t, token, shard.NewToken())
	l, err := shard.Listen("127.0.0.1:0", token, 2)
	require.NoError(t, err)
	defer l.Close()
	var mu sync.Mutex
	var rejected []string
	l.Reject = func(err error) { mu.Lock(); rejected = append(rejected, err.Error()); mu.Unlock() }
	addr := fmt.Sprintf("127.0.0.1:%d", l.Port())
	ctx := context.Background()

	refused := func(tok string, i int) string {
		c, err := shard.Dial(ctx, addr, tok, i, time.Second)
		require.NoError(t, err)
		defer c.Close()
		_, err = shard.Accept(c, c)
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
	mu.Lock()
	assert.Len(t, rejected, 3)
	assert.NotContains(t, strings.Join(rejected, " "), "not-the-token")
	mu.Unlock()
}

func TestDialGivesUpOnAnUnreachableCoordinator(t *testing.T) {
	l, err := shard.Listen("127.0.0.1:0", "t", 1)
	require.NoError(t, err)
	addr := fmt.Sprintf("127.0.0.1:%d", l.Port())
	l.Close()
	_, err = shard.Dial(context.Background(), addr, "t", 0, 300*time.Millisecond)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "connect to the coordinator at "+addr)
}
