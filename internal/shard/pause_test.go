package shard

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestCoordinatorPausedBlamesNoWorker: a coordinator that missed its
// checks (stopped by Ctrl-Z, a suspended VM) finds its worker's channel
// waiting as long as it was itself stopped; it blames the worker only for
// the silence after it resumed, so a worker that stays silent past the
// deadline from then is still caught.
func TestCoordinatorPausedBlamesNoWorker(t *testing.T) {
	killed := false
	conn := NewConn(io.MultiReader(), &bytes.Buffer{})
	c := &Coordinator{Peers: []*Peer{{Name: "worker 0", Conn: conn, Kill: func() { killed = true }}}}
	c.peers = make([]peerState, 1)
	r := &run{c: c, d: Deadlines{Silence: time.Second, Handshake: time.Minute}}
	now := time.Now().UnixNano()
	paused := int64(10 * time.Second)
	conn.rd.heard.Store(true)
	conn.rd.since.Store(now - paused) // its read began before the pause
	r.lastWatch = now - paused        // the last check, before the pause

	r.watch()
	assert.False(t, killed, "the silence was the coordinator's own pause")
	assert.Equal(t, -1, r.silent(r.resumed+int64(r.d.Silence)/2))
	assert.False(t, killed)
	assert.Equal(t, 0, r.silent(r.resumed+2*int64(r.d.Silence)), "silent for the deadline since the resume")
	assert.True(t, killed)
}
