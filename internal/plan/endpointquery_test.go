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
