package bench

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/aiperf-go/aiperf/hooks"
	"github.com/aiperf-go/aiperf/internal/endpoint"
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
		port := u.Port()
		if port == "" {
			port = "80"
			if u.Scheme == "https" {
				port = "443"
			}
		}
		conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(u.Hostname(), port))
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

// requestHeaders are the inference headers: user headers, auth, user agent.
func requestHeaders(p plan.Profile, version string) http.Header {
	h := controlHeaders(p)
	h.Set("User-Agent", "aiperf/"+version)
	return h
}

// controlHeaders are the headers control hooks send.
func controlHeaders(p plan.Profile) http.Header { return hooks.Headers(p) }
