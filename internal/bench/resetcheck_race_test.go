package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/servermetrics"
)

// timed is req sent at sent ns whose first response arrived at first ns.
func timed(index, p int, cached *int, sent, first int64) metrics.Record {
	r := req(index, p, cached)
	r.SentNs, r.ResponseNs, r.EndNs = sent, metrics.StampsOf(first), first+10
	return r
}

// TestCheckResetCopiesInFlight: several requests with the same prompt in
// flight at once, and a later copy reaching the server first (a client
// short of CPU), warm the cache for the "first" one. Such a first request
// proves nothing either way; one whose next copy was sent after its reply
// began still does.
func TestCheckResetCopiesInFlight(t *testing.T) {
	recs := []metrics.Record{
		// Prompt 0: issued first, but copy 5 was sent before its reply
		// began and reached the server first: a hit, and no evidence.
		timed(0, 0, n(96), 100, 900),
		timed(5, 0, n(0), 150, 800),
		// Prompt 1: lowest index, but sent after index 6: send order counts.
		timed(1, 1, n(0), 300, 1000),
		timed(6, 1, n(100), 200, 700),
		// Prompt 2: the next copy was sent after the reply began: evidence.
		timed(2, 2, n(0), 120, 500),
		timed(7, 2, n(100), 600, 1200),
	}
	verdict, detail := checkReset(recs, true, "a hint")
	assert.Equal(t, result.ResetVerified, verdict, detail)
	assert.Contains(t, detail, "1 prompts sent for the first time after the reset, none served from the prefix cache")
	assert.Contains(t, detail, "2 more not judged")

	// A real miss of the reset still shows: prompt 2 hit on a first
	// request no other copy overlapped.
	recs[4] = timed(2, 2, n(100), 120, 500)
	verdict, detail = checkReset(recs, true, "a hint")
	assert.Equal(t, result.ResetNotCleared, verdict)
	assert.Contains(t, detail, "1 of 1 prompts were served from the prefix cache")

	// When every first request overlapped another copy, cached_tokens
	// cannot tell, and does not claim the server reports none.
	verdict, detail = checkReset(recs[:4], true, "a hint")
	assert.Equal(t, result.ResetUnverifiable, verdict)
	assert.Contains(t, detail, "either may have reached the server first")
	assert.NotContains(t, detail, "--enable-prompt-tokens-details")

	// Shared prefixes: the run's first request is judged as it is (its
	// followers hold other prompts, whose shared part is not half of it).
	verdict, _ = checkReset(recs[:2], false, "a hint")
	assert.Equal(t, result.ResetNotCleared, verdict)
}

// TestWarmCacheCopiesInFlight: without a reset, a first request overlapped
// by another copy of its prompt does not make the cache "warm at the start".
func TestWarmCacheCopiesInFlight(t *testing.T) {
	recs := []metrics.Record{timed(0, 0, n(96), 100, 900), timed(1, 0, n(0), 150, 800)}
	assert.Empty(t, warmCache(recs, true))
}

// TestVerifyResetCountersDecide: the server's counters say cold, the
// cached_tokens of the run's first request say warm, and another request
// in flight may have caused that hit (prompts sharing prefixes, the second
// sent before the first's reply began): one verdict, the counters'.
func TestVerifyResetCountersDecide(t *testing.T) {
	coldEv := servermetrics.Evidence{Verdict: servermetrics.EvidenceCold,
		Detail: "0 of 5120 prompt tokens looked up in the first 0.01 s after the reset were served from the prefix cache"}
	warmEv := servermetrics.Evidence{Verdict: servermetrics.EvidenceWarm, Detail: "5000 of 5120 prompt tokens ..."}
	// The second request was sent at 150, before the first's reply began
	// at 900: it may have reached the server first.
	recs := []metrics.Record{timed(0, 0, n(96), 100, 900), timed(1, 1, n(0), 150, 800)}
	contested := firstHits(recs, false)
	assert.Equal(t, firsts{checked: 1, hits: 1, contested: 1, firsts: 1}, contested)
	newCell := func(f firsts) *cell {
		c := &cell{p: plan.NewProfile(), run: &result.Run{}}
		a := &c.run.Audit
		a.KVReset, a.KVResetDetail = resetVerdict(f, false, c.p.ResetHint(), "")
		a.KVResetEvidence = []string{result.EvidenceCachedTokens}
		return c
	}

	c := newCell(contested)
	c.joinServerEvidence([]servermetrics.Evidence{coldEv}, contested, false)
	a := c.run.Audit
	assert.Equal(t, result.ResetVerified, a.KVReset)
	assert.Equal(t, []string{result.EvidenceServerCounters}, a.KVResetEvidence)
	assert.Contains(t, a.KVResetDetail, coldEv.Detail)
	assert.Contains(t, a.KVResetDetail, "the cached_tokens usage of the first request after the reset showed prefix-cache hits")
	assert.Contains(t, a.KVResetDetail, "ambiguous")
	assert.Contains(t, a.KVResetDetail, "the second request was sent before the reply to the first began")
	assert.NotContains(t, a.KVResetDetail, "the cache was not cleared")

	// One endpoint warm: the cache was not cleared, whatever the other says.
	c = newCell(contested)
	c.joinServerEvidence([]servermetrics.Evidence{coldEv, warmEv}, contested, false)
	assert.Equal(t, result.ResetNotCleared, c.run.Audit.KVReset)

	// Counters without evidence (mixed, none) leave cached_tokens' verdict.
	c = newCell(contested)
	c.joinServerEvidence([]servermetrics.Evidence{{Verdict: servermetrics.EvidenceMixed}}, contested, false)
	assert.Equal(t, result.ResetNotCleared, c.run.Audit.KVReset)
	assert.Contains(t, c.run.Audit.KVResetDetail, "the first request after the reset was served from the prefix cache")
}
