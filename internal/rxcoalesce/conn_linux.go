//go:build linux

package rxcoalesce

import (
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// conn is a TCP connection read and written with non-blocking system calls
// that waits for readiness on its poller.
type conn struct {
	fd           int
	p            *poller
	laddr, raddr net.Addr

	rd, wr chan struct{} // readiness signals, one pending at most
	done   chan struct{} // closed by Close

	rdMu, wrMu sync.Mutex   // one Read and one Write at a time, as net's
	drained    bool         // the last read emptied the socket (under rdMu)
	unusual    atomic.Bool  // the poller saw a FIN, an error or urgent data
	mu         sync.RWMutex // read-held across each system call; Close takes it
	closed     bool

	rdl, wdl atomic.Int64 // deadlines in Unix ns (0: none)
}

func newConn(fd int, p *poller, laddr, raddr net.Addr) *conn {
	return &conn{fd: fd, p: p, laddr: laddr, raddr: raddr,
		rd: make(chan struct{}, 1), wr: make(chan struct{}, 1), done: make(chan struct{})}
}

// Read reads what the socket holds, waiting for the poller's signal when
// it holds nothing.
//
// A read that returned less than it was asked for emptied the socket (a
// TCP receive takes everything queued, up to len(b)), so the next one
// waits for the poller's signal before its system call instead of spending
// one to learn that again: every segment that lands later signals, and a
// signal sent meanwhile is pending. A signal for data already read costs
// the read that finds nothing, as before. Once the poller has seen the
// peer's FIN, an error or urgent data (a receive stops short at each, with
// no later event to wake the reader) every read goes to the socket.
func (c *conn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	c.rdMu.Lock()
	defer c.rdMu.Unlock()
	if c.drained && !c.unusual.Load() {
		c.drained = false
		if err := c.wait(c.rd, &c.rdl); err != nil {
			return 0, c.opError("read", err)
		}
	}
	for {
		if expired(&c.rdl) {
			return 0, c.opError("read", os.ErrDeadlineExceeded)
		}
		n, err := c.io(b, false)
		switch {
		case err == nil && n > 0:
			c.drained = n < len(b)
			return n, nil
		case err == nil:
			return 0, io.EOF
		case err == syscall.EINTR:
		case err == syscall.EAGAIN:
			if err := c.wait(c.rd, &c.rdl); err != nil {
				return 0, c.opError("read", err)
			}
		default:
			return 0, c.opError("read", err)
		}
	}
}

// Write writes all of b, waiting for write readiness when the socket's
// buffer is full.
func (c *conn) Write(b []byte) (int, error) {
	c.wrMu.Lock()
	defer c.wrMu.Unlock()
	written := 0
	for written < len(b) {
		if expired(&c.wdl) {
			return written, c.opError("write", os.ErrDeadlineExceeded)
		}
		n, err := c.io(b[written:], true)
		if n > 0 {
			written += n
		}
		switch {
		case err == nil, err == syscall.EINTR:
		case err == syscall.EAGAIN:
			c.watchWrite(true)
			err = c.wait(c.wr, &c.wdl)
			c.watchWrite(false)
			if err != nil {
				return written, c.opError("write", err)
			}
		default:
			return written, c.opError("write", err)
		}
	}
	return written, nil
}

// io reads into b or writes b with one system call on the open
// descriptor; a closed connection fails with net.ErrClosed.
func (c *conn) io(b []byte, write bool) (int, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return 0, net.ErrClosed
	}
	if write {
		return syscall.Write(c.fd, b)
	}
	return syscall.Read(c.fd, b)
}

// watchWrite asks the poller for write readiness too, or no longer, while
// the descriptor is open.
func (c *conn) watchWrite(on bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if !c.closed {
		c.p.watchWrite(c, on)
	}
}

// expired reports whether the deadline dl has passed.
func expired(dl *atomic.Int64) bool {
	d := dl.Load()
	return d != 0 && time.Now().UnixNano() >= d
}

// wait blocks until ch is signalled, the connection closes or the deadline
// dl passes. Setting a deadline signals ch, so a waiter always waits under
// the current one.
func (c *conn) wait(ch chan struct{}, dl *atomic.Int64) error {
	d := dl.Load()
	if d == 0 {
		select {
		case <-ch:
			return nil
		case <-c.done:
			return net.ErrClosed
		}
	}
	left := time.Until(time.Unix(0, d))
	if left <= 0 {
		return os.ErrDeadlineExceeded
	}
	t := time.NewTimer(left) // only under a deadline: net/http sets none on a body's reads
	defer t.Stop()
	select {
	case <-ch:
		return nil
	case <-c.done:
		return net.ErrClosed
	case <-t.C:
		return os.ErrDeadlineExceeded
	}
}

func (c *conn) opError(op string, err error) error {
	if err == net.ErrClosed || err == os.ErrDeadlineExceeded {
		return &net.OpError{Op: op, Net: "tcp", Source: c.laddr, Addr: c.raddr, Err: err}
	}
	return &net.OpError{Op: op, Net: "tcp", Source: c.laddr, Addr: c.raddr, Err: os.NewSyscallError(op, err)}
}

// Close removes the socket from the poller and closes it; a blocked Read or
// Write returns net.ErrClosed.
func (c *conn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return net.ErrClosed
	}
	c.closed = true
	c.p.remove(c)
	err := syscall.Close(c.fd)
	c.mu.Unlock()
	close(c.done)
	if err != nil {
		return c.opError("close", err)
	}
	return nil
}

func (c *conn) LocalAddr() net.Addr  { return c.laddr }
func (c *conn) RemoteAddr() net.Addr { return c.raddr }

func (c *conn) SetDeadline(t time.Time) error {
	c.setDeadline(t, true, true)
	return nil
}

func (c *conn) SetReadDeadline(t time.Time) error {
	c.setDeadline(t, true, false)
	return nil
}

func (c *conn) SetWriteDeadline(t time.Time) error {
	c.setDeadline(t, false, true)
	return nil
}

// setDeadline sets the read and/or write deadline and wakes the waiters so
// that they wait again under it.
func (c *conn) setDeadline(t time.Time, read, write bool) {
	d := int64(0)
	if !t.IsZero() {
		d = t.UnixNano()
	}
	if read {
		c.rdl.Store(d)
		signal(c.rd)
	}
	if write {
		c.wdl.Store(d)
		signal(c.wr)
	}
}
