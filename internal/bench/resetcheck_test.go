package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/result"
)

// req is a successful record of prompt p with the server's cached-token
// count (nil: not reported).
func req(index, p int, cached *int) metrics.Record {
	return metrics.Record{Index: index, Prompt: p, InputTokens: 100,
		Usage: &metrics.Usage{PromptTokens: 100, CachedTokens: cached}}
}

func n(v int) *int { return &v }

func TestCheckResetVerified(t *testing.T) {
	// Prompts 0 and 1 are new after the reset; their repeats hit the cache,
	// as they should. Records arrive out of issue order.
	recs := []metrics.Record{req(2, 0, n(100)), req(0, 0, n(0)), req(1, 1, n(16)), req(3, 1, n(100))}
	verdict, detail := checkReset(recs, true, "a hint")
	assert.Equal(t, result.ResetVerified, verdict)
	assert.Contains(t, detail, "2 prompts sent for the first time after the reset, none served from the prefix cache")
}

func TestCheckResetNotCleared(t *testing.T) {
	recs := []metrics.Record{req(0, 0, n(0)), req(1, 1, n(96)), req(2, 2, n(100))}
	verdict, detail := checkReset(recs, true, "a hint")
	assert.Equal(t, result.ResetNotCleared, verdict)
	assert.Contains(t, detail, "2 of 3 prompts were served from the prefix cache on their first request after the reset")
}

func TestCheckResetUnverifiable(t *testing.T) {
	failed := req(0, 0, n(100))
	failed.Error = &metrics.Error{Type: "HTTPError", Code: 500}
	recs := []metrics.Record{failed, req(1, 1, nil), {Index: 2, Prompt: 2}}
	verdict, detail := checkReset(recs, true, "a hint")
	assert.Equal(t, result.ResetUnverifiable, verdict, "failed requests, no usage and no cached_tokens prove nothing")
	assert.Contains(t, detail, "--enable-prompt-tokens-details")
}

func TestCheckResetWithSharedPrefixesLooksAtTheFirstRequest(t *testing.T) {
	// A trace's later prompts share prefixes with earlier ones: their hits
	// are no evidence; only the first request sent after the reset is.
	recs := []metrics.Record{req(1, 1, n(96)), req(0, 0, n(0)), req(2, 2, n(100))}
	verdict, detail := checkReset(recs, false, "a hint")
	assert.Equal(t, result.ResetVerified, verdict)
	assert.Contains(t, detail, "only the first is evidence")

	recs[1] = req(0, 0, n(80))
	verdict, detail = checkReset(recs, false, "a hint")
	assert.Equal(t, result.ResetNotCleared, verdict)
	assert.Contains(t, detail, "the first request after the reset was served from the prefix cache")
}

func TestFirstSendsOnly(t *testing.T) {
	sent := func(p int, at int64) metrics.Record { return metrics.Record{Prompt: p, SentNs: at} }
	recs := []metrics.Record{sent(0, 10), sent(1, 20), sent(0, 30), {Prompt: 1}}
	assert.True(t, firstSendsOnly(recs, 25), "prompts 0 and 1, each once, by t=25")
	assert.False(t, firstSendsOnly(recs, 30), "prompt 0 again at t=30: its hits are legitimate")
}

// Without a reset, prompts served from the cache on their first request
// mean the cache was warm before the run: a warning, not a verdict.
func TestWarmCache(t *testing.T) {
	cold := []metrics.Record{req(0, 0, n(0)), req(1, 1, n(16)), req(2, 0, n(100))}
	assert.Empty(t, warmCache(cold, true), "repeats may hit; first requests did not")
	assert.Empty(t, warmCache([]metrics.Record{req(0, 0, nil)}, true), "no cached_tokens: nothing shows it")

	warm := []metrics.Record{req(0, 0, n(0)), req(1, 1, n(96)), req(2, 2, n(100))}
	w := warmCache(warm, true)
	assert.Contains(t, w, "prefix cache warm at the start: 2 of 3 prompts were served from the prefix cache on their first request")
	assert.Contains(t, w, "--reset-kv-cache")

	assert.Empty(t, warmCache(warm, false), "shared prefixes: only the run's first request is evidence, and it missed")
	warm[0] = req(0, 0, n(90))
	assert.Contains(t, warmCache(warm, false), "the run's first request was served from the prefix cache")
}

// TestCheckResetUnverifiableSaysWhy: the verdict names the real reason a
// reset could not be checked, not a server flag that was never missing.
func TestCheckResetUnverifiableSaysWhy(t *testing.T) {
	failed := func(i int) metrics.Record {
		r := req(i, i, nil)
		r.Error = &metrics.Error{Type: "HTTPError", Code: 500}
		return r
	}
	dropped := func(i int, why string) metrics.Record {
		r := req(i, i, nil)
		r.Usage.CacheDropped = why
		return r
	}
	untrusted := req(0, 0, n(0))
	untrusted.Usage.Untrusted = "prompt_tokens is negative"
	for name, tc := range map[string]struct {
		recs []metrics.Record
		want string
	}{
		"every request failed": {[]metrics.Record{failed(0), failed(1), failed(2)},
			"no request succeeded after the reset (the first request of each of the 3 prompts failed), so the reset could not be checked"},
		"cached_tokens out of range": {[]metrics.Record{dropped(0, "1000 cached tokens, more than the 100 prompt tokens"), failed(1)},
			"the server's cached_tokens values were invalid and dropped (1000 cached tokens, more than the 100 prompt tokens), so the reset could not be checked"},
		"cached_tokens not a count": {[]metrics.Record{dropped(0, "a cached token count that is negative")},
			"the server's cached_tokens values were invalid and dropped (a cached token count that is negative)"},
		"usage invalid": {[]metrics.Record{untrusted},
			"the server's usage counts were invalid and not used (prompt_tokens is negative), so the reset could not be checked"},
	} {
		t.Run(name, func(t *testing.T) {
			verdict, detail := checkReset(tc.recs, true, "a hint")
			assert.Equal(t, result.ResetUnverifiable, verdict)
			assert.Contains(t, detail, tc.want)
			assert.NotContains(t, detail, "--enable-prompt-tokens-details", "no server flag is missing")
		})
	}
}
