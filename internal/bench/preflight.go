package bench

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/aiperf-go/aiperf/hooks"
	"github.com/aiperf-go/aiperf/internal/endpoint"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// preflight dials every origin once so an unreachable server is one clear
// line, not a stack of per-request timeouts.
func preflight(ctx context.Context, origins []string) error {
	d := net.Dialer{Timeout: 5 * time.Second}
	for _, o := range origins {
		u, err := url.Parse(o)
		if err != nil {
			return fmt.Errorf("parse server url %q: %w", o, err)
		}
		conn, err := d.DialContext(ctx, "tcp", hostPort(u))
		if msg := endpoint.ClientLimit(err); msg != "" {
			return fmt.Errorf("connect to server %s: %s (the server was not reached, nothing was sent): %w", o, msg, err)
		}
		if err != nil {
			return fmt.Errorf("server %s is unreachable: %w: check that it is running and that --url (a config "+
				"file's endpoint.url) names its host and port (nothing was sent)", o, err)
		}
		conn.Close()
	}
	return nil
}

// hostPort is u's host and port, the scheme's default port when u has none.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// tlsProbeTimeout bounds tlsHint's handshake with a server.
const tlsProbeTimeout = 2 * time.Second

// tlsHint is what to do about a run whose every request failed on its
// connection (ConnectionError: reset, closed, a reply that is not HTTP) at
// an http:// origin that completes a TLS handshake: that server speaks
// HTTPS, and the plain requests it dropped said nothing of it (a Go server
// answers them with a 400, uvicorn and most others reset the connection).
// The probe is a handshake only: nothing is sent over it, and the
// certificate is not checked (it is not trusted with anything). "" when
// the failures were others, or no such origin answered TLS.
func tlsHint(ctx context.Context, errs []metrics.ErrorCount, origins []string) string {
	for _, e := range errs {
		if e.Error.Type != endpoint.ErrTypeConnection {
			return ""
		}
	}
	ctx, cancel := context.WithTimeout(ctx, tlsProbeTimeout)
	defer cancel()
	d := tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true}} // a handshake that sends nothing
	for _, o := range origins {
		u, err := url.Parse(o)
		if err != nil || u.Scheme != "http" {
			continue
		}
		conn, err := d.DialContext(ctx, "tcp", hostPort(u))
		if err != nil {
			continue
		}
		conn.Close()
		return fmt.Sprintf("the server at %s speaks TLS (HTTPS): give --url with https://", hostPort(u))
	}
	return ""
}

// requestHeaders are the inference headers: user headers, auth, user agent.
func requestHeaders(p plan.Profile, version string) http.Header {
	h := controlHeaders(p)
	h.Set("User-Agent", "aiperf/"+version)
	return h
}

// controlHeaders are the headers control hooks send.
func controlHeaders(p plan.Profile) http.Header { return hooks.Headers(p) }
