package rxcoalesce

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hang bounds every wait of these tests: far beyond any machine's speed,
// it only turns a hang into a failure.
const hang = 30 * time.Second

var cfg = Config{Window: 20 * time.Microsecond}

// dial connects to addr through the poller of cfg.
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := Dialer((&net.Dialer{}).DialContext, cfg)(context.Background(), "tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	if runtime.GOOS == "linux" {
		_, plain := c.(*net.TCPConn)
		require.False(t, plain, "a TCP connection is moved onto the poller")
	}
	return c
}

// listen serves each accepted connection with handle.
func listen(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				handle(c)
			}()
		}
	}()
	return ln.Addr().String()
}

func echo(c net.Conn) { _, _ = io.Copy(c, c) }

// within fails the test if f has not returned within hang.
func within(t *testing.T, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(hang):
		t.Fatal("hung")
	}
}

func TestEchoesMegabytesOnManyConnections(t *testing.T) {
	addr := listen(t, echo)
	var wg sync.WaitGroup
	for i := range 8 {
		c := dial(t, addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			want := make([]byte, 1<<20+i) // more than the socket buffers: writes and reads wait
			_, _ = rand.Read(want)
			go func() { _, _ = c.Write(want) }()
			got := make([]byte, len(want))
			_, err := io.ReadFull(c, got)
			assert.NoError(t, err)
			assert.True(t, bytes.Equal(want, got), "connection %d echoes its bytes", i)
		}()
	}
	within(t, wg.Wait)
}

func TestSparseMessagesAfterThePollerIdles(t *testing.T) {
	release := make(chan struct{})
	addr := listen(t, func(c net.Conn) {
		for i := range 5 {
			<-release
			fmt.Fprintf(c, "message %d\n", i)
		}
	})
	r := bufio.NewReader(dial(t, addr))
	for i := range 5 {
		time.Sleep(5 * time.Millisecond) // sparse: the poller waits in the runtime's poller
		release <- struct{}{}
		var line string
		within(t, func() { line, _ = r.ReadString('\n') })
		assert.Equal(t, fmt.Sprintf("message %d\n", i), line)
	}
}

func TestPeerCloseIsEOF(t *testing.T) {
	addr := listen(t, func(c net.Conn) { _, _ = c.Write([]byte("bye")) })
	var got []byte
	var err error
	within(t, func() { got, err = io.ReadAll(dial(t, addr)) })
	require.NoError(t, err)
	assert.Equal(t, "bye", string(got))
}

func TestCloseUnblocksRead(t *testing.T) {
	addr := listen(t, func(c net.Conn) { _, _ = io.Copy(io.Discard, c) })
	c := dial(t, addr)
	errs := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 8))
		errs <- err
	}()
	time.Sleep(10 * time.Millisecond) // let it block (it fails the same way if it has not)
	require.NoError(t, c.Close())
	select {
	case err := <-errs:
		assert.ErrorIs(t, err, net.ErrClosed)
	case <-time.After(hang):
		t.Fatal("Read did not return after Close")
	}
	_, err := c.Write([]byte("x"))
	assert.ErrorIs(t, err, net.ErrClosed)
	assert.ErrorIs(t, c.Close(), net.ErrClosed, "a second Close")
}

func TestDeadlines(t *testing.T) {
	addr := listen(t, func(c net.Conn) { _, _ = io.Copy(io.Discard, c) })
	c := dial(t, addr)

	require.NoError(t, c.SetReadDeadline(time.Now().Add(20*time.Millisecond)))
	var err error
	within(t, func() { _, err = c.Read(make([]byte, 8)) })
	require.ErrorIs(t, err, os.ErrDeadlineExceeded)
	var ne net.Error
	require.ErrorAs(t, err, &ne)
	assert.True(t, ne.Timeout())

	// A deadline moved into the past wakes a reader blocked without one.
	require.NoError(t, c.SetReadDeadline(time.Time{}))
	errs := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 8))
		errs <- err
	}()
	time.Sleep(10 * time.Millisecond)
	require.NoError(t, c.SetDeadline(time.Now().Add(-time.Second)))
	select {
	case err := <-errs:
		assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
	case <-time.After(hang):
		t.Fatal("Read did not return after its deadline passed")
	}
	_, err = c.Write([]byte("x"))
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
}

func TestDescriptorsAreNotLeaked(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts /proc/self/fd")
	}
	addr := listen(t, echo)
	dial(t, addr).Close() // the poller's own descriptor exists from here on
	open := func() int {
		fds, err := os.ReadDir("/proc/self/fd")
		require.NoError(t, err)
		return len(fds)
	}
	before := open()
	for range 50 {
		c, err := Dialer((&net.Dialer{}).DialContext, cfg)(context.Background(), "tcp", addr)
		require.NoError(t, err)
		_, err = c.Write([]byte("ping"))
		require.NoError(t, err)
		_, err = io.ReadFull(c, make([]byte, 4))
		require.NoError(t, err)
		require.NoError(t, c.Close())
	}
	// The server closes its ends on its own goroutines: allow them to.
	deadline := time.Now().Add(hang)
	for open() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	assert.LessOrEqual(t, open(), before)
}

func TestWindowZeroLeavesConnectionsAlone(t *testing.T) {
	addr := listen(t, echo)
	c, err := Dialer((&net.Dialer{}).DialContext, Config{})(context.Background(), "tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	assert.IsType(t, &net.TCPConn{}, c)
}

func TestHTTPStreamThroughPoller(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 64 {
			fmt.Fprintf(w, "data: %d\n\n", i)
			w.(http.Flusher).Flush()
		}
	}))
	defer srv.Close()
	hc := &http.Client{Transport: &http.Transport{DialContext: Dialer((&net.Dialer{}).DialContext, cfg)}}
	defer hc.CloseIdleConnections()
	var want strings.Builder
	for i := range 64 {
		fmt.Fprintf(&want, "data: %d\n\n", i)
	}
	for range 20 { // kept alive: one connection, many requests
		var body []byte
		within(t, func() {
			resp, err := hc.Post(srv.URL, "application/json", strings.NewReader(`{"stream":true}`))
			require.NoError(t, err)
			defer resp.Body.Close()
			body, err = io.ReadAll(resp.Body)
			require.NoError(t, err)
		})
		require.Equal(t, want.String(), string(body))
	}
}

func TestDialErrorsPassThrough(t *testing.T) {
	boom := errors.New("boom")
	_, err := Dialer(func(context.Context, string, string) (net.Conn, error) { return nil, boom }, cfg)(context.Background(), "tcp", "x")
	assert.ErrorIs(t, err, boom)
}

func TestReadsAllocateNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		s, err := ln.Accept()
		if err == nil {
			accepted <- s
		}
	}()
	c := dial(t, ln.Addr().String())
	var s net.Conn
	within(t, func() { s = <-accepted })
	defer s.Close()
	chunk := bytes.Repeat([]byte("x"), 100)
	buf := make([]byte, len(chunk))
	allocs := testing.AllocsPerRun(1000, func() {
		if _, err := s.Write(chunk); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			t.Fatal(err)
		}
	})
	assert.Less(t, allocs, 0.01, "allocations per chunk written and read")
}

// TestDensity: eleven hits in a row make a sparse poller dense (it then
// looks without waiting); from steady density, one miss keeps it dense,
// two end it (it waits in the runtime's poller again), and after three one
// hit does not bring it back.
func TestDensity(t *testing.T) {
	var d density
	for i := 1; i <= 10; i++ {
		d.score(true)
		require.False(t, d.dense(), "after %d hits", i)
	}
	d.score(true)
	require.True(t, d.dense(), "after 11 hits")
	for range 100 {
		d.score(true)
	}
	d.score(false)
	assert.True(t, d.dense(), "one miss")
	d.score(false)
	assert.False(t, d.dense(), "two misses")
	d.score(false)
	d.score(true)
	assert.False(t, d.dense(), "one hit after three misses")
}
