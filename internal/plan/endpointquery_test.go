package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEndpointPathChecked: an --endpoint that no server could be sent (a
// bad escape, a fragment) is refused before any traffic, naming it.
func TestEndpointPathChecked(t *testing.T) {
	for path, want := range map[string]string{
		"/v1/%zz":   `--endpoint is not a valid URL path (invalid URL escape "%zz"), got "/v1/%zz"`,
		"/v1/x#f":   `--endpoint must not hold a fragment ('#'), which is never sent to a server, got "/v1/x#f"`,
		"v1/x":      `--endpoint must be a path starting with '/', got "v1/x"`,
		"http://h/": `--endpoint must be a path starting with '/', got "http://h/"`,
	} {
		p := NewProfile()
		p.Model, p.URL, p.Endpoint = []string{"m"}, []string{"http://127.0.0.1:8000"}, path
		err := p.Check()
		require.Error(t, err, path)
		assert.Contains(t, err.Error(), want)
	}
}

// TestEndpointQuerySecretsRedacted: a credential in the --endpoint's query
// goes on the wire (it is merged into every request URL), so it is a
// secret like the --url's: redacted from the stored configuration and by
// the run's redactor.
func TestEndpointQuerySecretsRedacted(t *testing.T) {
	p := NewProfile()
	p.Model, p.URL = []string{"m"}, []string{"http://127.0.0.1:8000"}
	p.Endpoint = "/v1/chat/completions?api_key=sk-endpoint-secret&x=1"
	require.NoError(t, p.Check())
	assert.Contains(t, p.Secrets(), "sk-endpoint-secret")
	assert.NotContains(t, p.Redacted().Endpoint, "sk-endpoint-secret")
	assert.Contains(t, p.Redacted().Endpoint, "x=1")
	assert.NotContains(t, p.Redactor().Redact(p.RequestURLs()[0]), "sk-endpoint-secret")
}

// TestQueriesSentAsWritten: a query is sent as written, so one that no
// request line may carry (a space, a control character) or with a broken
// percent escape is refused before any traffic, in --url and --endpoint
// alike; ';' and escaped values are fine.
func TestQueriesSentAsWritten(t *testing.T) {
	check := func(u, endpoint string) error {
		p := NewProfile()
		p.Model, p.URL, p.Endpoint = []string{"m"}, []string{u}, endpoint
		return p.Check()
	}
	for _, c := range []struct{ url, endpoint, want string }{
		{"http://127.0.0.1:8000/v1", "/v1/chat/completions?x=a b&api_key=S", `--endpoint has a query holding a space or control character (" ")`},
		{"http://127.0.0.1:8000/v1", "/v1/chat/completions?x=%zz", `--endpoint has a query with an invalid percent escape ("%zz")`},
		{"http://127.0.0.1:8000/v1?x=a b", "", `--url has a query holding a space or control character (" ")`},
		{"http://127.0.0.1:8000/v1?x=%4", "", `--url has a query with an invalid percent escape ("%4")`},
	} {
		err := check(c.url, c.endpoint)
		require.Error(t, err, "%s %s", c.url, c.endpoint)
		assert.Contains(t, err.Error(), c.want)
		assert.Regexp(t, `write (it escaped \(%20 for a space\)|a literal % as %25)`, err.Error(), "what to do")
	}
	assert.NoError(t, check("http://127.0.0.1:8000/v1?a=1;b=2&c=%20d", "/v1/chat/completions?e=f%2Fg"))
}
