package endpoint

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// meteredServer answers every request on a keep-alive connection with
// response, written in pieces, and tells how many bytes each request took
// on the wire and how many its response did: the server's own count of
// what the client's trace must count.
type meteredServer struct {
	url      string
	requests chan [2]int64 // per request: bytes read, bytes written
}

func newMeteredServer(t *testing.T, pieces ...string) *meteredServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &meteredServer{url: "http://" + ln.Addr().String(), requests: make(chan [2]int64, 16)}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				cr := &countingReader{r: conn}
				br := bufio.NewReader(cr)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					_, _ = io.Copy(io.Discard, req.Body)
					read := cr.n.Swap(0) - int64(br.Buffered()) // the client waits: nothing is read ahead
					head := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\n\r\n",
						len(strings.Join(pieces, "")))
					written := 0
					for _, p := range append([]string{head}, pieces...) {
						n, _ := io.WriteString(conn, p)
						written += n
					}
					s.requests <- [2]int64{read, int64(written)}
				}
			}()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return s
}

type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// TestTraceCountsTheWire: a traced request's bytes sent and received are
// exactly what the server read and wrote for it, its stamps are in the
// order the exchange happened, a second request on the connection is
// reused (no lookup, no connect), and --export-http-trace's reads and
// writes add up to the same totals.
func TestTraceCountsTheWire(t *testing.T) {
	srv := newMeteredServer(t, role, tokA, tokB, usage, done)
	c := newTestClient(t, Options{TraceChunks: true})
	url := strings.Replace(srv.url, "127.0.0.1", "localhost", 1) + "/v1/chat/completions"

	for i, reused := range []bool{false, true} {
		res := c.Do(context.Background(), chatReq(url, true))
		require.Nil(t, res.Err)
		wire := <-srv.requests
		tr := res.HTTP
		require.NotNil(t, tr, "request %d", i)
		assert.Equal(t, reused, tr.Reused, "request %d", i)
		assert.Equal(t, wire[0], tr.BytesSent, "request %d: the bytes the server read", i)
		assert.Equal(t, wire[1], tr.BytesReceived, "request %d: the bytes the server wrote", i)
		assert.False(t, tr.TLS)
		assert.True(t, tr.Full)

		sum := func(chunks [][2]int64) (n int64) {
			for _, c := range chunks {
				n += c[1]
			}
			return n
		}
		assert.Equal(t, tr.BytesSent, sum(tr.RequestChunks))
		assert.Equal(t, tr.BytesReceived, sum(tr.ResponseChunks))
		assert.Len(t, tr.RequestChunks, tr.Writes)
		assert.Len(t, tr.ResponseChunks, tr.Reads)
		assert.Contains(t, tr.RemoteAddr, ":"+strings.Split(srv.url, ":")[2])

		order := []int64{tr.GetConnNs}
		if !reused {
			require.NotZero(t, tr.DNSStartNs, "localhost is looked up")
			require.NotZero(t, tr.ConnectStartNs)
			order = append(order, tr.DNSStartNs, tr.DNSDoneNs, tr.ConnectStartNs, tr.ConnectDoneNs)
		}
		order = append(order, tr.GotConnNs)
		// The request is written on the transport's writing goroutine and
		// the response read on its reading one: each chain is in order (the
		// last write's stamp may come after the server's first byte).
		for _, chain := range [][]int64{slices.Concat(order, []int64{tr.HeadersSentNs, tr.SentNs}),
			slices.Concat(order, []int64{tr.FirstByteNs, tr.HeadersNs, tr.BodyStartNs})} {
			for k := 1; k < len(chain); k++ {
				assert.Less(t, chain[k-1], chain[k], "request %d: stamp %d of %v", i, k, chain)
			}
		}
		assert.LessOrEqual(t, tr.BodyStartNs, tr.BodyEndNs, "one read may hold the whole body")
		assert.LessOrEqual(t, tr.BodyEndNs, res.EndNs)
		assert.GreaterOrEqual(t, tr.GetConnNs, res.SentNs)

		p, ok := tr.Phases()
		require.True(t, ok)
		assert.Equal(t, tr.BodyEndNs-tr.GetConnNs, p.Total, "the phases add up to the whole wait and exchange")
		assert.Equal(t, tr.BodyEndNs-tr.GotConnNs, p.Duration)
		if reused {
			assert.Zero(t, p.DNS+p.Connecting)
		} else {
			assert.Positive(t, p.DNS)
			assert.Positive(t, p.Connecting)
		}
	}
}

// TestTraceTLS: over TLS the handshake is timed (inside connecting, as
// AIPerf counts it) and the bytes are the encrypted records'.
func TestTraceTLS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, role+tokA+done)
	}))
	t.Cleanup(srv.Close)
	c := newTestClient(t, Options{Trace: true})
	c.keep.Transport.(*http.Transport).TLSClientConfig = &tls.Config{RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}
	res := c.Do(context.Background(), chatReq(srv.URL+"/v1/chat/completions", true))
	require.Nil(t, res.Err)
	tr := res.HTTP
	require.NotNil(t, tr)
	assert.True(t, tr.TLS)
	assert.False(t, tr.Full, "no chunks without TraceChunks")
	assert.Nil(t, tr.ResponseChunks)
	require.NotZero(t, tr.TLSStartNs)
	assert.Less(t, tr.ConnectDoneNs, tr.TLSStartNs)
	assert.Less(t, tr.TLSStartNs, tr.TLSDoneNs)
	assert.Less(t, tr.TLSDoneNs, tr.GotConnNs)
	p, ok := tr.Phases()
	require.True(t, ok)
	assert.Equal(t, tr.TLSDoneNs-tr.ConnectStartNs, p.Connecting, "connecting runs to the end of the handshake")
	assert.Equal(t, tr.TLSDoneNs-tr.TLSStartNs, p.TLS)
	assert.Greater(t, tr.BytesReceived, int64(len(role+tokA+done)), "TLS records, headers and the handshake's replies")
}

// TestUntracedClientCountsNothing: without Options.Trace a response has no
// trace and the connections are the dialler's own, uncounted.
func TestUntracedClientCountsNothing(t *testing.T) {
	srv := newRawServer(t, respond(chunked(200, "text/event-stream", role, tokA, done)))
	for _, traced := range []bool{false, true} {
		c := newTestClient(t, Options{Trace: traced})
		res := c.Do(context.Background(), chatReq(srv.url("/v1/chat/completions"), true))
		require.Nil(t, res.Err)
		assert.Equal(t, traced, res.HTTP != nil)
		conn, err := c.keep.Transport.(*http.Transport).DialContext(context.Background(), "tcp", srv.ln.Addr().String())
		require.NoError(t, err)
		_, counted := conn.(*countedConn)
		assert.Equal(t, traced, counted, "traced %v", traced)
		conn.Close()
	}
}

// TestTraceOfAFailedRequest: a request that never connected still has its
// trace (for trace_data), but no phases.
func TestTraceOfAFailedRequest(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	c := newTestClient(t, Options{Trace: true})
	res := c.Do(context.Background(), chatReq("http://"+addr+"/v1/chat/completions", true))
	require.NotNil(t, res.Err)
	require.NotNil(t, res.HTTP)
	assert.NotZero(t, res.HTTP.GetConnNs)
	assert.Zero(t, res.HTTP.GotConnNs)
	_, ok := res.HTTP.Phases()
	assert.False(t, ok)
}
