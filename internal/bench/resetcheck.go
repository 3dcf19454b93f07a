package bench

import (
	"fmt"
	"slices"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/servermetrics"
)

// checkReset verifies a KV-cache reset from the server's own accounting
// instead of trusting its 2xx: after the reset, the first request of every
// prompt cannot be served from the prefix cache, so a server reporting
// prompt_tokens_details.cached_tokens for at least half of such a prompt did
// not clear it (vLLM reports success while busy blocks or an offload tier
// stay warm; a stale cache from an identically seeded earlier cell is the
// classic symptom). Warmup requests count: they are the first after the reset.
//
// That holds when the prompts share nothing (independent: synthetic
// single-turn prompts). Prompts of a trace, of sessions re-sending their
// history or behind a shared system prompt share prefixes by design, so a
// later prompt may hit legitimately: then only the very first request sent
// after the reset is checked.
// hint says what commonly keeps the server's cache warm through a reset.
func checkReset(records []metrics.Record, independent bool, hint string) (verdict, detail string) {
	checked, hits := firstHits(records, independent)
	switch {
	case checked == 0:
		return result.ResetUnverifiable, "the server reports no prompt_tokens_details.cached_tokens " +
			"(vLLM: --enable-prompt-tokens-details; SGLang: --enable-cache-report), so the reset could not be checked"
	case hits > 0 && !independent:
		return result.ResetNotCleared, "the first request after the reset was served from the prefix cache: the cache was not cleared (" + hint + ")"
	case hits > 0:
		return result.ResetNotCleared, fmt.Sprintf("%d of %d prompts were served from the prefix cache on their first "+
			"request after the reset: the cache was not cleared (%s)", hits, checked, hint)
	case !independent:
		return result.ResetVerified, "the first request after the reset was not served from the prefix cache (its prompts share prefixes, so only the first is evidence)"
	}
	return result.ResetVerified, fmt.Sprintf("%d prompts sent for the first time after the reset, none served from the prefix cache", checked)
}

// firstHits counts, over each prompt's first request (the lowest issue
// index; when the prompts are not independent, only the very first request
// of the run), those whose server reported cached tokens (checked) and
// those served from the prefix cache for at least half their prompt (hits).
func firstHits(records []metrics.Record, independent bool) (checked, hits int) {
	// Positions in records, which are not copied.
	first := map[int]int{}
	for i := range records {
		key := records[i].Prompt
		if !independent {
			key = 0
		}
		if j, ok := first[key]; !ok || records[i].Index < records[j].Index {
			first[key] = i
		}
	}
	for _, i := range first {
		r := &records[i]
		if !r.OK() || !r.Usage.Trusted() || r.Usage.CachedTokens == nil {
			continue
		}
		checked++
		prompt := r.Usage.PromptTokens
		if prompt == 0 {
			prompt = r.InputTokens
		}
		if prompt > 0 && 2*(*r.Usage.CachedTokens) >= prompt {
			hits++
		}
	}
	return checked, hits
}

// warmCache is the warning of a run without a KV-cache reset whose prompts
// were served from the server's prefix cache on their first request: the
// cache held them before the run (an earlier run with the same seed, or
// other traffic), so TTFT measured cache hits. "" when nothing shows it.
func warmCache(records []metrics.Record, independent bool) string {
	checked, hits := firstHits(records, independent)
	const why = ": the server's prefix cache held them before the run (an earlier run with the same seed?), " +
		"so TTFT measures cache hits; --reset-kv-cache clears it before the load (docs/control-hooks.md)"
	switch {
	case hits == 0:
		return ""
	case !independent:
		return "prefix cache warm at the start: the run's first request was served from the prefix cache" + why
	}
	return fmt.Sprintf("prefix cache warm at the start: %d of %d prompts were served from the prefix cache on their "+
		"first request%s", hits, checked, why)
}

// verifyReset joins the two kinds of evidence about the KV-cache reset: the
// server's cached-token usage of the first requests (checkReset) and its
// scraped prefix-cache counters (servermetrics.ResetEvidence). Either one
// showing a warm cache means not cleared; either one showing a cold cache,
// without the other contradicting it, means verified. The audit records
// which evidence the verdict rests on.
func (c *cell) verifyReset(records []metrics.Record) {
	a := &c.run.Audit
	independent := c.independentPrompts()
	a.KVReset, a.KVResetDetail = checkReset(records, independent, c.p.ResetHint())
	if a.KVReset != result.ResetUnverifiable {
		a.KVResetEvidence = append(a.KVResetEvidence, result.EvidenceCachedTokens)
	}
	var evs []servermetrics.Evidence
	if c.run.Server != nil {
		// Hits in the first scrape interval after the reset prove a warm
		// cache only when every request of that interval was the first
		// of an independent prompt.
		evs = servermetrics.ResetEvidence(c.run.Server, c.run.Server.Span,
			func(until int64) bool { return independent && firstSendsOnly(records, until) })
	}
	for _, ev := range evs {
		a.ServerResetEvidence = append(a.ServerResetEvidence, ev.Verdict+": "+ev.Detail)
		switch ev.Verdict {
		case servermetrics.EvidenceWarm:
			if a.KVReset != result.ResetNotCleared {
				a.KVReset, a.KVResetDetail = result.ResetNotCleared, "the server's prefix-cache counters: "+ev.Detail+
					": the cache was not cleared ("+c.p.ResetHint()+")"
			}
		case servermetrics.EvidenceCold:
			if a.KVReset == result.ResetUnverifiable {
				a.KVReset, a.KVResetDetail = result.ResetVerified, "the server's prefix-cache counters: "+ev.Detail
			}
		default:
			continue
		}
		if !slices.Contains(a.KVResetEvidence, result.EvidenceServerCounters) {
			a.KVResetEvidence = append(a.KVResetEvidence, result.EvidenceServerCounters)
		}
	}
	if a.KVReset == result.ResetNotCleared {
		a.Warnings = append(a.Warnings, "kv cache reset: "+a.KVResetDetail)
	}
}

// firstSendsOnly reports whether every request sent up to t (on the run's
// clock) sent a prompt no earlier request had.
func firstSendsOnly(records []metrics.Record, t int64) bool {
	seen := map[int]bool{}
	for _, r := range records {
		if r.SentNs == 0 || r.SentNs > t {
			continue
		}
		if seen[r.Prompt] {
			return false
		}
		seen[r.Prompt] = true
	}
	return true
}
