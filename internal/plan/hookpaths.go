package plan

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// MinHookTimeout is the smallest control-hook timeout accepted: a smaller
// one would round to no time at all (time.Duration counts nanoseconds), and
// a control call's timeout must never turn into none.
const MinHookTimeout = time.Millisecond

// hooks checks the control hooks: the --server preset, the routes, the
// timeouts and what the preset cannot do.
func (v *validator) hooks(p *Profile) {
	v.oneOf("server", p.Server, append([]string{""}, ServerNames...)...)
	// A --reset-kv-cache-path given empty is in the list: refused. A
	// profiler path is a plain string, whose "" is "not given".
	for _, path := range p.ResetKVCachePath {
		v.hookPath("reset_kv_cache_path", path, p.RedactParam)
	}
	if p.ServerProfilerStartPath != "" {
		v.hookPath("server_profiler_start_path", p.ServerProfilerStartPath, p.RedactParam)
	}
	if p.ServerProfilerStopPath != "" {
		v.hookPath("server_profiler_stop_path", p.ServerProfilerStopPath, p.RedactParam)
	}
	v.hookTimeout("reset_kv_cache_timeout_seconds", p.ResetKVCacheTimeoutSeconds)
	v.hookTimeout("server_profiler_timeout_seconds", p.ServerProfilerTimeoutSeconds)
	v.seconds("reset_kv_cache_max_retry_seconds", p.ResetKVCacheMaxRetrySeconds, true)
	if r := servers[p.Server].ResetRefusal; r != "" && p.ResetHook().Enabled {
		v.add("reset_kv_cache", "cannot be used with --server "+p.Server+": "+r)
	}
	if r := servers[p.Server].ProfilerRefusal; r != "" && p.ProfilerHook().Enabled {
		v.add("server_profiler", "cannot be used with --server "+p.Server+": "+r)
	}
	for _, raw := range p.URL {
		if u, err := url.Parse(NormalizeURL(raw)); err == nil && u.Scheme != "http" && u.Scheme != "https" &&
			(p.ResetHook().Enabled || p.ProfilerHook().Enabled) {
			v.add("url", fmt.Sprintf("control hooks need HTTP transport, got scheme %q", u.Scheme))
		}
	}
}

// hookPath refuses a control-hook route that cannot be sent as written.
func (v *validator) hookPath(field, path string, marked []string) {
	if err := checkHookPath(path, marked); err != nil {
		v.add(field, err.Error())
	}
}

// hookTimeout checks a control-hook timeout: greater than 0, finite, at
// most MaxSeconds, and at least MinHookTimeout once made a time.Duration.
func (v *validator) hookTimeout(field string, x *float64) {
	v.seconds(field, x, false)
	if x == nil || v.nonFinite[field] || *x <= 0 || *x > MaxSeconds {
		return // refused above, or not given
	}
	v.check(seconds(*x) >= MinHookTimeout, field, fmt.Sprintf("must be at least %g (%s): a shorter timeout rounds "+
		"to none, got %g", MinHookTimeout.Seconds(), MinHookTimeout, *x))
}

// CheckHookPath checks a control-hook route (a reset or profiler path) as
// it is sent: appended to an origin and POSTed as written. It must not be
// empty, must start with '/', must not hold a URL (://), a control
// character (a line break, DEL), a '#' (a fragment is never sent) or an
// invalid percent escape, and its query
// must be one a request line can carry (CheckQuery). The error quotes the
// path with its secret query values redacted and its control characters
// escaped, so it stays on one line.
func CheckHookPath(path string) error { return checkHookPath(path, nil) }

// checkHookPath is CheckHookPath with the names marked secret by
// --redact-param.
func checkHookPath(path string, marked []string) error {
	shown := strconv.Quote(redactURL(path, marked)) // its query may hold a credential
	if path == "" {
		return errors.New("must not be empty: give a route starting with '/' (e.g. /reset_prefix_cache), " +
			"or leave it out for the default")
	}
	if !strings.HasPrefix(path, "/") || strings.Contains(path, "://") {
		return fmt.Errorf("must be a relative path starting with '/', got %s", shown)
	}
	if i := strings.IndexFunc(path, isURLControl); i >= 0 {
		return fmt.Errorf("holds a control character (%q), which no request line can carry: remove it, "+
			"or write it percent-encoded (%%%02X), got %s", path[i:i+1], path[i], shown)
	}
	if i := strings.IndexByte(path, '#'); i >= 0 {
		return fmt.Errorf("holds a '#', where a URL's fragment starts: what follows it is never sent; "+
			"write it percent-encoded (%%23) if the route holds one, got %s", shown)
	}
	route, query, _ := strings.Cut(path, "?")
	if bad := badEscape(route); bad != "" {
		return fmt.Errorf("has an invalid percent escape (%q): write a literal %% as %%25, got %s", bad, shown)
	}
	if err := CheckQuery(query); err != nil {
		return fmt.Errorf("%w, got %s", err, shown)
	}
	if _, err := url.Parse("http://127.0.0.1" + path); err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // the URL quoted would repeat the path unredacted
		}
		return fmt.Errorf("is not a URL path (%w), got %s", err, shown)
	}
	return nil
}

// isURLControl reports the characters no URL may hold (url.Parse refuses
// them, tab included).
func isURLControl(r rune) bool { return r < ' ' || r == 0x7f }

// badEscape returns the first '%' of s not followed by two hex digits,
// with what follows it (at most 3 bytes), or "".
func badEscape(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && (i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2])) {
			return s[i:min(i+3, len(s))]
		}
	}
	return ""
}
