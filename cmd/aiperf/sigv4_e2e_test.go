package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/sigv4"
)

// checkSigV4 is what an AWS front end does with a request (a fake of it,
// over internal/sigv4, whose algorithm sign_test.go checks against AWS's
// published vectors): the request as it arrived, its signed headers and
// its body, signed again with the secret, must give its Authorization.
func checkSigV4(r *http.Request, body []byte, secret, region, service string) error {
	auth := r.Header.Get("Authorization")
	rest, ok := strings.CutPrefix(auth, "AWS4-HMAC-SHA256 Credential=")
	if !ok {
		return fmt.Errorf("not a SigV4 Authorization: %q", auth)
	}
	cred, rest, _ := strings.Cut(rest, ", SignedHeaders=")
	signed, _, _ := strings.Cut(rest, ", Signature=")
	parts := strings.Split(cred, "/")
	if len(parts) != 5 || parts[2] != region || parts[3] != service {
		return fmt.Errorf("credential scope %q, want region %s and service %s", cred, region, service)
	}
	at, err := time.Parse("20060102T150405Z", r.Header.Get(sigv4.HeaderDate))
	if err != nil {
		return err
	}
	again, err := http.NewRequest(r.Method, "http://"+r.Host+r.RequestURI, nil)
	if err != nil {
		return err
	}
	again.Host = r.Host
	for _, name := range strings.Split(signed, ";") {
		if name != "host" {
			again.Header[http.CanonicalHeaderKey(name)] = r.Header.Values(name)
		}
	}
	c := sigv4.Credentials{AccessKeyID: parts[0], SecretAccessKey: secret, SessionToken: r.Header.Get(sigv4.HeaderSecurityToken)}
	sigv4.Sign(again, body, c, region, service, at)
	if got := again.Header.Get("Authorization"); got != auth {
		return fmt.Errorf("signature does not verify:\n got  %s\n want %s", auth, got)
	}
	return nil
}

// awsEnv gives the process AWS credentials in the environment, and a HOME
// without ~/.aws.
func awsEnv(t *testing.T, id, secret, token string) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_ACCESS_KEY_ID", id)
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
	t.Setenv("AWS_SESSION_TOKEN", token)
}

// behindAWS is the mock behind a fake AWS front end: each request but the
// mock's own routes has its signature checked (checkSigV4, with secret,
// for region and service, and its session token token), is handed to
// seen with the check's error, and is refused with 403 when it fails.
func behindAWS(t *testing.T, secret, token, region, service string, seen func(r *http.Request, err error)) *mockServer {
	return startMockBehind(t, mock.Config{Fast: true}, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/mock/") || r.URL.Path == "/metrics" {
				h.ServeHTTP(w, r)
				return
			}
			body, err := io.ReadAll(r.Body)
			require.NoError(t, err)
			err = checkSigV4(r, body, secret, region, service)
			if got := r.Header.Get(sigv4.HeaderSecurityToken); err == nil && got != token {
				err = fmt.Errorf("session token %q", got)
			}
			seen(r, err)
			if err != nil {
				http.Error(w, "forbidden", http.StatusForbidden)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			h.ServeHTTP(w, r)
		})
	})
}

// --auth-type sigv4 signs every request (the inference requests and both
// readiness probes) with the environment's credentials, so that a server
// checking signatures accepts all; --api-key is not sent, and no secret
// is printed.
func TestSigV4SignsEveryRequest(t *testing.T) {
	awsEnv(t, "AKIDTESTKEY", "the-secret-of-this-test", "session-token-of-this-test")
	var mu sync.Mutex
	var verified int
	var problems []string
	m := behindAWS(t, "the-secret-of-this-test", "session-token-of-this-test", "us-west-2", "sagemaker", func(r *http.Request, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			problems = append(problems, r.Method+" "+r.URL.Path+": "+err.Error())
		} else {
			verified++
		}
	})
	dir := t.TempDir()
	inv := cli(t, dir, "profile", "-m", "mock-model", "--url", m.URL, "--streaming", "--isl", "20", "--osl", "4",
		"--request-count", "6", "--concurrency", "2", "--api-key", "sk-never-sent", "--wait-for-model-timeout", "30",
		"--wait-for-model-mode", "both", "--auth-type", "sigv4", "--aws-region", "us-west-2", "--aws-service", "sagemaker", "--no-store")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Empty(t, problems)
	assert.GreaterOrEqual(t, verified, 8, "6 requests and the two probes, each verified")
	out := inv.stdout + inv.stderr
	assert.Contains(t, out, "--api-key is not sent")
	for _, secret := range []string{"the-secret-of-this-test", "session-token-of-this-test", "sk-never-sent"} {
		assert.NotContains(t, out, secret)
	}
}

// Misuse is refused before any traffic (exit 2), naming what to do.
func TestSigV4Refusals(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".aws"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".aws", "config"),
		[]byte("[profile sso]\nsso_session = corp\n"), 0o600))
	m := startMock(t, mock.Config{Fast: true})
	base := []string{"profile", "-m", "m", "--url", m.URL, "--request-count", "2", "--no-store"}
	sig := []string{"--auth-type", "sigv4", "--aws-region", "us-east-1", "--aws-service", "execute-api"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--aws-region", "us-east-1"}, "--aws-region needs --auth-type sigv4"},
		{[]string{"--auth-type", "sigv4", "--aws-region", "us-east-1"}, "--auth-type sigv4 requires --aws-service"},
		{append([]string{"--url", "http://10.1.2.3:8000"}, sig...), "is plain HTTP to another machine: use https"},
		{append([]string{"--reset-kv-cache"}, sig...), "sigv4 does not sign the control hooks"},
		{sig, "no AWS credentials found"},
		{append([]string{"--aws-profile", "sso"}, sig...), "AWS profile sso: its sso_session"},
	} {
		inv := cli(t, t.TempDir(), append(append([]string{}, base...), tc.args...)...)
		assert.Equal(t, ExitUsage, inv.code, "%v: %s", tc.args, inv.stderr)
		assert.Contains(t, inv.stderr, tc.want, "%v", tc.args)
	}
	assert.Zero(t, m.control().InferenceRequests, "nothing was sent")
}

// A server that echoes every signed request's headers back, in error
// replies and in the generated text, gets none of the credentials or
// signatures into the exports (raw payloads and responses, outputs.json,
// the records) or the console.
func TestSigV4SecretsNeverLeave(t *testing.T) {
	awsEnv(t, "AKIDECHOEDBACKKEY", "secret-never-sent", "session-token-echoed-back")
	var mu sync.Mutex
	var signatures []string
	var n int
	srv := startMockBehind(t, mock.Config{Fast: true}, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/v1/chat/completions" {
				h.ServeHTTP(w, r)
				return
			}
			auth := r.Header.Get("Authorization")
			echo := auth + " " + r.Header.Get(sigv4.HeaderSecurityToken)
			mu.Lock()
			_, sig, _ := strings.Cut(auth, "Signature=")
			signatures = append(signatures, sig)
			n++
			odd := n%2 == 1
			mu.Unlock()
			if odd {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprintf(w, `{"error": {"message": %q}}`, "bad request: "+echo)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", echo)
			fmt.Fprintf(w, "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
			fmt.Fprint(w, "data: [DONE]\n\n")
		})
	})
	dir := t.TempDir()
	inv := cli(t, dir, "profile", "-m", "mock-model", "--url", srv.URL, "--streaming", "--isl", "10", "--osl", "4",
		"--request-count", "6", "--concurrency", "1", "--export-level", "raw", "--export-outputs-json",
		"--auth-type", "sigv4", "--aws-region", "us-east-1", "--aws-service", "execute-api", "--artifact-dir", "out", "--no-store")
	require.Equal(t, ExitOK, inv.code, "half the requests fail, the run does not: %s", inv.stderr)
	require.Len(t, signatures, 6)
	secrets := append([]string{"AKIDECHOEDBACKKEY", "secret-never-sent", "session-token-echoed-back"}, signatures...)
	files := 0
	require.NoError(t, filepath.WalkDir(filepath.Join(dir, "out"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		for _, s := range secrets {
			assert.NotContains(t, string(b), s, "%s", path)
		}
		return nil
	}))
	assert.GreaterOrEqual(t, files, 4, "the raw export, outputs.json, the records and the summary")
	for _, s := range secrets {
		assert.NotContains(t, inv.stdout+inv.stderr, s)
	}
}
