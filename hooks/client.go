package hooks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// Hook names recorded in Call.Hook.
const (
	HookReset         = "reset_kv_cache"
	HookProfilerStart = "profiler_start"
	HookProfilerStop  = "profiler_stop"
)

const (
	firstBackoff = time.Second
	maxBackoff   = 8 * time.Second
	maxBodyRead  = 64 << 10 // bytes of an answer read before the connection is closed
)

// Client sends control-plane POSTs. It holds no per-run state and is safe
// for concurrent use.
type Client struct {
	http    *http.Client
	headers http.Header
	redact  *plan.Redactor // the secrets among headers, never recorded
	// users are the credentials of the --urls that carry them, by origin
	// (scheme://host[:port] as plan.Profile.Origins spells it): sent as
	// Basic auth to that origin, as the inference requests send them.
	users map[string]*url.Userinfo
	// userSecrets are those credentials as plan.URLSecrets spells them.
	userSecrets []string

	// now and sleep are the clock; tests replace them to skip real backoff.
	now   func() time.Time
	sleep func(context.Context, time.Duration) error
}

// New returns a Client that sends headers (see Headers) with every POST. Its
// transport is its own: it shares no connections with the benchmark pool,
// ignores HTTP(S)_PROXY, does not follow redirects and opens a fresh
// connection per POST, since control calls are minutes apart. The values of
// secret headers (plan.HeaderSecrets) never reach a Call or an error, even
// when a server echoes them back.
func New(headers http.Header) *Client {
	return &Client{
		http: &http.Client{
			Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true, TLSHandshakeTimeout: 10 * time.Second},
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		},
		headers: headers.Clone(),
		redact:  plan.NewRedactor(plan.HeaderSecrets(headers)...),
		now:     time.Now,
		sleep:   sleepContext,
	}
}

// WithURLCredentials makes c send, to the origin of each of urls that
// carries a user (http://user:pass@host), that user as Basic auth, as the
// inference requests and the readiness probes send it, unless an
// Authorization header is already sent (an API key's Bearer wins, as it
// does for them). The user and password are secrets: never recorded,
// logged or put into an error. It returns c.
func (c *Client) WithURLCredentials(urls []string) *Client {
	for _, raw := range urls {
		u, err := url.Parse(plan.NormalizeURL(raw))
		if err != nil || u.User == nil {
			continue
		}
		if c.users == nil {
			c.users = map[string]*url.Userinfo{}
		}
		if key := u.Scheme + "://" + u.Host; c.users[key] == nil {
			c.users[key] = u.User
		}
		c.userSecrets = append(c.userSecrets, plan.URLSecrets(raw)...)
	}
	if len(c.users) > 0 {
		c.redact = plan.NewRedactor(c.secrets()...)
	}
	return c
}

// secrets are c's secrets: those of its headers and its URL credentials
// (see plan.Profile.Secrets).
func (c *Client) secrets() []string {
	return slices.Concat(plan.HeaderSecrets(c.headers), c.userSecrets)
}

// do sends req with c's headers and, to an origin with credentials, its
// Basic auth.
func (c *Client) do(req *http.Request) (*http.Response, error) {
	req.Header = c.headers.Clone()
	if u := c.users[req.URL.Scheme+"://"+req.URL.Host]; u != nil && req.Header.Get("Authorization") == "" {
		pw, _ := u.Password()
		req.SetBasicAuth(u.Username(), pw)
	}
	return c.http.Do(req)
}

// Headers are the headers control calls send for p: its --header values
// plus Authorization: Bearer <api key>, as AIPerf sends them (the same as its
// readiness probes).
func Headers(p plan.Profile) http.Header {
	h := http.Header{}
	for _, kv := range plan.ExpandHeaders(p.Header) {
		k, v, _ := strings.Cut(kv, ":")
		h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	if p.EndpointType == plan.EndpointMessages {
		// Anthropic's scheme: x-api-key and a required anthropic-version
		// (a --header of the user's wins), as AIPerf sends them.
		if h.Get("Anthropic-Version") == "" {
			h.Set("Anthropic-Version", plan.AnthropicVersion)
		}
		if p.APIKey != "" {
			h.Set("X-Api-Key", p.APIKey)
		}
		return h
	}
	if p.APIKey != "" {
		h.Set("Authorization", "Bearer "+p.APIKey)
	}
	return h
}

// Reset POSTs h.Path to every origin, one after the other, and returns the
// calls it made. Transport errors and 409, 423, 429 and 503 answers are
// retried with a backoff of 1 s doubling to 8 s while the next attempt would
// start within h.MaxRetry of the first (0 means one attempt); h.Timeout
// bounds each attempt. The first origin that fails aborts the reset: the
// remaining origins are not contacted and the error names the failing origin,
// path and cause. A disabled hook does nothing.
func (c *Client) Reset(ctx context.Context, origins []string, h plan.ResetHook) ([]Call, error) {
	if !h.Enabled {
		return nil, nil
	}
	var calls []Call
	for _, origin := range origins {
		if h.Slots {
			erased, err := c.resetSlots(ctx, origin, h)
			calls = append(calls, erased...)
			if err != nil {
				return calls, fmt.Errorf("reset kv cache: %w", err)
			}
			continue
		}
		for _, path := range h.Paths {
			call, err := c.post(ctx, target{hook: HookReset, origin: origin, path: path,
				timeout: h.Timeout, retryBudget: h.MaxRetry, retry: true})
			calls = append(calls, call)
			if err != nil && call.Status == http.StatusNotFound {
				hint := h.Missing
				if h.Guessed {
					hint = c.presetHint(ctx, origin, h.Timeout)
				}
				if hint != "" {
					err = fmt.Errorf("%w; %s", err, hint)
				}
			}
			if err != nil {
				return calls, fmt.Errorf("reset kv cache: %w", err)
			}
		}
	}
	return calls, nil
}

// target is one control POST to make.
type target struct {
	hook, phase, origin, path string
	timeout                   time.Duration // per attempt; never none: at least minTimeout
	retryBudget               time.Duration // measured from the first attempt
	retry                     bool
}

// minTimeout is the least time an attempt gets. A positive timeout setting
// too small for a time.Duration arrives as 0, which must still bound the
// call (at once), never mean "no timeout".
const minTimeout = time.Nanosecond

// attemptTimeout is the timeout an attempt gets for a setting of d.
func attemptTimeout(d time.Duration) time.Duration { return max(d, minTimeout) }

// errNotSent marks a call whose request was never sent because it cannot
// be built (its path cannot be sent as written): a retry would fail the
// same way, and nothing reached the server.
var errNotSent = errors.New("not sent")

// post sends one control POST (with retries when t.retry) and returns its
// Call, with an error naming the origin, path and cause. A path that cannot
// be sent as written (plan.CheckHookPath) fails at once: nothing is sent.
func (c *Client) post(ctx context.Context, t target) (Call, error) {
	base := strings.TrimRight(t.origin, "/")
	start := c.now()
	// A path's query may carry a credential (?token=): recorded redacted,
	// as the origin, and redacted where a reply or an error quotes it.
	redact := c.redact
	if qs := plan.QuerySecrets(t.path); len(qs) > 0 {
		redact = plan.NewRedactor(slices.Concat(c.secrets(), qs)...)
	}
	call := Call{Hook: t.hook, Phase: t.phase, Origin: escapeControls(plan.RedactURL(base)),
		Path: escapeControls(plan.RedactURL(t.path)), StartedAt: start.UnixNano()}
	err := c.send(ctx, t, start.Add(t.retryBudget), redact, &call)
	call.DurationMs = float64(c.now().Sub(start)) / float64(time.Millisecond)
	call.OK = err == nil
	if err != nil {
		// A transport error can quote what the server sent (a broken
		// status line echoing the request, say).
		call.Error = escapeControls(redact.Redact(err.Error()))
		attempts := ""
		if call.Attempts > 1 {
			attempts = fmt.Sprintf(" (after %d attempts)", call.Attempts)
		}
		return call, redact.Error(fmt.Errorf("POST %s%s: %w%s", call.Origin, call.Path, err, attempts))
	}
	return call, nil
}

// send makes t's attempts, retrying while the next one would start before
// deadline, records them in call and returns the last attempt's error. A
// path that cannot be sent makes no attempt.
func (c *Client) send(ctx context.Context, t target, deadline time.Time, redact *plan.Redactor, call *Call) error {
	if err := plan.CheckHookPath(t.path); err != nil {
		return fmt.Errorf("%w: its path %w", errNotSent, err)
	}
	base := strings.TrimRight(t.origin, "/")
	backoff := firstBackoff
	for {
		call.Attempts++
		var err error
		call.Status, call.Warning, err = c.attempt(ctx, base+t.path, t.timeout, redact)
		if err != nil && call.Status == 0 && !unsent(err) {
			call.Unanswered++
			call.UnansweredAt = c.now().UnixNano()
		}
		if err == nil || !t.retry || !retryable(call.Status) || errors.Is(err, errNotSent) || ctx.Err() != nil {
			return err
		}
		if !c.now().Add(backoff).Before(deadline) {
			return err
		}
		if serr := c.sleep(ctx, backoff); serr != nil {
			return fmt.Errorf("interrupted before retrying (%w): %w", err, serr)
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// attempt makes one POST with an empty body. It returns the status (0 when
// no answer arrived) and, for a 2xx, a warning when the body is a JSON object
// with "success": false (see readReply). A non-2xx error ends with a short,
// redacted excerpt of the answer. A 2xx whose body does not arrive whole
// (within the timeout, at most maxBodyRead bytes) fails: what it says is
// unknown. A request that cannot be built wraps errNotSent.
func (c *Client) attempt(ctx context.Context, rawURL string, timeout time.Duration, redact *plan.Redactor) (int, string, error) {
	timeout = attemptTimeout(timeout)
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, rawURL, http.NoBody)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // the URL is already in the caller's message
		}
		return 0, "", fmt.Errorf("%w: the request cannot be built: %w", errNotSent, err)
	}
	resp, err := c.do(req)
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return 0, "", fmt.Errorf("no answer within %s: %w", timeout, context.DeadlineExceeded)
		}
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // the URL is already in the caller's message
		}
		return 0, "", err
	}
	defer resp.Body.Close()
	body, rerr := io.ReadAll(io.LimitReader(resp.Body, maxBodyRead+1))
	status := fmt.Sprintf("status %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		_, detail := readReply(resp.StatusCode, body[:min(len(body), maxBodyRead)], redact)
		if detail != "" {
			detail = ": " + detail
		}
		return resp.StatusCode, "", fmt.Errorf("%s%s", status, detail)
	}
	if err := bodyError(ctx, rerr, len(body), timeout); err != nil {
		return resp.StatusCode, "", fmt.Errorf("%s, but %w", status, err)
	}
	warning, _ := readReply(resp.StatusCode, body, redact)
	return resp.StatusCode, warning, nil
}

// bodyError says why a 2xx answer's body of n bytes (read with error rerr,
// within timeout) cannot be read: it did not finish, or it is larger than
// maxBodyRead. nil when it arrived whole.
func bodyError(ctx context.Context, rerr error, n int, timeout time.Duration) error {
	switch {
	case rerr != nil && ctx.Err() == nil && errors.Is(rerr, context.DeadlineExceeded):
		return fmt.Errorf("the reply's body did not finish within %s: %w", timeout, context.DeadlineExceeded)
	case rerr != nil:
		return fmt.Errorf("the reply's body did not finish: %w", rerr)
	case n > maxBodyRead:
		return fmt.Errorf("the reply's body is larger than %d KiB, more than a control route answers: "+
			"its {\"success\": false}, if any, cannot be read", maxBodyRead>>10)
	}
	return nil
}

// escapeControls writes every control character of s (a line break, ESC,
// DEL) as \xNN, so that a path or error quoting a flag's value stays on one
// line and cannot drive a terminal.
func escapeControls(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) {
			fmt.Fprintf(&b, `\x%02x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// unsent reports whether a failed attempt's request cannot have reached
// the server: it could not be built, or its connection was never opened.
func unsent(err error) bool {
	var oerr *net.OpError
	return errors.Is(err, errNotSent) || (errors.As(err, &oerr) && oerr.Op == "dial")
}

// retryable reports whether a failed reset attempt may be repeated: no
// answer at all (a transport error or timeout) or a "busy" status.
func retryable(status int) bool {
	switch status {
	case 0, http.StatusConflict, http.StatusLocked, http.StatusTooManyRequests, http.StatusServiceUnavailable:
		return true
	}
	return false
}

func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
