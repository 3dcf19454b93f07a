package endpoint

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// echoHeaders renders the request's secret headers as "Name: value" lines
// (only those, so that the echo fits in a recorded message).
func echoHeaders(req *http.Request) string {
	var lines []string
	for k, vs := range req.Header {
		if !plan.IsSecretHeader(k) {
			continue
		}
		for _, v := range vs {
			lines = append(lines, k+": "+v)
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// TestEveryEchoedSecretHeaderIsRedacted: a server that echoes the request's
// headers back (in an error body, in an SSE error frame, or in a status line
// so broken that the echo lands in the transport error) never gets a secret
// header's value into a recorded message: not just the bearer token.
func TestEveryEchoedSecretHeaderIsRedacted(t *testing.T) {
	secrets := []string{"sk-bearer-secret-1", "xak-secret-2", "ck-secret-3", "tok-secret-4"}
	headers := http.Header{
		"Authorization":  {"Bearer " + secrets[0]},
		"X-Api-Key":      {secrets[1]},
		"Cookie":         {"session=" + secrets[2] + "; lang=en"},
		"X-Custom-Token": {secrets[3]},
	}
	jsonString := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	replies := map[string]func(req *http.Request) string{
		"non-2xx body": func(req *http.Request) string {
			return fixed(401, "application/json", `{"error":{"message":`+jsonString("bad credentials:\n"+echoHeaders(req))+`}}`)
		},
		"non-2xx text body": func(req *http.Request) string {
			return fixed(403, "text/plain", echoHeaders(req))
		},
		"SSE error frame in a 200 stream": func(req *http.Request) string {
			return chunked(200, "text/event-stream", "data: "+`{"error":{"message":`+jsonString(echoHeaders(req))+`,"code":400}}`+"\n\n")
		},
		"SSE event: error frame": func(req *http.Request) string {
			return chunked(200, "text/event-stream", "event: error\ndata: "+strings.ReplaceAll(echoHeaders(req), "\n", " | ")+"\n\n")
		},
		"transport error": func(req *http.Request) string {
			// No space in the status line: Go quotes the whole line in its error.
			return strings.NewReplacer(" ", "_", "\n", ";").Replace(echoHeaders(req)) + "\r\n\r\n"
		},
	}
	for name, reply := range replies {
		t.Run(name, func(t *testing.T) {
			srv := newRawServer(t, func(_ *rawServer, conn net.Conn, _ int, req *http.Request, _ []byte) bool {
				io.WriteString(conn, reply(req))
				return false
			})
			c := newTestClient(t, Options{Headers: headers})
			res := c.Do(context.Background(), chatReq(srv.url("/"), true))
			require.NotNil(t, res.Err)
			msg := res.Err.Message
			assert.Contains(t, msg, "X-Api-Key", "the echo is recorded: %s", msg)
			for _, s := range secrets {
				assert.NotContains(t, msg, s, fmt.Sprintf("message: %s", msg))
			}
		})
	}
}

// TestQuotedBodiesAreRedactedBeforeTheCut: an invalid response is quoted in
// its error, cut to a few dozen bytes; a secret straddling the cut leaves
// no prefix behind, and one echoed in a 200 that is not an API response is
// redacted too.
func TestQuotedBodiesAreRedactedBeforeTheCut(t *testing.T) {
	const secret = "sk-straddling-the-cut-0123456789"
	for name, body := range map[string]string{
		"html 200 with the secret at the cut":     strings.Repeat("x", snippetLen-10) + secret + "</html>",
		"html 200 echoing the secret up front":    "<html>Authorization: Bearer " + secret + "</html>",
		"stream lines echoing the secret":         "",
		"json 200 without choices echoing secret": `{"auth":"` + secret + `"}`,
	} {
		t.Run(name, func(t *testing.T) {
			raw := fixed(200, "text/html", body)
			streaming := false
			switch {
			case body == "":
				raw, streaming = chunked(200, "text/event-stream", "data: Bearer "+secret+"\n\n", done), true
			case strings.HasPrefix(body, "{"):
				raw = fixed(200, "application/json", body)
			}
			srv := newRawServer(t, respond(raw))
			c := newTestClient(t, Options{Headers: http.Header{"Authorization": {"Bearer " + secret}}})
			res := c.Do(context.Background(), chatReq(srv.url("/"), streaming))
			require.NotNil(t, res.Err)
			assert.Equal(t, ErrTypeInvalidResponse, res.Err.Type)
			assert.NotContains(t, res.Err.Message, secret[:len("sk-straddl")], "not even its start: %s", res.Err.Message)
		})
	}
}

// A POST redirected to another origin (another port of the same host, where
// Go would carry Authorization along) is not followed: that origin gets
// nothing, and the error names where the redirect pointed, without its path
// or query, and no secret.
func TestRedirectToAnotherOriginIsNotFollowed(t *testing.T) {
	var got atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { got.Add(1) }))
	defer other.Close()
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/v1/chat/completions?echo="+r.Header.Get("X-Api-Key"), http.StatusTemporaryRedirect)
	}))
	defer first.Close()

	c := newTestClient(t, Options{Headers: http.Header{"X-Api-Key": {"xak-secret-2"}}})
	res := c.Do(context.Background(), chatReq(first.URL+"/v1/chat/completions", true))
	require.NotNil(t, res.Err)
	assert.Equal(t, http.StatusTemporaryRedirect, res.Err.Code)
	assert.Contains(t, res.Err.Message, "a redirect to "+other.URL+", not followed")
	assert.NotContains(t, res.Err.Message, "xak-secret-2")
	assert.Zero(t, got.Load(), "the other origin got a request")
}

// Options.Secrets (a URL's secret query values, secret --extra-inputs
// values) are redacted from a message at its source, before an error
// summary normalises the digits that would keep it from matching later.
func TestOptionSecretsAreRedactedAtTheSource(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, `{"error":{"message":"got %s"}}`, r.URL.RawQuery)
	}))
	defer srv.Close()
	c := newTestClient(t, Options{Secrets: []string{"QUERYSECRETVAL1"}})
	res := c.Do(context.Background(), chatReq(srv.URL+"/v1/chat/completions?api_key=QUERYSECRETVAL1", false))
	require.NotNil(t, res.Err)
	assert.Contains(t, res.Err.Message, "api_key=")
	assert.NotContains(t, res.Err.Message, "QUERYSECRET")
}
