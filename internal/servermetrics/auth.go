package servermetrics

import (
	"net/http"
	"net/url"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/redirect"
)

// scrapeHeader is what of the benchmark's headers h go with target t's
// scrapes (u is t's parsed URL; origins are the inference URLs):
//   - an anonymous target (a default DCGM exporter the user did not name)
//     gets none;
//   - the credential headers (plan.IsSecretHeader: Authorization, X-Api-Key,
//     Cookie, ...) go only to a target without userinfo on the origin
//     (scheme, host, port) of an inference URL, where a gateway may guard
//     /metrics with the inference credentials; never to another origin,
//     even one the user named, and never beside a URL's own user:password,
//     which fetch sends as Basic instead;
//   - the other headers go to every target that is not anonymous.
func scrapeHeader(t Target, u *url.URL, h http.Header, origins []string) http.Header {
	if t.Anonymous || len(h) == 0 {
		return nil
	}
	credentials := u.User == nil && onOrigin(u, origins)
	out := http.Header{}
	for k, vs := range h {
		if credentials || !plan.IsSecretHeader(k) {
			out[k] = vs
		}
	}
	return out
}

// onOrigin reports whether u is on the origin of one of urls (each a URL,
// "http://" when its scheme is missing, as a --url is).
func onOrigin(u *url.URL, urls []string) bool {
	for _, raw := range urls {
		if o, err := url.Parse(plan.NormalizeURL(raw)); err == nil && o.Host != "" && redirect.SameOrigin(u, o) {
			return true
		}
	}
	return false
}

// basicAuth sets req's Authorization to Basic from its URL's userinfo, when
// it has some (Go's client does so only when no Authorization is set).
func basicAuth(req *http.Request) {
	if ui := req.URL.User; ui != nil {
		pw, _ := ui.Password()
		req.SetBasicAuth(ui.Username(), pw)
	}
}
