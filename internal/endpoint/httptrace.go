package endpoint

import (
	"context"
	"crypto/tls"
	"net"
	"net/http/httptrace"
	"sync"
	"sync/atomic"

	"github.com/aiperf-go/aiperf/internal/metrics"
)

// tracer times one attempt's HTTP exchange (Options.Trace): httptrace's
// events, stamped on the run's clock as they happen, and the connection's
// reads and writes while the attempt holds it (countedConn). The transport
// calls the hooks from its own goroutines, and a dial it started for this
// request may finish after the request did: every field they touch is
// atomic (or under mu), and finish copies the trace out once.
type tracer struct {
	now  func() int64
	full bool // keep each read and write, and the connection's addresses
	tls  bool

	getConn, dnsStart, dnsDone, connectStart, connectDone atomic.Int64
	tlsStart, tlsDone, gotConn, headersSent, sent         atomic.Int64
	firstByte                                             atomic.Int64
	reused                                                atomic.Bool
	bytesSent, bytesReceived, writes, reads               atomic.Int64
	conn                                                  atomic.Pointer[countedConn]

	mu             sync.Mutex // full only
	requestChunks  [][2]int64
	responseChunks [][2]int64
	local, remote  string

	// Set on the goroutine that reads the response, before finish.
	headers, bodyStart, bodyEnd int64
}

// newTracer returns the tracer of one attempt and the context that carries
// its hooks; t's reused and gotByte are kept as the untraced attempt keeps
// them. (Each hook is a closure of its own: a dozen small allocations of
// the traced request, which BenchmarkClientStreamTraced counts.)
func newTracer(ctx context.Context, now func() int64, full, secure bool, t *connTrace) (*tracer, context.Context) {
	tr := &tracer{now: now, full: full, tls: secure}
	return tr, httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GetConn:      func(string) { tr.getConn.CompareAndSwap(0, tr.now()) },
		DNSStart:     func(httptrace.DNSStartInfo) { tr.dnsStart.CompareAndSwap(0, tr.now()) },
		DNSDone:      func(httptrace.DNSDoneInfo) { tr.dnsDone.Store(tr.now()) },
		ConnectStart: func(string, string) { tr.connectStart.CompareAndSwap(0, tr.now()) },
		ConnectDone: func(_, _ string, err error) {
			if err == nil {
				tr.connectDone.Store(tr.now())
			}
		},
		TLSHandshakeStart: func() { tr.tlsStart.CompareAndSwap(0, tr.now()) },
		TLSHandshakeDone:  func(tls.ConnectionState, error) { tr.tlsDone.Store(tr.now()) },
		GotConn: func(i httptrace.GotConnInfo) {
			tr.gotConn.Store(tr.now())
			tr.reused.Store(i.Reused)
			t.reused.Store(i.Reused)
			tr.attach(i.Conn)
		},
		WroteHeaders:         func() { tr.headersSent.Store(tr.now()) },
		WroteRequest:         func(httptrace.WroteRequestInfo) { tr.sent.Store(tr.now()) },
		GotFirstResponseByte: func() { tr.firstByte.Store(tr.now()); t.gotByte.Store(true) },
	})
}

// attach makes the connection count its reads and writes for tr, until
// finish.
func (tr *tracer) attach(c net.Conn) {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	cc, ok := c.(*countedConn)
	if !ok {
		return
	}
	tr.conn.Store(cc)
	cc.tracer.Store(tr)
	if tr.full {
		tr.mu.Lock()
		tr.local, tr.remote = cc.LocalAddr().String(), cc.RemoteAddr().String()
		tr.mu.Unlock()
	}
}

// io counts one read (received) or write of n bytes on the connection.
func (tr *tracer) io(n int, received bool) {
	total, calls, chunks := &tr.bytesSent, &tr.writes, &tr.requestChunks
	if received {
		total, calls, chunks = &tr.bytesReceived, &tr.reads, &tr.responseChunks
	}
	total.Add(int64(n))
	calls.Add(1)
	if tr.full {
		at := tr.now()
		tr.mu.Lock()
		*chunks = append(*chunks, [2]int64{at, int64(n)})
		tr.mu.Unlock()
	}
}

// body notes a read of the response body that returned n bytes.
func (tr *tracer) body(n int) {
	if n <= 0 {
		return
	}
	at := tr.now()
	if tr.bodyStart == 0 {
		tr.bodyStart = at
	}
	tr.bodyEnd = at
}

// finish ends the trace, the connection's counting for it included (what
// is drained after the response ended is not part of it), and returns it.
func (tr *tracer) finish() *metrics.HTTPTrace {
	if cc := tr.conn.Load(); cc != nil {
		cc.tracer.CompareAndSwap(tr, nil)
	}
	t := &metrics.HTTPTrace{
		GetConnNs: tr.getConn.Load(), DNSStartNs: tr.dnsStart.Load(), DNSDoneNs: tr.dnsDone.Load(),
		ConnectStartNs: tr.connectStart.Load(), ConnectDoneNs: tr.connectDone.Load(),
		TLSStartNs: tr.tlsStart.Load(), TLSDoneNs: tr.tlsDone.Load(), GotConnNs: tr.gotConn.Load(),
		Reused: tr.reused.Load(), HeadersSentNs: tr.headersSent.Load(), SentNs: tr.sent.Load(),
		FirstByteNs: tr.firstByte.Load(), HeadersNs: tr.headers, BodyStartNs: tr.bodyStart, BodyEndNs: tr.bodyEnd,
		BytesSent: tr.bytesSent.Load(), BytesReceived: tr.bytesReceived.Load(),
		Writes: int(tr.writes.Load()), Reads: int(tr.reads.Load()), TLS: tr.tls, Full: tr.full,
	}
	if tr.full {
		tr.mu.Lock()
		t.RequestChunks, t.ResponseChunks = tr.requestChunks, tr.responseChunks
		t.LocalAddr, t.RemoteAddr = tr.local, tr.remote
		tr.requestChunks, tr.responseChunks = nil, nil // a late read appends elsewhere
		tr.mu.Unlock()
	}
	return t
}

// countedConn is a connection of a traced client: it counts its reads
// and writes for the tracer of the attempt that holds it (none between
// attempts).
type countedConn struct {
	net.Conn
	tracer atomic.Pointer[tracer]
}

func (c *countedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if tr := c.tracer.Load(); tr != nil && n > 0 {
		tr.io(n, true)
	}
	return n, err
}

func (c *countedConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if tr := c.tracer.Load(); tr != nil && n > 0 {
		tr.io(n, false)
	}
	return n, err
}

// countingDialer wraps dial so that every connection it makes is counted.
func countingDialer(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &countedConn{Conn: c}, nil
	}
}
