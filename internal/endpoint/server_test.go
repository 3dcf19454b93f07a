package endpoint

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// rawServer is a loopback HTTP/1.1 server whose handler writes raw bytes, so
// tests can reproduce exactly what real inference servers put on the wire.
type rawServer struct {
	ln       net.Listener
	done     chan struct{} // closed at cleanup; stalled handlers wait on it
	conns    atomic.Int32  // connections accepted
	requests atomic.Int32  // requests read
}

// rawHandler serves the n-th request (from 0) read on conn and returns false
// to close the connection.
type rawHandler func(s *rawServer, conn net.Conn, n int, req *http.Request, body []byte) bool

func newRawServer(t testing.TB, handle rawHandler) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{ln: ln, done: make(chan struct{})}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var open []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			s.conns.Add(1)
			mu.Lock()
			open = append(open, conn)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer conn.Close()
				br := bufio.NewReader(conn)
				for n := 0; ; n++ {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					body, _ := io.ReadAll(req.Body)
					s.requests.Add(1)
					if !handle(s, conn, n, req, body) {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		close(s.done)
		ln.Close()
		mu.Lock()
		for _, c := range open {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return s
}

func (s *rawServer) url(path string) string { return "http://" + s.ln.Addr().String() + path }

// sseClose answers with a close-delimited SSE body written piece by piece.
func sseClose(pieces ...string) rawHandler {
	return func(_ *rawServer, conn net.Conn, _ int, _ *http.Request, _ []byte) bool {
		io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
		for _, p := range pieces {
			io.WriteString(conn, p)
		}
		return false
	}
}

// chunked is a complete keep-alive response with a chunked body, one HTTP
// chunk per piece.
func chunked(status int, contentType string, pieces ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n",
		status, http.StatusText(status), contentType)
	for _, p := range pieces {
		fmt.Fprintf(&b, "%x\r\n%s\r\n", len(p), p)
	}
	b.WriteString("0\r\n\r\n")
	return b.String()
}

// respond writes a fixed raw response and keeps the connection open.
func respond(raw string) rawHandler {
	return func(_ *rawServer, conn net.Conn, _ int, _ *http.Request, _ []byte) bool {
		io.WriteString(conn, raw)
		return true
	}
}

// fixed answers with a Content-Length body.
func fixed(status int, contentType, body string) string {
	return fmt.Sprintf("HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s",
		status, http.StatusText(status), contentType, len(body), body)
}
