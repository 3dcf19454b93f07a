package endpoint

import (
	"crypto/tls"
	"net"
	"net/http"
	"time"

	"github.com/aiperf-go/aiperf/internal/redirect"
	"github.com/aiperf-go/aiperf/internal/rxcoalesce"
)

// checkRedirect is the clients' redirect policy: redirect.Check, or none
// followed when requests are signed (a redirect would carry the signature
// of another request, and its session token elsewhere): the redirect is
// then the reply, a failed request, as in AIPerf.
func checkRedirect(o Options) func(*http.Request, []*http.Request) error {
	if o.Sign != nil {
		return func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	return redirect.Check
}

// defaultDialTimeout bounds a connection's establishment unless
// Options.ConnectTimeout sets another bound.
const defaultDialTimeout = 30 * time.Second

// newTransport is HTTP/1.1 only, uncompressed, with an idle pool of maxConns
// per host and no cap on active connections. It ignores HTTP(S)_PROXY, as
// AIPerf's client does: a proxy would add its own latency to every metric.
func newTransport(maxConns int, keepAlive bool) *http.Transport {
	return &http.Transport{
		DialContext: (&net.Dialer{
			Timeout:   defaultDialTimeout,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		ForceAttemptHTTP2:   false,
		TLSNextProto:        map[string]func(string, *tls.Conn) http.RoundTripper{},
		TLSHandshakeTimeout: 10 * time.Second,
		DisableKeepAlives:   !keepAlive,
		DisableCompression:  true,
		MaxIdleConns:        0, // no global limit; MaxIdleConnsPerHost bounds each --url
		MaxIdleConnsPerHost: maxConns,
		IdleConnTimeout:     90 * time.Second,
		ReadBufferSize:      ioBufferSize,
		WriteBufferSize:     ioBufferSize,
	}
}

// transport is newTransport whose connections are read through a poller
// coalescing receive wake-ups over rx (0: none), are established within
// dial (0: defaultDialTimeout), and count their reads and writes when the
// client traces (only a traced client's do).
func transport(maxConns int, keepAlive, traced bool, rx, dial time.Duration) *http.Transport {
	t := newTransport(maxConns, keepAlive)
	if dial > 0 {
		t.DialContext = (&net.Dialer{Timeout: dial, KeepAlive: 30 * time.Second}).DialContext
	}
	t.DialContext = rxcoalesce.Dialer(t.DialContext, rxcoalesce.Config{Window: rx})
	if traced {
		t.DialContext = countingDialer(t.DialContext)
	}
	return t
}
