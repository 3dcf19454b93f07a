package plan

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIsSecretHeader(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"Authorization", "proxy-authorization", "Cookie", "X-Api-Key", "api-key",
		"Ocp-Apim-Subscription-Key", "X-Auth-Token", "CF-Access-Client-Secret", "X-Vault-Token", "x_api_key",
		"X-Password", "X-Upstream-Credentials", " AUTHORIZATION "} {
		assert.True(t, IsSecretHeader(name), name)
	}
	for _, name := range []string{"X-Trace", "Content-Type", "User-Agent", "X-Request-Id", "Host", "OpenAI-Organization"} {
		assert.False(t, IsSecretHeader(name), name)
	}
}

func TestRedactURL(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"http://user:pw@h:1/v1":        "http://<redacted>@h:1/v1",
		"http://token@h:1":             "http://<redacted>@h:1",
		"http://h:1/v1?x=a@b":          "http://h:1/v1?x=a@b",
		"http://user:pw@h:99999999/v1": "http://<redacted>@h:99999999/v1", // does not parse: still redacted
		"user:pw@h:8000":               "<redacted>@h:8000",               // no scheme (http:// is implied)
		"http://u:p%40ss@w@h":          "http://<redacted>@h",             // the last '@' ends the userinfo, as url.Parse reads it
		"http://h:1":                   "http://h:1",
	}
	for in, want := range tests {
		assert.Equal(t, want, RedactURL(in), in)
	}
}

func TestProfileSecrets(t *testing.T) {
	t.Parallel()
	p := NewProfile()
	p.APIKey = "sk-key-1"
	p.Header = []string{
		"Proxy-Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("proxy:px-pass-2")),
		"Cookie: session=ck-value-3; lang=en",
		"X-Trace: not-secret",
		"X-Custom-Token:tok-4",
	}
	p.URL = []string{"http://user:pw%40-5@h:1", "http://h:2"}
	p.ServerMetrics = []string{"http://scrape:sm-pass-6@h:3/metrics"}
	p.GPUTelemetry = []string{"dcgm:gpu-pass-7@h:9400"}
	got := p.Secrets()
	for _, want := range []string{"sk-key-1", "px-pass-2", "proxy:px-pass-2", "ck-value-3", "session=ck-value-3; lang=en",
		"tok-4", "pw%40-5", "pw@-5", "user:pw%40-5", base64.StdEncoding.EncodeToString([]byte("user:pw@-5")), "sm-pass-6", "gpu-pass-7"} {
		assert.Contains(t, got, want)
	}
	red := p.Redacted()
	assert.Equal(t, []string{"http://<redacted>@h:3/metrics"}, red.ServerMetrics, "scrape URLs are stored redacted")
	assert.Equal(t, []string{"<redacted>@h:9400"}, red.GPUTelemetry)
	assert.NotContains(t, got, "not-secret")
	assert.NotContains(t, got, "en", "a short cookie value alone is not a secret")
	assert.Empty(t, NewRedactor(p.Redacted().Secrets()...).long, "a redacted profile has no secrets left")
}

func TestRedactor(t *testing.T) {
	t.Parallel()
	r := NewRedactor("sk-long-secret", ` a<b"c `, "Zq9", "", "dact")
	tests := []struct{ in, want string }{
		{"key sk-long-secret rejected", "key <redacted> rejected"},
		{"xsk-long-secretx", "x<redacted>x"},                                                   // long secrets go wherever they occur
		{`json {"k":"a\u003cb\"c"} and a\u003cb\"c`, `json {"k":"<redacted>"} and <redacted>`}, // JSON-escaped echo
		{"url ?k=a%3Cb%22c", "url ?k=<redacted>"},                                              // URL-escaped echo
		{"pin Zq9, Zq9x, xZq9, (Zq9)", "pin <redacted>, Zq9x, xZq9, (<redacted>)"},             // short: only standalone
		{"Zq9", "<redacted>"},
		{"redacted dact", "redacted dact"}, // a secret inside the marker cannot be hidden: ignored
		{"", ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, r.Redact(tt.in), tt.in)
	}

	// A replacement can complete a secret with the text after it.
	r = NewRedactor("d>ab")
	out := r.Redact("d>abab")
	assert.NotContains(t, out, "d>ab")

	// Text cut short loses what is left of a cut secret.
	r = NewRedactor("sk-long-secret")
	assert.Equal(t, "key <redacted>…", r.Redact("key sk-long-se…"))
	assert.Equal(t, "key sk-…", r.Redact("key sk-…"), "three characters are not worth hiding")
	assert.Equal(t, "key sk-long-se", r.Redact("key sk-long-se"), "only before an ellipsis")

	var nilR *Redactor
	assert.Equal(t, "x", nilR.Redact("x"))
	assert.True(t, NewRedactor("", "  ").Empty())
}

func TestRedactorErrorKeepsTheChain(t *testing.T) {
	t.Parallel()
	r := NewRedactor("sk-long-secret")
	err := r.Error(fmt.Errorf("POST: key sk-long-secret: %w", context.Canceled))
	assert.Equal(t, "POST: key <redacted>: context canceled", err.Error())
	assert.ErrorIs(t, err, context.Canceled)
	plain := errors.New("nothing to hide")
	assert.Same(t, plain, r.Error(plain))
	assert.NoError(t, r.Error(nil))
}

func TestRedactorWriter(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	w := NewRedactor("sk-long-secret").Writer(&b)
	n, err := fmt.Fprintf(w, "control: FAILED: echo sk-long-secret\n")
	require.NoError(t, err)
	assert.Equal(t, len("control: FAILED: echo sk-long-secret\n"), n, "the caller's byte count")
	assert.Equal(t, "control: FAILED: echo <redacted>\n", b.String())
	assert.Same(t, &b, NewRedactor().Writer(&b), "nothing to redact: the writer itself")
}
