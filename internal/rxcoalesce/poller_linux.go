//go:build linux

package rxcoalesce

import (
	"net"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// pollers are the process's pollers, one per configuration.
var (
	pollersMu sync.Mutex
	pollers   = map[Config]*poller{}
)

// edgeIn is what every connection is watched for: readable, peer closed,
// urgent data, edge-triggered.
const edgeIn = uint32(unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLPRI | unix.EPOLLET)

// unusual are the events after which a short read may leave something
// unread (a FIN, an error, data past an urgent mark): see conn.Read.
const unusual = uint32(unix.EPOLLRDHUP | unix.EPOLLHUP | unix.EPOLLERR | unix.EPOLLPRI)

// poller is one epoll set read by one goroutine.
type poller struct {
	cfg  Config
	epfd int // non-blocking, so that the runtime's poller can wait on a duplicate
	// pace holds the thread between dense looks (see run): with one P the
	// hold comes after every other goroutine had its turn; with more it
	// would take a P from goroutines that run beside the poller.
	pace bool

	mu    sync.RWMutex
	conns map[int32]*conn // by file descriptor
}

// pollerFor returns the poller of cfg, starting it on first use.
func pollerFor(cfg Config) (*poller, error) {
	pollersMu.Lock()
	defer pollersMu.Unlock()
	if p := pollers[cfg]; p != nil {
		return p, nil
	}
	p, err := newPoller(cfg)
	if err != nil {
		return nil, err
	}
	pollers[cfg] = p
	go p.run()
	return p, nil
}

// newPoller makes the epoll set of a poller; run reads it.
func newPoller(cfg Config) (*poller, error) {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	if err := syscall.SetNonblock(epfd, true); err != nil {
		syscall.Close(epfd)
		return nil, os.NewSyscallError("fcntl", err)
	}
	return &poller{cfg: cfg, epfd: epfd, pace: runtime.GOMAXPROCS(0) == 1, conns: map[int32]*conn{}}, nil
}

// add registers c for read readiness (known first, so that no event of
// it finds it unknown).
func (p *poller) add(c *conn) error {
	p.mu.Lock()
	p.conns[int32(c.fd)] = c
	p.mu.Unlock()
	if err := p.ctl(syscall.EPOLL_CTL_ADD, c, edgeIn); err != nil {
		p.forget(c)
		return os.NewSyscallError("epoll_ctl", err)
	}
	return nil
}

// watchWrite asks for write readiness too (on) or for read readiness only.
func (p *poller) watchWrite(c *conn, on bool) {
	events := edgeIn
	if on {
		events |= syscall.EPOLLOUT
	}
	_ = p.ctl(syscall.EPOLL_CTL_MOD, c, events)
}

func (p *poller) ctl(op int, c *conn, events uint32) error {
	ev := syscall.EpollEvent{Events: events, Fd: int32(c.fd)}
	return syscall.EpollCtl(p.epfd, op, c.fd, &ev)
}

// remove takes c out of the epoll set and forgets it; its descriptor is
// still open.
func (p *poller) remove(c *conn) {
	_ = syscall.EpollCtl(p.epfd, syscall.EPOLL_CTL_DEL, c.fd, nil)
	p.forget(c)
}

func (p *poller) forget(c *conn) {
	p.mu.Lock()
	if p.conns[int32(c.fd)] == c {
		delete(p.conns, int32(c.fd))
	}
	p.mu.Unlock()
}

// run is the poller's loop. While events are dense (three in four recent
// waits found one within a window or two) it looks at the connections
// without waiting, a Window apart: after a look that found events it
// yields, so that the readers it woke run, and (with one P) holds the
// thread for what is left of the Window before it looks again, so that
// each read takes what arrived meanwhile in one go (fewer reads, fewer
// acknowledgements back to the server). After a look that found none it
// sleeps a Window and looks again, up to holdWindows times: a busy server
// is never asked to wake the client. Otherwise, or after those looks, it waits in the
// runtime's poller, so that a sparse event is read as soon as it lands and
// costs one look more than a plain net.Conn's read.
//
// What sets dense is what each wait found: a look after a sleep that
// found events, or a wait in the runtime's poller that lasted under two
// windows (its wake-up latency makes that measure err towards sparse).
func (p *poller) run() {
	events := make([]syscall.EpollEvent, 256)
	var d density
	for {
		p.step(events, &d, realClock{})
	}
}

// step is one turn of run's loop.
func (p *poller) step(events []syscall.EpollEvent, d *density, clk clock) {
	w := p.cfg.Window
	if d.dense() {
		look := clk.now()
		if p.poll(events) > 0 {
			runtime.Gosched()
			if rest := w - clk.now().Sub(look); p.pace && rest > 0 {
				clk.sleep(rest)
			}
			return
		}
	}
	found := false
	for k := 0; d.dense() && k < holdWindows && !found; k++ {
		runtime.Gosched() // whatever else is runnable runs before the sleep holds the thread
		clk.sleep(w)
		found = p.poll(events) > 0
		d.score(found)
	}
	if !found {
		start := clk.now()
		p.block(events)
		d.score(clk.now().Sub(start) < 2*w)
	}
	runtime.Gosched()
}

// clock is the time the poller's loop reads and the holds it makes.
type clock interface {
	now() time.Time
	sleep(time.Duration)
}

type realClock struct{}

func (realClock) now() time.Time        { return time.Now() }
func (realClock) sleep(d time.Duration) { sleep(d) }

// holdWindows is how many empty looks, a Window apart, end a spell of
// coalescing.
const holdWindows = 2

// poll takes the ready events without waiting and signals their
// connections, returning how many there were.
func (p *poller) poll(events []syscall.EpollEvent) int {
	n, err := syscall.EpollWait(p.epfd, events, 0)
	if err != nil || n <= 0 {
		return 0
	}
	p.mu.RLock()
	for _, ev := range events[:n] {
		c := p.conns[ev.Fd]
		if c == nil {
			continue
		}
		if ev.Events&unusual != 0 {
			c.unusual.Store(true)
		}
		if ev.Events&^syscall.EPOLLOUT != 0 {
			signal(c.rd)
		}
		if ev.Events&(syscall.EPOLLOUT|syscall.EPOLLERR|syscall.EPOLLHUP) != 0 {
			signal(c.wr)
		}
	}
	p.mu.RUnlock()
	return n
}

// block waits in the runtime's poller until the epoll set has an event and
// signals its connections. The set is registered there for the wait only:
// an epoll set watched by another passes each of its events on, and on
// loopback that second wake-up callback runs in the sender's context, once
// for every segment the server writes (about 1.4% of the kernel's cost of
// a small write, docs/performance.md). Registering costs the client a few
// system calls a wait; while events are dense the poller seldom waits.
// Where the registration fails (no descriptor left), it looks again a
// millisecond later.
func (p *poller) block(events []syscall.EpollEvent) {
	f, err := p.runtimeWait()
	if err == nil {
		defer f.Close() // out of the runtime's poller
		var rc syscall.RawConn
		if rc, err = f.SyscallConn(); err == nil {
			err = rc.Read(func(uintptr) bool { return p.poll(events) > 0 })
		}
	}
	if err != nil {
		time.Sleep(time.Millisecond)
		p.poll(events)
	}
}

// runtimeWait registers a duplicate of the epoll set's descriptor in the
// runtime's poller (os.NewFile does, the descriptor being non-blocking);
// closing the file takes it out.
func (p *poller) runtimeWait() (*os.File, error) {
	fd, err := dupCloexec(p.epfd)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), "rxcoalesce"), nil
}

// signal wakes a connection's waiter, if any, without blocking.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// dupCloexec duplicates fd with FD_CLOEXEC set.
func dupCloexec(fd int) (int, error) {
	nfd, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return -1, os.NewSyscallError("fcntl", err)
	}
	return nfd, nil
}

// sleep holds the thread for d, with a timer slack of 1 µs (the default
// 50 µs would stretch a 20 µs sleep to 70). It keeps the thread's P: the
// poller sleeps only after every other runnable goroutine had its turn.
// The slack is set on whichever thread runs the poller at the time, and
// stays: over a run, on most of the runtime's threads.
func sleep(d time.Duration) {
	syscall.RawSyscall(syscall.SYS_PRCTL, unix.PR_SET_TIMERSLACK, 1000, 0)
	ts := syscall.NsecToTimespec(int64(d))
	syscall.RawSyscall(syscall.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
}

// adopt moves c's socket onto the poller of cfg: it reads and writes a
// duplicate of the descriptor and closes c, which takes the original out of
// the runtime's poller. A connection that is not TCP, or one that cannot
// be moved, is returned as it is.
func adopt(c net.Conn, cfg Config) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	p, err := pollerFor(cfg)
	if err != nil {
		return c
	}
	fd, err := dupOf(tc)
	if err != nil {
		return c
	}
	pc := newConn(fd, p, tc.LocalAddr(), tc.RemoteAddr()) // non-blocking: it shares the original's file status
	if err = p.add(pc); err != nil {
		syscall.Close(fd)
		return c
	}
	tc.Close()
	adopted.Add(1)
	return pc
}

// dupOf duplicates tc's descriptor (close-on-exec), leaving tc open.
func dupOf(tc *net.TCPConn) (int, error) {
	rc, err := tc.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd := -1
	if cerr := rc.Control(func(s uintptr) { fd, err = dupCloexec(int(s)) }); cerr != nil {
		return -1, cerr
	}
	return fd, err
}
