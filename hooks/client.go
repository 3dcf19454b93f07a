package hooks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

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
	timeout                   time.Duration // per attempt; <= 0 means none
	retryBudget               time.Duration // measured from the first attempt
	retry                     bool
}

// post sends one control POST (with retries when t.retry) and returns its
// Call, with an error naming the origin, path and cause.
func (c *Client) post(ctx context.Context, t target) (Call, error) {
	base := strings.TrimRight(t.origin, "/")
	start := c.now()
	// A path's query may carry a credential (?token=): recorded redacted,
	// as the origin, and redacted where a reply or an error quotes it.
	redact := c.redact
	if qs := plan.QuerySecrets(t.path); len(qs) > 0 {
		redact = plan.NewRedactor(slices.Concat(plan.HeaderSecrets(c.headers), qs)...)
	}
	call := Call{Hook: t.hook, Phase: t.phase, Origin: plan.RedactURL(base), Path: plan.RedactURL(t.path), StartedAt: start.UnixNano()}
	deadline := start.Add(t.retryBudget)
	backoff := firstBackoff
	var err error
	for {
		call.Attempts++
		call.Status, call.Warning, err = c.attempt(ctx, base+t.path, t.timeout, redact)
		if err == nil || !t.retry || !retryable(call.Status) || ctx.Err() != nil {
			break
		}
		if !c.now().Add(backoff).Before(deadline) {
			break
		}
		if serr := c.sleep(ctx, backoff); serr != nil {
			err = fmt.Errorf("interrupted before retrying (%w): %w", err, serr)
			break
		}
		backoff = min(2*backoff, maxBackoff)
	}
	call.DurationMs = float64(c.now().Sub(start)) / float64(time.Millisecond)
	call.OK = err == nil
	if err != nil {
		// A transport error can quote what the server sent (a broken
		// status line echoing the request, say).
		call.Error = redact.Redact(err.Error())
		attempts := ""
		if call.Attempts > 1 {
			attempts = fmt.Sprintf(" (after %d attempts)", call.Attempts)
		}
		return call, redact.Error(fmt.Errorf("POST %s%s: %w%s", call.Origin, call.Path, err, attempts))
	}
	return call, nil
}

// attempt makes one POST with an empty body. It returns the status (0 when
// no answer arrived) and, for a 2xx, a warning when the body is a JSON object
// with "success": false (see readReply). A non-2xx error ends with a short,
// redacted excerpt of the answer.
func (c *Client) attempt(ctx context.Context, rawURL string, timeout time.Duration, redact *plan.Redactor) (int, string, error) {
	actx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		actx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, rawURL, http.NoBody)
	if err != nil {
		return 0, "", fmt.Errorf("build request: %w", err)
	}
	req.Header = c.headers.Clone()
	resp, err := c.http.Do(req)
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
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxBodyRead))
	warning, detail := readReply(resp.StatusCode, body, redact)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		if detail != "" {
			detail = ": " + detail
		}
		return resp.StatusCode, "", fmt.Errorf("status %d %s%s", resp.StatusCode, http.StatusText(resp.StatusCode), detail)
	}
	return resp.StatusCode, warning, nil
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
