package shard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"
)

// A dialled channel has two waits no other deadline bounds: the worker's
// for its spec once it joined (the coordinator sends the specs only once
// every worker joined, which may take its --schedule-timeout) and any
// read of a worker stopped (Ctrl-C) while its coordinator is quiet. So:
//
//   - the listener beats on a joined connection (a beat message every
//     joinedBeat) until the coordinator first writes on it, its spec;
//   - a dialled worker takes a coordinator that sends nothing for
//     specSilence before its spec (no beat either) to have stalled, and
//     skips the beats;
//   - a dialled connection's reads end at once when the worker's context
//     does, with its cause, and each of its writes from then on has at most
//     writeGrace (the worker's last messages go out to a live coordinator,
//     never wait on a stalled one).
var (
	joinedBeat  = 3 * time.Second
	specSilence = 30 * time.Second
	writeGrace  = 10 * time.Second
)

// beatLine is a beat message on the wire.
var beatLine = []byte(`{"t":"` + TypeBeat + `"}` + "\n")

// kept is a joined connection that the listener keeps beating on until the
// coordinator first writes on it or closes it.
type kept struct {
	net.Conn
	once  sync.Once
	done  chan struct{} // closed: stop beating
	ended chan struct{} // closed once the beats stopped
}

// keepAlive starts beating on c every d.
func keepAlive(c net.Conn, d time.Duration) *kept {
	k := &kept{Conn: c, done: make(chan struct{}), ended: make(chan struct{})}
	go k.beat(d)
	return k
}

// beat writes a beat every d until quiet; a beat the worker does not take
// within d (it is not reading) closes the connection: the coordinator's
// spec then fails to go, and the worker is reported as ended.
func (k *kept) beat(d time.Duration) {
	defer close(k.ended)
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			_ = k.Conn.SetWriteDeadline(time.Now().Add(d))
			_, err := k.Conn.Write(beatLine)
			_ = k.Conn.SetWriteDeadline(time.Time{})
			if err != nil {
				_ = k.Conn.Close()
				return
			}
		case <-k.done:
			return
		}
	}
}

// quiet stops the beats and waits for the last one to be out.
func (k *kept) quiet() {
	k.once.Do(func() { close(k.done) })
	<-k.ended
}

// Write stops the beats first: what the coordinator writes follows a whole
// beat, never one cut in two.
func (k *kept) Write(p []byte) (int, error) {
	k.quiet()
	return k.Conn.Write(p)
}

// Close closes the connection (ending a beat under way) and stops the
// beats.
func (k *kept) Close() error {
	err := k.Conn.Close()
	k.quiet()
	return err
}

// dialled is a worker's connection to its coordinator, bound to the
// worker's context.
type dialled struct {
	net.Conn
	ctx  context.Context
	stop func() bool // stops watching ctx

	mu     sync.Mutex
	ctxEnd bool // ctx ended: reads stay ended, whatever deadline is set
}

// bindConn binds c's reads and writes to ctx.
func bindConn(ctx context.Context, c net.Conn) *dialled {
	d := &dialled{Conn: c, ctx: ctx}
	d.stop = context.AfterFunc(ctx, d.interrupt)
	return d
}

// interrupt ends a read under way (and every later one) and bounds a write
// under way.
func (d *dialled) interrupt() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ctxEnd = true
	_ = d.Conn.SetReadDeadline(time.Now())
	_ = d.Conn.SetWriteDeadline(time.Now().Add(writeGrace))
}

// SetReadDeadline sets the read deadline, unless ctx ended (reads stay
// ended).
func (d *dialled) SetReadDeadline(t time.Time) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ctxEnd {
		return nil
	}
	return d.Conn.SetReadDeadline(t)
}

// SetDeadline sets the read and write deadlines, the read one unless ctx
// ended.
func (d *dialled) SetDeadline(t time.Time) error {
	if err := d.SetReadDeadline(t); err != nil {
		return err
	}
	return d.Conn.SetWriteDeadline(t)
}

func (d *dialled) Read(p []byte) (int, error) {
	n, err := d.Conn.Read(p)
	if err != nil && d.ctx.Err() != nil {
		err = fmt.Errorf("stopped reading from the coordinator: %w", context.Cause(d.ctx))
	}
	return n, err
}

func (d *dialled) Write(p []byte) (int, error) {
	if d.ctx.Err() != nil {
		_ = d.Conn.SetWriteDeadline(time.Now().Add(writeGrace))
	}
	n, err := d.Conn.Write(p)
	if err != nil && d.ctx.Err() != nil {
		err = fmt.Errorf("write to the coordinator after being stopped (%v): %w", context.Cause(d.ctx), err)
	}
	return n, err
}

func (d *dialled) Close() error {
	d.stop()
	return d.Conn.Close()
}

// readSpec reads the coordinator's first message that is not a beat. From
// a dialled coordinator each must come within specSilence of the last.
func readSpec(conn *Conn, r any) (*Msg, error) {
	d, _ := r.(*dialled)
	beats := false // a coordinator of an earlier version sends none: it is waited for, as it always was
	for {
		if d != nil && beats {
			_ = d.SetReadDeadline(time.Now().Add(specSilence))
		}
		m, err := conn.Recv()
		if d != nil && beats {
			_ = d.SetReadDeadline(time.Time{})
		}
		switch {
		case d != nil && errors.Is(err, os.ErrDeadlineExceeded):
			return nil, fmt.Errorf("read the worker's spec: the coordinator at %s sent nothing for %s since it "+
				"took this worker (stalled, or cut off): %w", d.RemoteAddr(), specSilence, err)
		case err != nil:
			return nil, fmt.Errorf("read the worker's spec: %w", err)
		case m.Type != TypeBeat:
			return m, nil
		}
		beats = true
	}
}
