package shard

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/load"
)

// within is the generous bound on anything that should end at once.
const within = 10 * time.Second

// fakeCoordinator listens on loopback for one worker: it reads its join
// line (then closes joinRead) and hands the connection to serve, which
// says what it wants; the connection stays open until the test ends.
func fakeCoordinator(t *testing.T, serve func(c net.Conn)) (addr string, joinRead chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	joinRead = make(chan struct{})
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		t.Cleanup(func() { _ = c.Close() })
		if _, err := bufio.NewReader(c).ReadBytes('\n'); err != nil {
			return
		}
		close(joinRead)
		serve(c)
	}()
	return ln.Addr().String(), joinRead
}

// answer writes messages on c.
func answer(c net.Conn, msgs ...Msg) {
	for _, m := range msgs {
		b, _ := json.Marshal(m)
		_, _ = c.Write(append(b, '\n'))
	}
}

// quietAfterJoined answers the join, then says nothing.
func quietAfterJoined(c net.Conn) { answer(c, Msg{Type: TypeJoined}) }

// await returns what ch gives within the generous bound.
func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(within):
		require.FailNow(t, what+" did not end within "+within.String())
		panic("unreachable")
	}
}

// accept runs Accept on c in the background.
func accept(c net.Conn) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := Accept(c, c)
		done <- err
	}()
	return done
}

// setTimings sets the dialled channel's timings for one test.
func setTimings(t *testing.T, beat, silence, grace time.Duration) {
	b, s, g := joinedBeat, specSilence, writeGrace
	joinedBeat, specSilence, writeGrace = beat, silence, grace
	t.Cleanup(func() { joinedBeat, specSilence, writeGrace = b, s, g })
}

// TestWorkerStoppedWhileWaitingForItsSpec: a worker whose coordinator
// answered joined then went quiet stops at once when its context ends
// (Ctrl-C), with an error that is the cancellation.
func TestWorkerStoppedWhileWaitingForItsSpec(t *testing.T) {
	addr, _ := fakeCoordinator(t, quietAfterJoined)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := Dial(ctx, addr, "tok", 0, 3*time.Second)
	require.NoError(t, err)
	defer c.Close()
	done := accept(c)
	cancel()
	err = await(t, done, "Accept")
	require.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "read the worker's spec: stopped reading from the coordinator")
}

// TestWorkerStoppedWhileJoining: a coordinator that never answers the
// join does not hold a stopped worker for the join's timeout.
func TestWorkerStoppedWhileJoining(t *testing.T) {
	addr, joinRead := fakeCoordinator(t, func(net.Conn) {})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		c, err := Dial(ctx, addr, "tok", 0, time.Minute)
		if c != nil {
			_ = c.Close()
		}
		done <- err
	}()
	await(t, joinRead, "the join")
	cancel()
	start := time.Now()
	err := await(t, done, "Dial")
	require.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "connect to the coordinator at "+addr)
	assert.Less(t, time.Since(start), joinTimeout/2, "not held for the join's timeout")
}

// TestWorkerStoppedDuringTheRun: once serving, a worker whose coordinator
// is quiet ends its channel when its context ends, and a write to a
// coordinator that reads nothing more gives up within the write grace.
func TestWorkerStoppedDuringTheRun(t *testing.T) {
	setTimings(t, joinedBeat, specSilence, 100*time.Millisecond)
	addr, _ := fakeCoordinator(t, func(c net.Conn) {
		answer(c, Msg{Type: TypeJoined}, Msg{Type: TypeSpec, Spec: &Spec{Workers: 1}})
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := Dial(ctx, addr, "tok", 0, 3*time.Second)
	require.NoError(t, err)
	defer c.Close()
	wk, err := Accept(c, c)
	require.NoError(t, err)
	ended := make(chan struct{})
	require.NoError(t, wk.Serve(load.NewClock(), func() {}, sync.OnceFunc(func() { close(ended) })))
	cancel()
	await(t, ended, "the worker's reading")

	wrote := make(chan error, 1)
	go func() {
		chunk := make([]byte, 1<<20)
		for {
			if _, err := c.Write(chunk); err != nil {
				wrote <- err
				return
			}
		}
	}()
	err = await(t, wrote, "writing to a coordinator that reads nothing")
	assert.ErrorContains(t, err, "write to the coordinator after being stopped (context canceled)")
}

// TestWorkerDropsACoordinatorThatSendsNoSpec: a coordinator that answered
// joined, then sent nothing (no spec, no beat) for the spec's silence, is
// taken to have stalled.
func TestWorkerDropsACoordinatorThatSendsNoSpec(t *testing.T) {
	setTimings(t, joinedBeat, 200*time.Millisecond, writeGrace)
	addr, _ := fakeCoordinator(t, func(c net.Conn) { // it beat once, then went quiet
		answer(c, Msg{Type: TypeJoined})
		answer(c, Msg{Type: TypeBeat})
		time.Sleep(time.Minute)
	})
	c, err := Dial(context.Background(), addr, "tok", 0, 3*time.Second)
	require.NoError(t, err)
	defer c.Close()
	err = await(t, accept(c), "Accept")
	require.Error(t, err)
	assert.False(t, errors.Is(err, context.Canceled))
	assert.Contains(t, err.Error(), "read the worker's spec: the coordinator at "+addr+" sent nothing for 200ms")
}

// TestWorkerWaitsForABeatingCoordinator: a coordinator that beats takes
// as long as it needs to send the spec (its other workers joining): the
// worker skips the beats and takes the spec.
func TestWorkerWaitsForABeatingCoordinator(t *testing.T) {
	setTimings(t, joinedBeat, time.Second, writeGrace)
	addr, _ := fakeCoordinator(t, func(c net.Conn) {
		answer(c, Msg{Type: TypeJoined})
		for range 100 { // 2 s: twice the spec's silence
			time.Sleep(20 * time.Millisecond)
			answer(c, Msg{Type: TypeBeat})
		}
		answer(c, Msg{Type: TypeSpec, Spec: &Spec{Worker: 3, Workers: 4}})
	})
	c, err := Dial(context.Background(), addr, "tok", 3, 3*time.Second)
	require.NoError(t, err)
	defer c.Close()
	wk, err := Accept(c, c)
	require.NoError(t, err)
	assert.Equal(t, 3, wk.Spec().Worker)
}

// TestListenerBeatsUntilTheSpec: the listener beats on a joined
// connection until the coordinator writes on it, and stops then: nothing
// comes between the coordinator's messages.
func TestListenerBeatsUntilTheSpec(t *testing.T) {
	setTimings(t, 5*time.Millisecond, specSilence, writeGrace)
	l, err := Listen("127.0.0.1:0", "tok", 1, nil)
	require.NoError(t, err)
	defer l.Close()
	c, err := net.Dial("tcp", l.ln.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Write([]byte(`{"t":"join","worker":0,"token":"tok"}` + "\n"))
	require.NoError(t, err)
	lines := make(chan string, 1000)
	go func() {
		sc := bufio.NewScanner(c)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	assert.Equal(t, `{"t":"joined"}`, await(t, lines, "the answer"))
	assert.Equal(t, string(beatLine[:len(beatLine)-1]), await(t, lines, "a beat before the coordinator took it"))
	got, err := l.Conn(context.Background(), 0)
	require.NoError(t, err)
	defer got.Close()
	ch := NewConn(got, got)
	require.NoError(t, ch.Send(&Msg{Type: TypeSpec, Spec: &Spec{}}))
	require.NoError(t, ch.Send(&Msg{Type: TypeStop}))
	line := await(t, lines, "the spec")
	for line == `{"t":"beat"}` {
		line = await(t, lines, "the spec")
	}
	assert.Contains(t, line, `"t":"spec"`)
	assert.Equal(t, `{"t":"stop"}`, await(t, lines, "the stop"), "no beat after the spec")
}
