package plan

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// ModelsPath is the route of the model list the readiness probe reads.
const ModelsPath = "/v1/models"

// RequestURLs are the full inference URLs, one per --url, in order: the
// endpoint path appended to the URL's path without repeating segments the
// URL already ends with, as AIPerf does (http://h:8000/v1 gives
// http://h:8000/v1/chat/completions). The URL's escaping (/a%2Fb), its
// semicolon path parameters (/proxy;tenant=blue) and its query are kept;
// the --endpoint's query parameters replace the URL's of the same key
// (joinURL). Through SageMaker Runtime the path is its invocation route
// (sageMakerPath) instead of the endpoint type's.
func (p *Profile) RequestURLs() []string {
	out := make([]string, 0, len(p.URL))
	path := p.endpointPath()
	if p.SageMakerOn() {
		path = p.sageMakerPath()
	}
	for _, raw := range p.URL {
		u, err := joinURL(raw, path, path)
		if err != nil {
			out = append(out, raw) // Check reports it
			continue
		}
		out = append(out, u)
	}
	return out
}

// ModelsURLs are the distinct URLs of the model list the readiness probe
// (--wait-for-model-mode models) reads, in --url order: each URL's base
// path (its path less the segments it shares with the endpoint path, as
// the request join drops them) joined to /v1/models the same way, with the
// URL's path parameters and query; the --endpoint's query is the inference
// route's and is not added. A template or raw endpoint's URL is the route
// itself, so its model list is looked up at the origin's /v1/models.
func (p *Profile) ModelsURLs() []string {
	var out []string
	path := p.endpointPath()
	for _, raw := range p.URL {
		u, err := joinURL(raw, path, ModelsPath)
		if err != nil {
			continue // Check reports it
		}
		if !slices.Contains(out, u) {
			out = append(out, u)
		}
	}
	return out
}

// joinURL is raw (a --url) with its base path joined to target's path and
// target's query merged into its own (mergeQuery). The base path is the
// URL's path less its trailing segments that endpoint (the inference
// route) starts with; an empty endpoint makes the whole path the route, so
// the base is the origin's root. Paths are joined as they are escaped, so
// /a%2Fb stays /a%2Fb. Only a --url that does not parse is an error.
func joinURL(raw, endpoint, target string) (string, error) {
	u, err := url.Parse(NormalizeURL(raw))
	if err != nil {
		return "", fmt.Errorf("parse the url: %w", err)
	}
	if target == "" { // a template or raw endpoint: the URL as it is
		return u.String(), nil
	}
	t, base := routeOf(target), ""
	if endpoint != "" {
		base = trimOverlap(u.EscapedPath(), routeOf(endpoint).EscapedPath())
	}
	joined := joinDeduped(base, t.EscapedPath())
	if u.Path, err = url.PathUnescape(joined); err != nil {
		return "", fmt.Errorf("join the paths: %w", err)
	}
	u.RawPath = joined
	u.RawQuery = mergeQuery(u.RawQuery, t.RawQuery)
	return u.String(), nil
}

// routeOf is an endpoint path (with its query, if any) as a URL; one that
// does not parse (CheckEndpointPath refuses it) is taken as a literal path.
func routeOf(path string) *url.URL {
	if u, err := parsePath(path); err == nil {
		return u
	}
	return &url.URL{Path: path}
}

// parsePath parses an endpoint path (with its query, if any) as a URL
// path: never a host, whatever its slashes.
func parsePath(path string) (*url.URL, error) {
	u, err := url.Parse("http://h" + path)
	if err != nil {
		return nil, fmt.Errorf("parse the endpoint path %q: %w", path, err)
	}
	return u, nil
}

// CheckEndpointPath reports what makes an --endpoint value unusable as a
// request path: not starting with '/', a scheme, an invalid percent
// escape, or a fragment (never sent). It names no flag: the caller does.
func CheckEndpointPath(path string) error {
	if !strings.HasPrefix(path, "/") || strings.Contains(path, "://") {
		return fmt.Errorf("must be a path starting with '/', got %q", path)
	}
	if strings.Contains(path, "#") {
		return fmt.Errorf("must not hold a fragment ('#'), which is never sent to a server, got %q", path)
	}
	u, err := parsePath(path)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return fmt.Errorf("is not a valid URL path (%w), got %q", err, path)
	}
	if err := CheckQuery(u.RawQuery); err != nil {
		return fmt.Errorf("%w, got %q", err, path)
	}
	return nil
}

// CheckQuery reports what makes a URL's query unsendable as written: a
// space or a control character (a request line cannot carry one: a server
// answers 400), or an invalid percent escape. It is sent as written, so it
// must be escaped already.
func CheckQuery(raw string) error {
	if i := strings.IndexFunc(raw, func(r rune) bool { return r <= ' ' || r == 0x7f }); i >= 0 {
		return fmt.Errorf("has a query holding a space or control character (%q), which no request line may carry: write it escaped (%%20 for a space)",
			raw[i:i+1])
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] == '%' && (i+2 >= len(raw) || !isHex(raw[i+1]) || !isHex(raw[i+2])) {
			return fmt.Errorf("has a query with an invalid percent escape (%q): write a literal %% as %%25", raw[i:min(i+3, len(raw))])
		}
	}
	return nil
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// joinDeduped appends path to base, dropping the longest run of base's last
// segments that path starts with; a trailing slash of path is kept (the
// path is sent as written).
func joinDeduped(base, path string) string {
	b := segments(base)
	q := strings.Split(strings.Trim(path, "/"), "/")
	if k := overlap(b, q); k > 0 {
		b = b[:len(b)-k]
	}
	joined := "/" + strings.Join(append(b, q...), "/")
	if strings.HasSuffix(path, "/") && !strings.HasSuffix(joined, "/") {
		joined += "/"
	}
	return joined
}

// trimOverlap is base less the longest run of its last segments that path
// starts with: the base a request joins its route to.
func trimOverlap(base, path string) string {
	b := segments(base)
	b = b[:len(b)-overlap(b, segments(path))]
	if len(b) == 0 {
		return ""
	}
	return "/" + strings.Join(b, "/")
}

// segments are path's segments, none for an empty or root path.
func segments(path string) []string {
	s := strings.Split(strings.Trim(path, "/"), "/")
	if s[0] == "" && len(s) == 1 {
		return nil
	}
	return s
}

// overlap is the length of the longest run of b's last segments that q
// starts with.
func overlap(b, q []string) int {
	for k := min(len(b), len(q)); k > 0; k-- {
		if slices.Equal(b[len(b)-k:], q[:k]) {
			return k
		}
	}
	return 0
}

// mergeQuery merges add's parameters into base's as AIPerf does: a key add
// has replaces every value base has of it, where base had it first, with
// add's values in their order; base's other parameters keep their values
// and order, repeated ones included; add's new keys follow. Both are kept
// as escaped (keys are compared unescaped).
func mergeQuery(base, add string) string {
	if add == "" {
		return base
	}
	if base == "" {
		return add
	}
	addPairs := strings.Split(add, "&")
	replaced := map[string]bool{}
	for _, kv := range addPairs {
		replaced[queryKey(kv)] = true
	}
	var out []string
	done := map[string]bool{}
	emit := func(key string) {
		for _, kv := range addPairs {
			if kv != "" && queryKey(kv) == key {
				out = append(out, kv)
			}
		}
		done[key] = true
	}
	for _, kv := range strings.Split(base, "&") {
		switch k := queryKey(kv); {
		case kv == "":
		case !replaced[k]:
			out = append(out, kv)
		case !done[k]:
			emit(k)
		}
	}
	for _, kv := range addPairs {
		if k := queryKey(kv); kv != "" && !done[k] {
			emit(k)
		}
	}
	return strings.Join(out, "&")
}

// queryKey is a query parameter's key, unescaped when it can be.
func queryKey(kv string) string {
	k, _, _ := strings.Cut(kv, "=")
	if u, err := url.QueryUnescape(k); err == nil {
		return u
	}
	return k
}
