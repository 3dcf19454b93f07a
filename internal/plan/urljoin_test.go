package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestRequestURLsMergeTheEndpointQuery: the --endpoint's query parameters
// replace the URL's of the same key, where the URL had it first; the
// URL's other parameters keep their values and order, repeated ones
// included; the endpoint's new keys follow. The path never holds a '?'.
func TestRequestURLsMergeTheEndpointQuery(t *testing.T) {
	for _, c := range []struct{ url, endpoint, want string }{
		{"http://h:1/v1?x=1", "/v1/chat/completions?x=9&y=2", "http://h:1/v1/chat/completions?x=9&y=2"},
		{"http://h:1/p?a=1&b=2&a=3&c=4", "/x?a=9&d=1&a=8", "http://h:1/p/x?a=9&a=8&b=2&c=4&d=1"},
		{"http://h:1?k=1&k=2", "/v1/chat/completions", "http://h:1/v1/chat/completions?k=1&k=2"},
		{"http://h:1", "/v1/chat/completions?api-version=7", "http://h:1/v1/chat/completions?api-version=7"},
		{"http://h:1?a%20b=1", "/e?a+b=2", "http://h:1/e?a+b=2"},
		{"http://h:1/v1", "/v1/chat/completions/", "http://h:1/v1/chat/completions/"}, // a trailing slash as written
	} {
		p := valid()
		p.URL, p.Endpoint = []string{c.url}, c.endpoint
		assert.Equal(t, []string{c.want}, p.RequestURLs(), "%s + %s", c.url, c.endpoint)
	}
}

// TestRequestURLsKeepTheEscaping: the URL's path is joined as written: an
// escaped slash or space stays escaped, path parameters stay in place.
func TestRequestURLsKeepTheEscaping(t *testing.T) {
	p := valid()
	p.URL = []string{"http://h:1/a%2Fb/c%20d", "http://h:1/proxy;tenant=blue?api-version=7", "h:1/x%3Fy/v1"}
	assert.Equal(t, []string{
		"http://h:1/a%2Fb/c%20d/v1/chat/completions",
		"http://h:1/proxy;tenant=blue/v1/chat/completions?api-version=7",
		"http://h:1/x%3Fy/v1/chat/completions",
	}, p.RequestURLs())
	p.EndpointType = EndpointRaw
	p.URL = []string{"http://h:1/a%2Fb/gen?x=1"}
	assert.Equal(t, []string{"http://h:1/a%2Fb/gen?x=1"}, p.RequestURLs(), "a raw endpoint's URL as it is")
}

// TestModelsURLs: the readiness probe's model list is at each URL's base
// path (less what it shares with the endpoint path) + /v1/models, with the
// URL's path parameters, escapes and query but not the endpoint's query;
// a raw endpoint's at the origin's root; duplicates once.
func TestModelsURLs(t *testing.T) {
	p := valid()
	p.URL = []string{"http://h:1/prefix", "http://h:1/proxy;tenant=blue?api-version=7", "http://h:1/v1",
		"http://h:1/v1/chat/completions", "http://h:1/gw/v1/chat/completions?k=1", "http://h:1/a%2Fb", "http://h:1"}
	p.Endpoint = "/v1/chat/completions?x=9"
	assert.Equal(t, []string{
		"http://h:1/prefix/v1/models",
		"http://h:1/proxy;tenant=blue/v1/models?api-version=7",
		"http://h:1/v1/models",
		"http://h:1/gw/v1/models?k=1",
		"http://h:1/a%2Fb/v1/models",
	}, p.ModelsURLs())
	p.EndpointType, p.Endpoint = EndpointRaw, ""
	p.URL = []string{"http://h:1/gen?x=1"}
	assert.Equal(t, []string{"http://h:1/v1/models?x=1"}, p.ModelsURLs())
}

// TestCheckEndpointPath: an --endpoint must be a path, with valid escapes
// and no fragment.
func TestCheckEndpointPath(t *testing.T) {
	for _, ok := range []string{"/v1/chat/completions", "/v1/x?api-version=7&a=1", "/a%2Fb", "/p;x=1/y", "//double"} {
		assert.NoError(t, CheckEndpointPath(ok), ok)
	}
	for bad, msg := range map[string]string{
		"v1/chat":           "must be a path starting with '/'",
		"http://h/v1":       "must be a path starting with '/'",
		"/v1/%zz":           `is not a valid URL path (invalid URL escape "%zz"), got "/v1/%zz"`,
		"/v1/chat#fragment": "must not hold a fragment",
	} {
		err := CheckEndpointPath(bad)
		if assert.Error(t, err, bad) {
			assert.Contains(t, err.Error(), msg, bad)
		}
	}
}
