package rxcoalesce

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestTheSetIsWatchedOnlyWhileWaiting: the poller's epoll set is in the
// runtime's poller only while the poller waits there. A set watched by
// another passes each of its events on, a second wake-up callback that
// loopback runs in the sending server's context for every segment, so the
// set must not stay registered while the poller coalesces (looks without
// waiting) or reads.
func TestTheSetIsWatchedOnlyWhileWaiting(t *testing.T) {
	p, err := newPoller(cfg)
	require.NoError(t, err)
	c, peer := loopbackOnto(t, p)

	require.False(t, watched(t, p.epfd), "the set is not in the runtime's poller before any wait")
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.block(make([]syscall.EpollEvent, 8))
	}()
	deadline := time.Now().Add(hang)
	for !watched(t, p.epfd) {
		require.True(t, time.Now().Before(deadline), "the waiting poller never registered its set")
		time.Sleep(time.Millisecond)
	}
	_, err = peer.Write([]byte("x"))
	require.NoError(t, err)
	within(t, func() { <-done })
	require.False(t, watched(t, p.epfd), "the set left the runtime's poller when the wait ended")
	within(t, func() { <-c.rd })
}

// TestDenseLooksAreAWindowApart: while events are dense, after a look
// that found some the poller holds the thread for what is left of the
// Window since that look began, so that the next look (and the reads it
// wakes) takes what arrived meanwhile in one go instead of a segment or
// two; readers that took longer than a Window are not held. The clock is
// a fake: what is asserted is the hold the loop asks for. (It holds only
// with one P, as under taskset, where coalescing is on by default.)
func TestDenseLooksAreAWindowApart(t *testing.T) {
	p, err := newPoller(cfg)
	require.NoError(t, err)
	p.pace = true
	c, peer := loopbackOnto(t, p)

	events := make([]syscall.EpollEvent, 8)
	for _, tc := range []struct {
		readers time.Duration // what the readers woken by a look take
		want    []time.Duration
	}{
		{5 * time.Microsecond, []time.Duration{cfg.Window - 5*time.Microsecond}},
		{cfg.Window + time.Microsecond, nil},
	} {
		_, err = peer.Write([]byte("x"))
		require.NoError(t, err)
		d := density(256)
		clk := &fakeClock{t: time.Unix(0, 0), tick: tc.readers}
		within(t, func() { p.step(events, &d, clk) })
		require.Equal(t, tc.want, clk.slept, "readers taking %v", tc.readers)
		within(t, func() { <-c.rd })
	}
}

// fakeClock advances by tick at each reading after the first, and by
// what it is asked to sleep, which it records.
type fakeClock struct {
	t     time.Time
	tick  time.Duration
	read  bool
	slept []time.Duration
}

func (f *fakeClock) now() time.Time {
	if f.read {
		f.t = f.t.Add(f.tick)
	}
	f.read = true
	return f.t
}

func (f *fakeClock) sleep(d time.Duration) {
	f.slept = append(f.slept, d)
	f.t = f.t.Add(d)
}

// loopbackOnto dials a loopback connection and moves it onto p, returning
// it and its peer; the test's end closes both and p's set.
func loopbackOnto(t *testing.T, p *poller) (*conn, net.Conn) {
	t.Helper()
	t.Cleanup(func() { syscall.Close(p.epfd) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	tc, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	peer, err := ln.Accept()
	require.NoError(t, err)
	t.Cleanup(func() { peer.Close() })
	c := adoptOnto(t, tc, p)
	t.Cleanup(func() { c.Close() })
	return c, peer
}

// adoptOnto moves tc onto p, as adopt does onto the process's poller.
func adoptOnto(t *testing.T, tc net.Conn, p *poller) *conn {
	t.Helper()
	fd, err := detach(tc.(*net.TCPConn))
	require.NoError(t, err)
	c := newConn(fd, p, tc.LocalAddr(), tc.RemoteAddr())
	require.NoError(t, p.add(c))
	return c
}

// watched reports whether any epoll set of this process watches a
// descriptor of the same open file as epfd (kcmp's KCMP_FILE, 0).
func watched(t *testing.T, epfd int) bool {
	t.Helper()
	links, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	pid := uintptr(os.Getpid())
	for _, l := range links {
		target, err := os.Readlink("/proc/self/fd/" + l.Name())
		if err != nil || target != "anon_inode:[eventpoll]" {
			continue
		}
		f, err := os.Open("/proc/self/fdinfo/" + l.Name())
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var tfd int
			if _, err := fmt.Sscanf(strings.TrimSpace(sc.Text()), "tfd: %d", &tfd); err != nil {
				continue
			}
			same, _, errno := syscall.Syscall6(unix.SYS_KCMP, pid, pid, 0, uintptr(tfd), uintptr(epfd), 0)
			if errno == syscall.ENOSYS || errno == syscall.EPERM {
				f.Close()
				t.Skipf("kcmp: %v", errno)
			}
			if errno == 0 && same == 0 {
				f.Close()
				return true
			}
		}
		f.Close()
	}
	return false
}
