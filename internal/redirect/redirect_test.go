package redirect

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// seen records the requests a server got.
type seen struct {
	mu   sync.Mutex
	reqs []*http.Request
}

// redirecting is a server that redirects /old to /new with code and
// answers the rest, noting every request in s.
func (s *seen) redirecting(code int) *httptest.Server {
	return httptest.NewServer(s.handler(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/new", code)
			return
		}
		ok(w, r)
	}))
}

func (s *seen) handler(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.reqs = append(s.reqs, r.Clone(r.Context()))
		s.mu.Unlock()
		next(w, r)
	}
}

func ok(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }

// send sends a request with secret and plain headers through a client that
// follows redirects by Check.
func send(t *testing.T, method, url string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader("{}"))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer sk-SECRET")
	req.Header.Set("X-Api-Key", "XKEY")
	req.Header.Set("X-Trace", "plain")
	resp, err := (&http.Client{CheckRedirect: Check}).Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp
}

// A GET redirected to another origin (here another port of the same host,
// where Go's own rule would keep Authorization) arrives without a secret
// header and without a Referer holding the first URL's query.
func TestGetToAnotherOriginLosesSecrets(t *testing.T) {
	var b seen
	other := httptest.NewServer(b.handler(ok))
	defer other.Close()
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/metrics", http.StatusFound)
	}))
	defer first.Close()

	resp := send(t, http.MethodGet, first.URL+"/metrics?api_key=QUERYSECRET")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	require.Len(t, b.reqs, 1)
	h := b.reqs[0].Header
	assert.Empty(t, h.Get("Authorization"))
	assert.Empty(t, h.Get("X-Api-Key"))
	assert.Empty(t, h.Get("Referer"))
	assert.Equal(t, "plain", h.Get("X-Trace"))
}

// A POST redirected to another origin is not followed, whatever the 3xx
// (a 301, 302 or 303 makes Go follow it as a GET): the 3xx is the response,
// and the other origin gets neither the body nor a header, nor a chance to
// pass its reply off as the inference response.
func TestPostToAnotherOriginIsNotFollowed(t *testing.T) {
	for _, code := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect, http.StatusMovedPermanently,
		http.StatusFound, http.StatusSeeOther} {
		var b seen
		other := httptest.NewServer(b.handler(ok))
		first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+"/v1/chat/completions", code)
		}))
		resp := send(t, http.MethodPost, first.URL+"/v1/chat/completions")
		assert.Equal(t, code, resp.StatusCode)
		assert.Empty(t, b.reqs, "%d", code)
		first.Close()
		other.Close()
	}
}

// Within the origin a redirect is followed as it is, headers and body
// included, with no Referer.
func TestSameOriginIsFollowed(t *testing.T) {
	var s seen
	srv := s.redirecting(http.StatusTemporaryRedirect)
	defer srv.Close()

	resp := send(t, http.MethodPost, srv.URL+"/old?token=Q")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	require.Len(t, s.reqs, 2)
	last := s.reqs[1]
	assert.Equal(t, "/new", last.URL.Path)
	assert.Equal(t, "Bearer sk-SECRET", last.Header.Get("Authorization"))
	assert.Empty(t, last.Header.Get("Referer"))
}

// A redirect loop ends.
func TestLoopEnds(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/again", http.StatusFound)
	}))
	defer srv.Close()
	_, err := (&http.Client{CheckRedirect: Check}).Get(srv.URL)
	assert.ErrorIs(t, err, ErrTooMany)
}

// A redirect within the origin that would change the method or drop the
// body (a 301, 302 or 303 resends a POST as a bodiless GET) is not
// followed: its 3xx is the response. A 307 or 308 keeps both and is
// followed; a GET's 302 stays a GET and is followed.
func TestSameOriginRedirectThatChangesTheRequestIsNotFollowed(t *testing.T) {
	for _, tc := range []struct {
		method   string
		code     int
		followed bool
	}{
		{http.MethodPost, http.StatusMovedPermanently, false},
		{http.MethodPost, http.StatusFound, false},
		{http.MethodPost, http.StatusSeeOther, false},
		{http.MethodPost, http.StatusTemporaryRedirect, true},
		{http.MethodPost, http.StatusPermanentRedirect, true},
		{http.MethodGet, http.StatusFound, true},
		{http.MethodGet, http.StatusSeeOther, true},
	} {
		var s seen
		srv := s.redirecting(tc.code)
		resp := send(t, tc.method, srv.URL+"/old")
		srv.Close()
		if !tc.followed {
			assert.Equal(t, tc.code, resp.StatusCode, "%s %d", tc.method, tc.code)
			assert.Len(t, s.reqs, 1, "%s %d: the changed request is never sent", tc.method, tc.code)
			continue
		}
		assert.Equal(t, http.StatusOK, resp.StatusCode, "%s %d", tc.method, tc.code)
		require.Len(t, s.reqs, 2, "%s %d", tc.method, tc.code)
		assert.Equal(t, tc.method, s.reqs[1].Method)
	}
}

func TestChangesRequest(t *testing.T) {
	post := func(n int64) *http.Request {
		r, _ := http.NewRequest(http.MethodPost, "http://a/", strings.NewReader(strings.Repeat("x", int(n))))
		return r
	}
	get, _ := http.NewRequest(http.MethodGet, "http://a/", nil)
	assert.True(t, ChangesRequest(get, post(2)), "POST made a GET")
	assert.True(t, ChangesRequest(post(0), post(2)), "body dropped")
	assert.False(t, ChangesRequest(post(2), post(2)))
	assert.False(t, ChangesRequest(get, get))
}
