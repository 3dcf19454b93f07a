package report

import (
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// credentialsHint is what to do about a run whose failures mostly say the
// server refused the requests' credentials (HTTP 401 or 403), of total
// requests: give a key when none was sent, else check the one that was;
// "" when they do not.
func credentialsHint(p plan.Profile, errs []metrics.ErrorCount, total int) string {
	refused := 0
	for _, e := range errs {
		if e.Error.Type == "HTTPError" && (e.Error.Code == 401 || e.Error.Code == 403) {
			refused += e.Count
		}
	}
	if refused == 0 || 2*refused < total {
		return ""
	}
	if !p.CredentialsSent() {
		return "The server refused the requests, sent without credentials (HTTP 401 or 403): give its API key with " +
			"--api-key KEY (sent as Authorization: Bearer KEY), or the header it expects with -H 'Name: value'."
	}
	return "The server refused the credentials the requests carried (HTTP 401 or 403): check the key given with " +
		"--api-key (or the -H header, or --auth-type's signing) against the one the server expects."
}
