// Package sigv4 signs HTTP requests with AWS Signature Version 4 (AWS's
// "Create a signed AWS API request", the header form), for inference
// endpoints behind AWS authentication: API Gateway (service execute-api),
// SageMaker Runtime (sagemaker), Bedrock Runtime (bedrock). It also reads
// the credentials to sign with (creds.go). The algorithm is checked against
// AWS's published examples (sign_test.go).
package sigv4

import (
	"cmp"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"
)

// Header names the signature sets.
const (
	HeaderDate          = "X-Amz-Date"
	HeaderSecurityToken = "X-Amz-Security-Token"
	algorithm           = "AWS4-HMAC-SHA256"
	timeFormat          = "20060102T150405Z"
)

// unsigned are the headers left out of a signature, as AWS's SDKs leave
// them out: a proxy or the transport may change them on the way.
var unsigned = map[string]bool{"authorization": true, "user-agent": true, "expect": true, "x-amzn-trace-id": true}

// Sign signs req, whose body is body, for region and service with c at
// time now: it sets X-Amz-Date, X-Amz-Security-Token (with a session token)
// and Authorization. Every header req carries then (but User-Agent, Expect
// and X-Amzn-Trace-Id) and its host are signed, and the body's SHA-256: a
// header added later is sent unsigned, which AWS accepts.
func Sign(req *http.Request, body []byte, c Credentials, region, service string, now time.Time) {
	stamp := now.UTC().Format(timeFormat)
	req.Header.Set(HeaderDate, stamp)
	if c.SessionToken != "" {
		req.Header.Set(HeaderSecurityToken, c.SessionToken)
	}
	req.Header.Del("Authorization")
	scope := stamp[:8] + "/" + region + "/" + service + "/aws4_request"
	names, canonical := canonicalHeaders(req)
	sum := sha256.Sum256(body)
	creq := strings.Join([]string{req.Method, canonicalURI(req.URL), canonicalQuery(req.URL.RawQuery),
		canonical, names, hex.EncodeToString(sum[:])}, "\n")
	h := sha256.Sum256([]byte(creq))
	toSign := algorithm + "\n" + stamp + "\n" + scope + "\n" + hex.EncodeToString(h[:])
	key := signingKey(c.SecretAccessKey, stamp[:8], region, service)
	sig := hex.EncodeToString(mac(key, toSign))
	req.Header.Set("Authorization", algorithm+" Credential="+c.AccessKeyID+"/"+scope+", SignedHeaders="+names+", Signature="+sig)
}

// signingKey derives the day's key for region and service from the secret.
func signingKey(secret, day, region, service string) []byte {
	k := mac([]byte("AWS4"+secret), day)
	k = mac(k, region)
	k = mac(k, service)
	return mac(k, "aws4_request")
}

func mac(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

// canonicalURI is the request's path as sent, its dot segments removed,
// and URI-encoded once more (every service but S3 signs the path encoded
// twice).
func canonicalURI(u *url.URL) string {
	p := u.EscapedPath()
	if p == "" {
		return "/"
	}
	clean := path.Clean(p)
	if strings.HasSuffix(p, "/") && clean != "/" {
		clean += "/"
	}
	return encode(clean, true)
}

// canonicalQuery is the query's parameters, each name and value decoded and
// encoded again strictly, sorted by name, then by value (not as whole
// "name=value" texts: a=1 sorts before a-b=2).
func canonicalQuery(raw string) string {
	if raw == "" {
		return ""
	}
	var pairs [][2]string
	for _, part := range strings.Split(raw, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		pairs = append(pairs, [2]string{encode(unescape(k), false), encode(unescape(v), false)})
	}
	slices.SortFunc(pairs, func(a, b [2]string) int { return cmp.Or(strings.Compare(a[0], b[0]), strings.Compare(a[1], b[1])) })
	out := make([]string, len(pairs))
	for i, p := range pairs {
		out[i] = p[0] + "=" + p[1]
	}
	return strings.Join(out, "&")
}

// unescape decodes a query component as a server would ("+" is a space);
// an invalid escape is kept as it is.
func unescape(s string) string {
	if d, err := url.QueryUnescape(s); err == nil {
		return d
	}
	return s
}

// encode percent-encodes every byte but the unreserved ones (A-Z a-z 0-9
// - _ . ~), and "/" when slash.
func encode(s string, slash bool) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' || slash && c == '/' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

// canonicalHeaders returns the signed header names (";"-joined) and their
// canonical block: host and req's headers, names lower-cased and sorted,
// values trimmed with inner runs of spaces made one, repeated values
// joined by commas.
func canonicalHeaders(req *http.Request) (names, block string) {
	values := map[string][]string{"host": {hostOf(req)}}
	for k, vs := range req.Header {
		name := strings.ToLower(k)
		if unsigned[name] {
			continue
		}
		for _, v := range vs {
			values[name] = append(values[name], strings.Join(strings.Fields(v), " "))
		}
	}
	keys := slices.Sorted(maps.Keys(values))
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + ":" + strings.Join(values[k], ",") + "\n")
	}
	return strings.Join(keys, ";"), b.String()
}

// hostOf is the Host header req is sent with (Go sends the URL's host as
// it is given, a default port included).
func hostOf(req *http.Request) string {
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	return strings.TrimSuffix(host, ":")
}
