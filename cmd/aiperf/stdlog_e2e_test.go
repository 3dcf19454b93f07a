package main

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// answerThenEcho answers 200 with body, then sends on the same connection
// bytes no request asked for: the start of a second answer echoing the
// request's Authorization, as sent and decoded, with an escape sequence
// that would set the terminal's title. Go's client writes them to the
// standard log package ("Unsolicited response received on idle HTTP
// channel starting with ..."), on its own.
func answerThenEcho(w http.ResponseWriter, r *http.Request, body string) {
	conn, buf, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	auth := r.Header.Get("Authorization")
	decoded := auth
	if cred, ok := strings.CutPrefix(auth, "Basic "); ok {
		b, _ := base64.StdEncoding.DecodeString(cred)
		decoded = string(b)
	}
	fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\n\x1b]0;PWNED\x07leak: %s decoded=%s\r\n", auth, decoded)
	_ = buf.Flush()
}

// TestUnsolicitedBytesEchoingCredentialsAreRedacted: a server that follows
// its answers with bytes echoing the request's credentials made Go's
// net/http print them, unredacted, through the standard log package
// straight to stderr: the inference request's API key, and the MLflow
// client's Basic credentials from the tracking URI's userinfo. The standard
// log now goes through the run's redaction and terminal escaping.
func TestUnsolicitedBytesEchoingCredentialsAreRedacted(t *testing.T) {
	chat := `{"id":"x","object":"chat.completion","created":1,"model":"mock-model","choices":[{"index":0,` +
		`"message":{"role":"assistant","content":"hello there"},"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		switch {
		case p == "/v1/chat/completions":
			answerThenEcho(w, r, chat)
		case strings.HasSuffix(p, "/experiments/get-by-name"):
			fmt.Fprint(w, `{"experiment":{"experiment_id":"1"}}`)
		case strings.HasSuffix(p, "/runs/create"): // the next call comes after the load: none takes its connection first
			answerThenEcho(w, r, `{"run":{"info":{"run_id":"r1","experiment_id":"1","artifact_uri":"mlflow-artifacts:/1/r1/artifacts"}}}`)
		case strings.HasPrefix(p, "/api/2.0/"):
			fmt.Fprint(w, `{}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	tracking := strings.Replace(srv.URL, "http://", "http://user:"+leakURLPass+"@", 1)
	res := cli(t, "", "profile", "-m", "mock-model", "-u", srv.URL, "--api-key", leakAPIKey, "--ui", "none",
		"--request-count", "1", "--concurrency", "1", "--isl", "16", "--osl", "4", "--num-dataset-entries", "1",
		"--no-gpu-telemetry", "--mlflow-tracking-uri", tracking)
	require.Equal(t, 0, res.code, "%s", res.stderr)
	require.Contains(t, res.stderr, "Unsolicited response received on idle HTTP channel", "the server's bytes were logged")
	assert.Contains(t, res.stderr, `leak: `+plan.Redacted+` decoded=`+plan.Redacted, "the API key")
	assert.Contains(t, res.stderr, `leak: Basic `+plan.Redacted+` decoded=`+plan.Redacted, "the tracking URI's password")
	for _, s := range []string{leakAPIKey, leakURLPass, leakURLBasic} {
		assert.NotContains(t, res.stderr, s)
	}
	assert.NotContains(t, res.stderr, "\x1b", "the terminal's controls are escaped")
}
