package sigv4

import (
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// AWS's example credentials and time of its SigV4 test suite and docs.
var (
	example = Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"}
	at      = time.Date(2015, 8, 30, 12, 36, 0, 0, time.UTC)
)

const suiteToken = "AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA=="

// Each case is a request of AWS's aws-sig-v4-test-suite (or the IAM
// ListUsers example of its signing documentation) and the Authorization
// header AWS publishes for it.
func TestSignMatchesAWSPublishedVectors(t *testing.T) {
	for _, tc := range []struct {
		name, method, url, body, service, token string
		headers                                 [][2]string
		signed, signature                       string
	}{
		{name: "get-vanilla", method: "GET", url: "https://example.amazonaws.com/",
			signed: "host;x-amz-date", signature: "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"},
		{name: "get-vanilla-query-order-key-case", method: "GET", url: "https://example.amazonaws.com/?Param2=value2&Param1=value1",
			signed: "host;x-amz-date", signature: "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"},
		{name: "post-vanilla", method: "POST", url: "https://example.amazonaws.com/",
			signed: "host;x-amz-date", signature: "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"},
		{name: "post-x-www-form-urlencoded", method: "POST", url: "https://example.amazonaws.com/", body: "Param1=value1",
			headers: [][2]string{{"Content-Type", "application/x-www-form-urlencoded"}},
			signed:  "content-type;host;x-amz-date", signature: "ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a"},
		{name: "get-header-value-trim", method: "GET", url: "https://example.amazonaws.com/",
			headers: [][2]string{{"My-Header1", " value1"}, {"My-Header2", `"a   b   c"`}},
			signed:  "host;my-header1;my-header2;x-amz-date", signature: "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736"},
		{name: "post-sts-header-before", method: "POST", url: "https://example.amazonaws.com/", token: suiteToken,
			signed: "host;x-amz-date;x-amz-security-token", signature: "85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead"},
		{name: "IAM ListUsers", method: "GET", url: "https://iam.amazonaws.com/?Action=ListUsers&Version=2010-05-08", service: "iam",
			headers: [][2]string{{"Content-Type", "application/x-www-form-urlencoded; charset=utf-8"}},
			signed:  "content-type;host;x-amz-date", signature: "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, tc.url, strings.NewReader(tc.body))
			require.NoError(t, err)
			for _, h := range tc.headers {
				req.Header.Set(h[0], h[1])
			}
			service := tc.service
			if service == "" {
				service = "service"
			}
			c := example
			c.SessionToken = tc.token
			Sign(req, []byte(tc.body), c, "us-east-1", service, at)
			assert.Equal(t, "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/"+service+"/aws4_request, SignedHeaders="+
				tc.signed+", Signature="+tc.signature, req.Header.Get("Authorization"))
			assert.Equal(t, "20150830T123600Z", req.Header.Get(HeaderDate))
			assert.Equal(t, tc.token, req.Header.Get(HeaderSecurityToken))
		})
	}
}

// The derived key of AWS's documented example.
func TestSigningKey(t *testing.T) {
	assert.Equal(t, "c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9",
		hexOf(signingKey(example.SecretAccessKey, "20150830", "us-east-1", "iam")))
}

// What a server checks: another body, path, header or time signs
// differently; User-Agent is not signed; the path is signed encoded twice.
func TestSignCoversTheRequest(t *testing.T) {
	sig := func(mut func(r *http.Request), body string) string {
		req, _ := http.NewRequest("POST", "https://runtime.sagemaker.us-west-2.amazonaws.com/endpoints/my%3Aep/invocations?x=1", nil)
		req.Header.Set("Content-Type", "application/json")
		if mut != nil {
			mut(req)
		}
		Sign(req, []byte(body), example, "us-west-2", "sagemaker", at)
		return req.Header.Get("Authorization")
	}
	base := sig(nil, "{}")
	assert.NotEqual(t, base, sig(nil, "{ }"), "the body is hashed")
	assert.NotEqual(t, base, sig(func(r *http.Request) { r.Header.Set("X-Request-ID", "a") }, "{}"), "headers are signed")
	assert.NotEqual(t, base, sig(func(r *http.Request) { r.URL.RawQuery = "x=2" }, "{}"), "the query is signed")
	assert.Equal(t, base, sig(func(r *http.Request) { r.Header.Set("User-Agent", "x") }, "{}"), "User-Agent is not")
	assert.Equal(t, "/endpoints/my%253Aep/invocations", canonicalURI(mustURL(t, "https://h/endpoints/my%3Aep/invocations")))
	assert.Equal(t, "/a/", canonicalURI(mustURL(t, "https://h/a/./b/../")))
	assert.Equal(t, "a=1&b=%20&b=x", canonicalQuery("b=x&b=+&a=1"))
	assert.Equal(t, "a=1&a-b=2", canonicalQuery("a-b=2&a=1"), "by name, then value: not by the whole text (botocore)")
}

func hexOf(b []byte) string { return hex.EncodeToString(b) }

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	return u
}
