package rxcoalesce

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestAShortReadIsNotRetried: a read that emptied the socket is followed by
// no read(2) until the poller signals the next segment, so a message that
// arrives while its reader waits costs one system call, where a plain
// non-blocking loop spends two (the read that finds nothing, then the one
// that finds it). The writer waits until the reader is parked, so the
// count does not depend on which of them runs first.
func TestAShortReadIsNotRetried(t *testing.T) {
	if _, err := readSyscalls(); err != nil {
		t.Skipf("no read count: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	c, s := pair(t, ln)
	defer s.Close()

	const messages = 200
	got := make(chan int)
	go func() {
		buf := make([]byte, 4096)
		for range messages {
			n, _ := c.Read(buf)
			got <- n
		}
	}()
	msg := bytes.Repeat([]byte("x"), 100)
	before, err := readSyscalls()
	require.NoError(t, err)
	for range messages {
		waitUntilParked(t)
		_, err := s.Write(msg)
		require.NoError(t, err)
		within(t, func() { require.Equal(t, len(msg), <-got) })
	}
	after, err := readSyscalls()
	require.NoError(t, err)
	// The bound leaves room for the runtime's own reads (its poller's wake-up
	// eventfd): about one in ten here, against one in one without the fix.
	assert.LessOrEqual(t, after-before, int64(messages*3/2),
		"read system calls for %d messages, each arriving while its reader waited", messages)
}

// readSyscalls is the process's count of read system calls so far (syscr
// of /proc/self/io).
func readSyscalls() (int64, error) {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "syscr: "); ok {
			var n int64
			_, err := fmt.Sscan(v, &n)
			return n, err
		}
	}
	return 0, errors.New("no syscr in /proc/self/io")
}

// waitUntilParked returns once a goroutine waits for a connection's read
// signal.
func waitUntilParked(t *testing.T) {
	t.Helper()
	buf := make([]byte, 1<<20)
	deadline := time.Now().Add(hang)
	for !bytes.Contains(buf[:runtime.Stack(buf, true)], []byte("rxcoalesce.(*conn).wait(")) {
		require.True(t, time.Now().Before(deadline), "no reader parked")
		runtime.Gosched()
	}
}

// TestShortReadsThatLeaveSomethingUnread: a receive stops short at the
// peer's FIN and at an urgent mark with more queued behind it, and may
// leave no later event to wake the reader; after the poller has seen
// either, reads go to the socket, so the reader gets the rest and the end,
// not a hang. The reader is parked before the peer sends, so everything
// lands while it waits; whether the poller then signals once or twice
// depends on the machine, so each case runs on twenty connections.
func TestShortReadsThatLeaveSomethingUnread(t *testing.T) {
	for name, tc := range map[string]struct {
		send  func(*net.TCPConn) error
		toEOF bool // read to the end, not to the four bytes
	}{
		"fin": {toEOF: true, send: func(s *net.TCPConn) error {
			if _, err := s.Write([]byte("abde")); err != nil {
				return err
			}
			return s.CloseWrite()
		}},
		"urgent": {send: func(s *net.TCPConn) error {
			// One segment, "ab", urgent "c", "de" (corked), and no FIN: the
			// poller sees only the urgent data.
			if err := setCork(s, 1); err != nil {
				return err
			}
			if _, err := s.Write([]byte("ab")); err != nil {
				return err
			}
			if err := sendUrgent(s, 'c'); err != nil {
				return err
			}
			if _, err := s.Write([]byte("de")); err != nil {
				return err
			}
			return setCork(s, 0)
		}},
	} {
		t.Run(name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			defer ln.Close()
			for range 20 {
				c, s := pair(t, ln)
				got := make(chan string, 1)
				go func() {
					var all []byte
					buf := make([]byte, 4096)
					for {
						n, err := c.Read(buf)
						all = append(all, buf[:n]...)
						if err != nil || !tc.toEOF && len(all) == len("abde") {
							got <- string(all)
							return
						}
					}
				}()
				waitUntilParked(t)
				require.NoError(t, tc.send(s))
				within(t, func() { require.Equal(t, "abde", <-got) })
				c.Close()
				s.Close()
			}
		})
	}
}

// pair dials ln through the poller and returns both ends.
func pair(t *testing.T, ln net.Listener) (net.Conn, *net.TCPConn) {
	t.Helper()
	accepted := make(chan net.Conn, 1)
	go func() {
		if s, err := ln.Accept(); err == nil {
			accepted <- s
		}
	}()
	c := dial(t, ln.Addr().String())
	var s net.Conn
	within(t, func() { s = <-accepted })
	return c, s.(*net.TCPConn)
}

// sendUrgent sends b as TCP urgent data (MSG_OOB).
func sendUrgent(s *net.TCPConn, b byte) error {
	rc, err := s.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Write(func(fd uintptr) bool {
		serr = unix.Sendto(int(fd), []byte{b}, unix.MSG_OOB, nil)
		return serr != unix.EAGAIN
	}); err != nil {
		return err
	}
	return serr
}

// setCork sets TCP_CORK on s.
func setCork(s *net.TCPConn, on int) error {
	rc, err := s.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_CORK, on)
	}); err != nil {
		return err
	}
	return serr
}
