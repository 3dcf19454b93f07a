// Package redirect is the rule by which aiperf's HTTP clients follow a
// server's redirects without carrying a secret to another origin.
//
// Go's client forwards every header but Authorization, Cookie and
// WWW-Authenticate on a redirect, keeps those three for any port of the
// same host, re-sends a POST body on a 307 or 308, and adds a Referer that
// holds the previous URL with its query. Check, used as an http.Client's
// CheckRedirect, follows a redirect within the same origin (scheme, host and
// port) as it is; to another origin it follows only a request that was a
// GET or HEAD from the start, with every secret header (plan.IsSecretHeader)
// taken off, and it never sends a Referer. A POST redirected to another
// origin (by any 3xx) is not followed: its 3xx reply is the response, and
// the caller reports it. Nor is a redirect, to any origin, that would
// change the request's method or drop its body: a 301, 302 or 303 makes
// Go resend a POST as a bodiless GET, whose reply would be measured as
// the answer to a request never sent. Only a 307 or 308, which keep both,
// is followed within the origin.
package redirect

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// maxHops is how many redirects a request follows, as Go's default.
const maxHops = 10

// ErrTooMany ends a request redirected more than maxHops times.
var ErrTooMany = errors.New("too many redirects")

// Check is an http.Client's CheckRedirect: req is the next request, via
// the ones sent so far, the first of them the caller's.
func Check(req *http.Request, via []*http.Request) error {
	if len(via) >= maxHops {
		return fmt.Errorf("stopped after %d redirects: %w", len(via), ErrTooMany)
	}
	req.Header.Del("Referer")
	if ChangesRequest(req, via[0]) {
		return http.ErrUseLastResponse
	}
	if SameOrigin(req.URL, via[0].URL) {
		return nil
	}
	if m := via[0].Method; m != http.MethodGet && m != http.MethodHead { // a 301-303 has made a POST a GET by now
		return http.ErrUseLastResponse
	}
	for name := range req.Header {
		if plan.IsSecretHeader(name) {
			req.Header.Del(name)
		}
	}
	return nil
}

// ChangesRequest reports whether next, a redirect of first, is not the
// same request: another method, or (but for a GET or HEAD, whose body
// means nothing) without first's body.
func ChangesRequest(next, first *http.Request) bool {
	if next.Method != first.Method {
		return true
	}
	bodied := first.Method != http.MethodGet && first.Method != http.MethodHead
	return bodied && first.ContentLength != 0 && next.ContentLength != first.ContentLength
}

// SameOrigin reports whether a and b have the same scheme, host and port
// (an absent port being the scheme's default).
func SameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

// port is u's port, or its scheme's default.
func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}
