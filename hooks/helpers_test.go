package hooks

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// hit is one request as a test server received it.
type hit struct {
	Server  string
	Method  string
	URI     string // path and query
	BodyLen int
	Header  http.Header
}

// recorder collects the hits of every server of a test, in arrival order.
type recorder struct {
	mu   sync.Mutex
	hits []hit
}

// serve starts a server named name whose n-th request (from 0) is answered by
// answer.
func (r *recorder) serve(t *testing.T, name string, answer func(n int, w http.ResponseWriter, req *http.Request)) *httptest.Server {
	t.Helper()
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.hits = append(r.hits, hit{Server: name, Method: req.Method, URI: req.URL.RequestURI(), BodyLen: len(body), Header: req.Header.Clone()})
		i := n
		n++
		r.mu.Unlock()
		answer(i, w, req)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// all returns the hits so far.
func (r *recorder) all() []hit {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]hit(nil), r.hits...)
}

// trail renders the hits as "server URI" lines.
func (r *recorder) trail() []string {
	var out []string
	for _, h := range r.all() {
		out = append(out, h.Server+" "+h.URI)
	}
	return out
}

// statuses answers the n-th request with codes[n], repeating the last code.
func statuses(codes ...int) func(int, http.ResponseWriter, *http.Request) {
	return func(n int, w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(codes[min(n, len(codes)-1)])
	}
}

// ok answers every request 200 with an empty body.
func ok(int, http.ResponseWriter, *http.Request) {}

// fakeClock is an injectable clock: sleeping advances it instantly.
type fakeClock struct {
	mu     sync.Mutex
	t      time.Time
	sleeps []time.Duration
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Unix(1_700_000_000, 0)} }

func (f *fakeClock) now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.t
}

func (f *fakeClock) advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.t = f.t.Add(d)
}

func (f *fakeClock) sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sleeps = append(f.sleeps, d)
	f.t = f.t.Add(d)
	return nil
}

func (f *fakeClock) slept() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.sleeps...)
}

// newTestClient returns a client on the fake clock.
func newTestClient(headers http.Header, clock *fakeClock) *Client {
	c := New(headers)
	c.now, c.sleep = clock.now, clock.sleep
	return c
}

// closedOrigin is an origin on which nothing listens.
func closedOrigin(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return "http://" + addr
}

// hang blocks until the client gives up on the request (or 10 s pass).
func hang(_ int, _ http.ResponseWriter, req *http.Request) {
	select {
	case <-req.Context().Done():
	case <-time.After(10 * time.Second):
	}
}
