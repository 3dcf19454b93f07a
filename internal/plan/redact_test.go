package plan

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIsSecretHeader(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"Authorization", "proxy-authorization", "Cookie", "X-Api-Key", "api-key",
		"Ocp-Apim-Subscription-Key", "X-Auth-Token", "CF-Access-Client-Secret", "X-Vault-Token", "x_api_key",
		"X-Password", "X-Upstream-Credentials", " AUTHORIZATION ", "X-JWT-Assertion", "X-Hub-Signature", "X-Pwd"} {
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
	u, ok := w.(interface{ Unwrap() io.Writer })
	require.True(t, ok, "it says what it wraps, so a terminal under it is still found (termsafe.File)")
	assert.Same(t, &b, u.Unwrap())
}

func TestIsSecretParam(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"key", "api_key", "apikey", "apiKey", "token", "access_token", "sig", "signature",
		"password", "secret", "client_secret", "X-Amz-Signature", "X-Amz-Security-Token", "AWSAccessKeyId", "sessionToken",
		"auth", "PWD", " Token "} {
		assert.True(t, IsSecretParam(name, nil), name)
	}
	for _, name := range []string{"max_tokens", "max_completion_tokens", "skip_special_tokens", "monkey", "design", "model",
		"ignore_eos", "stream", "keys", "authors", "", "tenant"} {
		assert.False(t, IsSecretParam(name, nil), name)
	}
	assert.True(t, IsSecretParam("Tenant", []string{"tenant"}), "a name the user marks, in any case")
	assert.False(t, IsSecretParam("tenant_id", []string{"tenant"}), "marked names match whole")
}

func TestRedactURLQuery(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"http://h:1/v1?api_key=sk-1&model=m":           "http://h:1/v1?api_key=<redacted>&model=m",
		"https://x.blob/c?sv=2024&sig=a%2Bb%3D&se=1":   "https://x.blob/c?sv=2024&sig=<redacted>&se=1",
		"http://u:p@h/?token=t1#frag&key=no":           "http://<redacted>@h/?token=<redacted>#frag&key=no",
		"h:8000?key=k;x=1&max_tokens=5&key=":           "h:8000?key=<redacted>&max_tokens=5&key=",
		"http://h/?a%5Fkey=zz&X-Amz-Signature=ab&flag": "http://h/?a%5Fkey=<redacted>&X-Amz-Signature=<redacted>&flag",
		"http://h/#?key=in-fragment":                   "http://h/#?key=in-fragment",
	}
	for in, want := range tests {
		red := RedactURL(in)
		assert.Equal(t, want, red, in)
		assert.Equal(t, red, RedactURL(red), "redacting twice changes nothing")
	}
	assert.Equal(t, "http://h/?tenant=<redacted>&b=2", redactURL("http://h/?tenant=acme&b=2", []string{"tenant"}))
}

func TestProfileSecretParams(t *testing.T) {
	t.Parallel()
	p := NewProfile()
	p.URL = []string{"http://h:1/v1?api_key=q-key-1&mode=fast", "http://h:2/?tenant=acme-2"}
	p.ServerMetrics = []string{"http://h:3/metrics?token=sm%2Btok-3"}
	p.ExtraInputs = []string{"max_tokens:64", "api_key: body-key-4", `{"auth":{"user":"u-5","pin":12345},"top_k":3,"keys":["x"],"meta":{"client_secret":"cs-6"}}`, "session_token:987654"}
	p.RedactParam = []string{"tenant"}
	got := p.Secrets()
	for _, want := range []string{"q-key-1", "acme-2", "sm%2Btok-3", "sm+tok-3", "body-key-4", "u-5", "12345", "cs-6", "987654"} {
		assert.Contains(t, got, want)
	}
	for _, not := range []string{"fast", "64", "3", "x"} {
		assert.NotContains(t, got, not)
	}
	red := p.Redacted()
	assert.Equal(t, []string{"http://h:1/v1?api_key=<redacted>&mode=fast", "http://h:2/?tenant=<redacted>"}, red.URL)
	assert.Equal(t, []string{"http://h:3/metrics?token=<redacted>"}, red.ServerMetrics)
	assert.Equal(t, []string{"max_tokens:64", "api_key:<redacted>",
		`{"auth":"<redacted>","keys":["x"],"meta":{"client_secret":"<redacted>"},"top_k":3}`, "session_token:<redacted>"}, red.ExtraInputs)
	assert.Empty(t, NewRedactor(red.Secrets()...).long, "a redacted profile has no secrets left")
	assert.Equal(t, red, red.Redacted(), "redacting twice changes nothing")
}

// TestHookPathSecrets: a control hook's path may carry a credential in its
// query, as a URL may; it is a secret of the profile, redacted in the
// redacted profile, and not sweepable.
func TestHookPathSecrets(t *testing.T) {
	t.Parallel()
	p := NewProfile()
	p.ResetKVCachePath = []string{"/reset_prefix_cache?token=TOKQSECRET2", "/flush_cache?timeout=5"}
	p.ServerProfilerStartPath = "/start_profile?api_key=APIQSECRET2"
	p.ServerProfilerStopPath = "/stop_profile"
	got := p.Secrets()
	assert.Contains(t, got, "TOKQSECRET2")
	assert.Contains(t, got, "APIQSECRET2")
	assert.NotContains(t, got, "5")
	red := p.Redacted()
	assert.Equal(t, []string{"/reset_prefix_cache?token=<redacted>", "/flush_cache?timeout=5"}, red.ResetKVCachePath)
	assert.Equal(t, "/start_profile?api_key=<redacted>", red.ServerProfilerStartPath)
	assert.Equal(t, "/stop_profile", red.ServerProfilerStopPath)
	assert.Empty(t, NewRedactor(red.Secrets()...).long, "a redacted profile has no secrets left")
	assert.True(t, Param{Name: "server_profiler_start_path", Value: p.ServerProfilerStartPath}.Secret(nil))
	assert.False(t, Param{Name: "server_profiler_stop_path", Value: "/stop_profile"}.Secret(nil))
}

// TestURLUserName: a URL's user name, with a password or without
// (http://user@host), is hidden wherever a URL carries it — the
// configuration, and any URL in text a server or an error echoes — but is
// not a secret of its own, so that "user" (the chat role) stays in every
// export; the password and the Basic credential built from the userinfo
// are secrets wherever they occur.
func TestURLUserName(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{"http://user@h:1/v1", "http://user:pw-secret-1@h:1/v1"} {
		p := NewProfile()
		p.URL = []string{raw}
		assert.Equal(t, []string{"http://<redacted>@h:1/v1"}, p.Redacted().URL, raw)
		_, pass, _ := strings.Cut(strings.TrimPrefix(strings.Split(raw, "@")[0], "http://"), ":")
		r := p.Redactor()
		require.False(t, r.Empty(), raw)
		basic := base64.StdEncoding.EncodeToString([]byte("user:" + pass))
		for in, want := range map[string]string{
			`{"role":"user","content":"a user"}`:                         `{"role":"user","content":"a user"}`,
			`Post "http://user@h:1/v1/chat/completions": refused`:        `Post "http://<redacted>@h:1/v1/chat/completions": refused`,
			`Post "http://user:***@h:1/v1": refused`:                     `Post "http://<redacted>@h:1/v1": refused`,
			"upstream https://user:x@[::1]:8/v1 and http://h/p@q failed": "upstream https://<redacted>@[::1]:8/v1 and http://h/p@q failed",
			"(http://user@h) then mail user@example.com":                 "(http://<redacted>@h) then mail user@example.com",
			"echo Authorization: Basic " + basic:                         "echo Authorization: Basic <redacted>",
			"http://<redacted>@h:1":                                      "http://<redacted>@h:1",
		} {
			assert.Equal(t, want, r.Redact(in), "%s: %s", raw, in)
		}
		if pass != "" {
			assert.Equal(t, "the password <redacted>", r.Redact("the password "+pass))
		}
	}
	assert.Equal(t, "http://h:1 a@b", NewRedactor("sk-long-secret").Redact("http://h:1 a@b"), "no URL userinfo: as is")
}

// TestRedactorURLWithUserinfoAndSignedQuery: a URL in text with both a
// user:password and a signed query (a media URL of an input file) loses
// both; the userinfo's marker used to end the URL before its query.
func TestRedactorURLWithUserinfoAndSignedQuery(t *testing.T) {
	t.Parallel()
	r := NewProfile().Redactor()
	got := r.Redact(`"https://u:pw@img.example.com/c.png?sig=TOKSECRET789&w=2", "https://h/a.png?X-Amz-Signature=S1"`)
	assert.Equal(t, `"https://<redacted>@img.example.com/c.png?sig=<redacted>&w=2", "https://h/a.png?X-Amz-Signature=<redacted>"`, got)
}

// TestHeaderSecretsInEveryForm: a secret header given in a comma list or a
// JSON object (-H X-A:1,Authorization:Bearer sk) is a secret, and redacted,
// as one given alone.
func TestHeaderSecretsInEveryForm(t *testing.T) {
	t.Parallel()
	p := NewProfile()
	p.Header = []string{"X-A:1,Authorization:Bearer sk-COMMA-1", `{"X-Api-Key": "k-JSON-2", "X-B": "2"}`, "Accept: a, b"}
	got := p.Secrets()
	assert.Contains(t, got, "sk-COMMA-1")
	assert.Contains(t, got, "k-JSON-2")
	red := p.Redacted()
	assert.Equal(t, []string{"X-A:1", "Authorization:" + Redacted, "X-Api-Key:" + Redacted, "X-B:2", "Accept: a, b"}, red.Header,
		"an entry without a secret stays as written")
	assert.Empty(t, NewRedactor(red.Secrets()...).long, "a redacted profile has no secrets left")
}
