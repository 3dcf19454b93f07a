package plan

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Redacted replaces secrets in exports, logs and the store.
const Redacted = "<redacted>"

// secretNameParts make a header secret when its lower-cased name contains
// one: Authorization, Proxy-Authorization, Cookie, X-Api-Key, api-key,
// Ocp-Apim-Subscription-Key, X-Auth-Token, CF-Access-Client-Secret,
// X-JWT-Assertion, X-Hub-Signature, ...
var secretNameParts = []string{"auth", "key", "token", "secret", "cookie", "password", "passwd", "pwd", "credential", "jwt", "signature"}

// minEmbeddedSecret is the length (in characters) from which a secret is
// replaced wherever it occurs. A shorter one is replaced only where it stands
// alone (not inside a longer run of letters and digits), so that a two-letter
// key cannot shred every word that contains it.
const minEmbeddedSecret = 4

// IsSecretHeader reports whether a header's value must never be shown: its
// name contains auth, key, token, secret, cookie, password, passwd, pwd,
// credential, jwt or signature, in any case. To keep a header's value out of every record,
// give it such a name.
func IsSecretHeader(name string) bool {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, s := range secretNameParts {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// Redacted returns a copy safe to log, export or store: the API key, secret
// header values, URL credentials, the values of secret URL query parameters
// and of secret --extra-inputs keys (IsSecretParam) are replaced.
func (p Profile) Redacted() Profile {
	if p.APIKey != "" {
		p.APIKey = Redacted
	}
	if len(p.Header) > 0 {
		var hs []string
		for _, h := range p.Header {
			pairs := headerPairs([]string{h})
			if !slices.ContainsFunc(pairs, func(kv [2]string) bool { return IsSecretHeader(kv[0]) }) {
				hs = append(hs, h) // as written
				continue
			}
			for _, kv := range pairs { // a list or an object holding a secret: one header each
				if IsSecretHeader(kv[0]) {
					kv[1] = Redacted
				}
				hs = append(hs, kv[0]+":"+kv[1])
			}
		}
		p.Header = hs
	}
	p.URL = redactEach(p.URL, p.RedactParam, redactURL)
	p.ServerMetrics = redactEach(p.ServerMetrics, p.RedactParam, redactURL)
	p.GPUTelemetry = redactEach(p.GPUTelemetry, p.RedactParam, redactURL)
	p.ExtraInputs = redactExtra(p.ExtraInputs, p.RedactParam)
	p.ResetKVCachePath = redactEach(p.ResetKVCachePath, p.RedactParam, redactQuery)
	p.ServerProfilerStartPath = redactQuery(p.ServerProfilerStartPath, p.RedactParam)
	p.ServerProfilerStopPath = redactQuery(p.ServerProfilerStopPath, p.RedactParam)
	p.Endpoint = redactQuery(p.Endpoint, p.RedactParam) // its query goes on the wire (urljoin.go)
	p.OtelURL = redactOne(p.OtelURL, p.RedactParam)
	p.MLflowTrackingURI = redactOne(p.MLflowTrackingURI, p.RedactParam)
	return p
}

// redactOne is redactURL of an optional URL ("" stays "").
func redactOne(raw string, marked []string) string {
	if raw == "" {
		return raw
	}
	return redactURL(raw, marked)
}

// QuerySecrets lists the values of raw's secret query parameters (see
// IsSecretParam), as written and unescaped: a control hook's path may
// carry one (?token=).
func QuerySecrets(raw string) []string { return querySecrets(raw, nil) }

// hookPaths are the control hooks' paths, which may carry a query.
func (p Profile) hookPaths() []string {
	return slices.DeleteFunc(slices.Concat(p.ResetKVCachePath, []string{p.ServerProfilerStartPath, p.ServerProfilerStopPath}),
		func(s string) bool { return s == "" })
}

// redactEach is a copy of list with each entry passed through redact
// with the names marked secret by --redact-param (nil stays nil).
func redactEach(list, marked []string, redact func(s string, marked []string) string) []string {
	if len(list) == 0 {
		return list
	}
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = redact(s, marked)
	}
	return out
}

// RedactURL replaces the userinfo (user and password) of a URL and the
// values of its secret query parameters (?api_key=, ?sig=, ...: see
// IsSecretParam), also when the URL does not parse (a bad port, say) or has
// no scheme.
func RedactURL(raw string) string { return redactURL(raw, nil) }

// redactURL is RedactURL with the names marked secret by --redact-param.
func redactURL(raw string, marked []string) string {
	if start, end, ok := userinfoSpan(raw); ok {
		raw = raw[:start] + Redacted + raw[end:]
	}
	return redactQuery(raw, marked)
}

// userinfoSpan locates the userinfo of a URL, as url.Parse does (up to the
// authority's last '@') but without requiring the rest to be valid.
func userinfoSpan(raw string) (start, end int, ok bool) {
	if i := strings.Index(raw, "://"); i >= 0 && !strings.ContainsAny(raw[:i], "/?#@") {
		start = i + len("://")
	}
	for start < len(raw) && raw[start] == '/' { // "//user:pw@host" too
		start++
	}
	auth := raw[start:]
	if j := strings.IndexAny(auth, "/?#"); j >= 0 {
		auth = auth[:j]
	}
	at := strings.LastIndex(auth, "@")
	if at < 0 {
		return 0, 0, false
	}
	return start, start + at, true
}

// headerPairs are the headers of hs as they are sent (HeaderFields: a
// JSON object or a comma list is several), an entry that does not parse
// taken whole at its first ':'.
func headerPairs(hs []string) [][2]string {
	var out [][2]string
	for _, h := range hs {
		if fields, err := HeaderFields(h); err == nil {
			out = append(out, fields...)
			continue
		}
		k, v, _ := strings.Cut(h, ":")
		out = append(out, [2]string{k, v})
	}
	return out
}

// Secrets lists the secrets of p, as configured: the API key, the values of
// secret headers (see IsSecretHeader) with the credential after an
// authorization scheme ("Bearer sk-…"), a Basic credential decoded, and each
// cookie's value, the userinfo of every URL (user, password, and the
// Basic credential an HTTP client builds from them), the values of every
// URL's and control-hook path's secret query parameters and of the secret
// --extra-inputs keys (see IsSecretParam, with --redact-param). A redacted
// profile has none.
func (p Profile) Secrets() []string {
	var out []string
	if p.APIKey != Redacted {
		out = append(out, p.APIKey)
	}
	for _, kv := range headerPairs(p.Header) {
		if IsSecretHeader(kv[0]) {
			out = append(out, headerSecrets(kv[0], kv[1])...)
		}
	}
	for _, raw := range slices.Concat(p.URL, p.ServerMetrics, p.GPUTelemetry, p.integrationURLs()) {
		out = append(out, URLSecrets(raw)...)
		out = append(out, querySecrets(raw, p.RedactParam)...)
	}
	for _, path := range append(p.hookPaths(), p.Endpoint) {
		out = append(out, querySecrets(path, p.RedactParam)...)
	}
	return append(out, extraSecrets(p.ExtraInputs, p.RedactParam)...)
}

// Redactor returns the redactor of p's secrets.
func (p Profile) Redactor() *Redactor {
	r := NewRedactor(p.Secrets()...)
	r.urls, r.params = true, p.RedactParam
	return r
}

// HeaderSecrets lists the secrets among headers about to be sent, derived as
// Profile.Secrets derives them from --header values.
func HeaderSecrets(h map[string][]string) []string {
	var out []string
	for k, vs := range h {
		if IsSecretHeader(k) {
			for _, v := range vs {
				out = append(out, headerSecrets(k, v)...)
			}
		}
	}
	return out
}

// headerSecrets is the value of a secret header and the parts of it a server
// may echo on their own.
func headerSecrets(name, value string) []string {
	v := strings.TrimSpace(value)
	out := []string{v}
	if scheme, cred, ok := strings.Cut(v, " "); ok {
		cred = strings.TrimSpace(cred)
		out = append(out, cred)
		if strings.EqualFold(scheme, "Basic") {
			if b, err := base64.StdEncoding.DecodeString(cred); err == nil && utf8.Valid(b) {
				user, pass, _ := strings.Cut(string(b), ":")
				out = append(out, string(b), user, pass)
			}
		}
	}
	if strings.EqualFold(strings.TrimSpace(name), "Cookie") {
		for c := range strings.SplitSeq(v, ";") {
			// A cookie's value alone is a secret only when it is not short:
			// the whole header already is one, and "lang=en" must not
			// turn every "en" into a redaction.
			if _, cv, ok := strings.Cut(c, "="); ok && utf8.RuneCountInString(strings.TrimSpace(cv)) >= minEmbeddedSecret {
				out = append(out, strings.TrimSpace(cv))
			}
		}
	}
	return out
}

// URLSecrets are the secrets of a URL's userinfo as written: its password
// (as written and unescaped) with the userinfo that holds it, and the Basic
// credential Go's HTTP client sends for them. The user name alone is not
// one, with a password or without (http://user@host): replaced wherever it
// occurs, it would shred every word it spells ("user", the chat role, in
// every export). It is hidden wherever a URL carries it instead: RedactURL,
// and the userinfo pass of Redactor.Redact over any text.
func URLSecrets(raw string) []string {
	start, end, ok := userinfoSpan(raw)
	if !ok {
		return nil
	}
	info := raw[start:end]
	if info == Redacted {
		return nil
	}
	user, pass, _ := strings.Cut(info, ":")
	var out []string
	if pass != "" {
		out = append(out, info, pass)
	}
	du, err1 := url.PathUnescape(user)
	dp, err2 := url.PathUnescape(pass)
	if err1 == nil && err2 == nil {
		out = append(out, dp, base64.StdEncoding.EncodeToString([]byte(du+":"+dp)))
	}
	return out
}

// Redactor replaces secrets in text: server replies, error messages, logs.
// A nil Redactor changes nothing. It is safe for concurrent use.
type Redactor struct {
	long  []string // replaced wherever they occur, longest first
	short []string // replaced where they stand alone, longest first
	// urls: the values of secret query parameters (IsSecretParam, with
	// params) of every URL in a text are replaced too, whatever the
	// profile's own secrets (a signed media URL of an input file).
	urls   bool
	params []string
}

// NewRedactor returns a Redactor for secrets (see Profile.Secrets). Each
// secret is trimmed and also matched in the forms a server may echo it:
// JSON-escaped (with and without HTML escaping) and URL-escaped. Secrets of
// fewer than 4 characters are replaced only where they stand alone. Empty
// secrets, and the few that the marker itself contains (which no marker
// could hide), are ignored. The standard log's writer hides them too, from
// then on (LogWriter).
func NewRedactor(secrets ...string) *Redactor {
	remember(secrets)
	return newRedactor(secrets...)
}

func newRedactor(secrets ...string) *Redactor {
	seen := map[string]bool{}
	r := &Redactor{}
	for _, s := range secrets {
		s = strings.TrimSpace(s)
		if s == "" || strings.Contains(Redacted, s) {
			continue
		}
		for _, v := range SecretVariants(s) {
			if seen[v] {
				continue
			}
			seen[v] = true
			if utf8.RuneCountInString(v) >= minEmbeddedSecret {
				r.long = append(r.long, v)
			} else {
				r.short = append(r.short, v)
			}
		}
	}
	longestFirst := func(a, b string) int {
		if d := len(b) - len(a); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	}
	slices.SortFunc(r.long, longestFirst)
	slices.SortFunc(r.short, longestFirst)
	return r
}

// SecretVariants are the forms of s a server may echo, which a Redactor
// hides: as written, URL-escaped, and as a JSON string's contents with and
// without HTML escapes.
func SecretVariants(s string) []string {
	out := []string{s, url.QueryEscape(s), url.PathEscape(s)}
	for _, html := range []bool{false, true} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		if enc.Encode(s) == nil {
			q := strings.TrimSpace(b.String())
			out = append(out, q[1:len(q)-1])
		}
	}
	return out
}

// Empty reports whether r has nothing to redact.
func (r *Redactor) Empty() bool { return r.ownEmpty() && learntNothing() }

// ownEmpty reports whether r itself hides nothing (the secrets learnt
// while running aside).
func (r *Redactor) ownEmpty() bool { return r == nil || len(r.long)+len(r.short) == 0 && !r.urls }

// ellipsis marks text cut short; a secret cut there leaves a prefix behind.
const ellipsis = "…"

// Redact returns s with every secret replaced by Redacted, and the userinfo
// of every URL in it (scheme://user:password@host, user names included, as
// a server or Go's HTTP errors echo them). A secret is also found under
// JSON string escapes, two levels deep (redactescaped.go). Replacing is
// repeated while it changes something, since a replacement can complete a
// secret with the text around it; should one still remain, the whole text
// is replaced. Text cut short with a trailing "…" also loses a trailing cut
// secret (its first 4 or more characters).
func (r *Redactor) Redact(s string) string {
	// What this process learnt is hidden after r's own: its userinfo
	// marker would end the span of a URL whose query r hides.
	return hideLearnt(r, r.redactOwn(s))
}

func (r *Redactor) redactOwn(s string) string {
	if r.ownEmpty() || s == "" {
		return s
	}
	if r.urls { // before the userinfo: a URL's span ends at the '<' of a redacted userinfo
		s = redactURLQueries(s, r.params)
	}
	s = redactUserinfo(s)
	s = r.cutPrefix(s)
	for range 4 {
		out := r.escaped(r.replace(s))
		if out == s {
			return s
		}
		s = out
	}
	if r.found(s) {
		return Redacted
	}
	return s
}

// cutPrefix replaces the start of a long secret that ends s right before a
// trailing ellipsis: what is left of a secret by truncation.
func (r *Redactor) cutPrefix(s string) string {
	body, ok := strings.CutSuffix(strings.TrimRightFunc(s, unicode.IsSpace), ellipsis)
	if !ok {
		return s
	}
	for _, v := range r.long { // longest first
		for k := len(v) - 1; k >= minEmbeddedSecret; k-- {
			if utf8.RuneStart(v[k]) && strings.HasSuffix(body, v[:k]) {
				return body[:len(body)-k] + Redacted + ellipsis
			}
		}
	}
	return s
}

func (r *Redactor) replace(s string) string {
	for _, v := range r.long {
		if !strings.Contains(s, v) {
			continue
		}
		if utf8.ValidString(v) { // then every match is on rune boundaries
			s = strings.ReplaceAll(s, v, Redacted)
		} else {
			s = replaceMatches(s, v, false)
		}
	}
	for _, v := range r.short {
		s = replaceMatches(s, v, true)
	}
	return s
}

func (r *Redactor) found(s string) bool {
	for _, v := range r.long {
		if strings.Contains(s, v) && replaceMatches(s, v, false) != s {
			return true
		}
	}
	for _, v := range r.short {
		if replaceMatches(s, v, true) != s {
			return true
		}
	}
	return false
}

// replaceMatches replaces each occurrence of w in s that starts and ends on
// a rune boundary (a secret of invalid UTF-8 could otherwise match inside a
// character) and, when standalone, is neither preceded nor followed by a
// letter or digit.
func replaceMatches(s, w string, standalone bool) string {
	var b strings.Builder
	rest := s
	for {
		i := strings.Index(rest, w)
		if i < 0 {
			break
		}
		j := i + len(w)
		match := utf8.RuneStart(rest[i]) && (j == len(rest) || utf8.RuneStart(rest[j]))
		if match && standalone {
			before, _ := utf8.DecodeLastRuneInString(rest[:i])
			if i == 0 && b.Len() > 0 {
				before, _ = utf8.DecodeLastRuneInString(b.String())
			}
			after, _ := utf8.DecodeRuneInString(rest[j:])
			match = !isWordRune(before) && !isWordRune(after)
		}
		b.WriteString(rest[:i])
		if !match {
			b.WriteString(w[:1])
			rest = rest[i+1:]
			continue
		}
		b.WriteString(Redacted)
		rest = rest[j:]
	}
	if b.Len() == 0 {
		return s
	}
	b.WriteString(rest)
	return b.String()
}

func isWordRune(r rune) bool {
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r))
}
