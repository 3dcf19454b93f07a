package bench

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

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
	return resetVerdict(firstHits(records, independent), independent, hint, "")
}

// resetVerdict is checkReset's verdict on the first requests' evidence;
// server is --server ("" when not given).
func resetVerdict(f firsts, independent bool, hint, server string) (verdict, detail string) {
	switch {
	case f.checked == 0 && f.overlapped > 0:
		return result.ResetUnverifiable, fmt.Sprintf("each of the %d prompts had its next request sent before the reply to its "+
			"first request after the reset began, so either may have reached the server first: cached_tokens cannot check the reset",
			f.overlapped)
	case f.checked == 0 && f.failed > 0 && f.failed == f.firsts:
		return result.ResetUnverifiable, fmt.Sprintf("no request succeeded after the reset (the first request of each of the %d "+
			"prompts failed), so the reset could not be checked", f.firsts)
	case f.checked == 0 && f.dropped != "":
		return result.ResetUnverifiable, "the server's cached_tokens values were invalid and dropped (" + f.dropped +
			"), so the reset could not be checked"
	case f.checked == 0 && f.untrusted != "":
		return result.ResetUnverifiable, "the server's usage counts were invalid and not used (" + f.untrusted +
			"), so the reset could not be checked"
	case f.checked == 0:
		return result.ResetUnverifiable, "the server reports no prompt_tokens_details.cached_tokens (" + cachedTokensHint(server) +
			"), so the reset could not be checked"
	case f.hits > 0 && !independent:
		return result.ResetNotCleared, "the first request after the reset was served from the prefix cache: the cache was not cleared (" + hint + ")"
	case f.hits > 0:
		return result.ResetNotCleared, fmt.Sprintf("%d of %d prompts were served from the prefix cache on their first "+
			"request after the reset: the cache was not cleared (%s)", f.hits, f.checked, hint)
	case !independent:
		return result.ResetVerified, "the first request after the reset was not served from the prefix cache (its prompts share prefixes, so only the first is evidence)"
	}
	detail = fmt.Sprintf("%d prompts sent for the first time after the reset, none served from the prefix cache", f.checked)
	if f.overlapped > 0 {
		detail += fmt.Sprintf("; %d more not judged: their next request was sent before the reply to the first began, "+
			"so either may have reached the server first", f.overlapped)
	}
	return result.ResetVerified, detail
}

// cachedTokensHint says how a server reports cached_tokens: the flag that
// turns it on, or what it reports instead.
func cachedTokensHint(server string) string {
	const (
		vllm   = "vLLM: --enable-prompt-tokens-details"
		sglang = "SGLang: --enable-cache-report"
	)
	switch server {
	case "vllm":
		return vllm
	case "sglang":
		return sglang
	case "llamacpp":
		// tools/server/server-task.cpp: usage_json_oaicompat in newer
		// builds, only timings.cache_n before.
		return "llama.cpp: older llama-server builds report the prompt tokens they reused only as timings.cache_n, " +
			"which aiperf does not read; newer ones report cached_tokens"
	}
	return vllm + "; " + sglang
}

// firsts is what the first requests of the prompts show: how many were
// judged (the server reported their cached tokens), how many of those were
// served from the prefix cache for at least half their prompt, and how many
// were not judged because another request with the same prompt overlapped.
// contested counts the hits that another request in flight may have
// caused: of prompts sharing prefixes, the run's first request hit while
// the second was sent before its reply began (it may have reached the
// server first and cached the shared prefix). The other hits are
// unambiguous: nothing the run sent could have put them in the cache.
// Of the first requests not judged, failed counted those that failed (of
// firsts, the prompts), and dropped and untrusted say why the server's
// counts of the first one that could not be read were not used (its
// cached tokens invalid, its usage invalid), "" when none.
type firsts struct {
	checked, hits, overlapped, contested, failed, firsts int
	dropped, untrusted                                   string
}

// firstHits judges each prompt's first request (when the prompts are not
// independent, only the very first request of the run). The first is the
// first sent, and, of independent prompts, it is evidence only when no
// other request with the same prompt could have reached the server before
// it: when the next one was sent before the first's reply began, their
// prefills may have overlapped (several copies of a prompt in flight at
// once, and a later copy reaching the server first on a client short of
// CPU), so it is counted as overlapped, neither hit nor miss. (The very
// first request of prompts that share prefixes is judged as it is: the
// others hold different prompts, whose shared part is not half of it.)
func firstHits(records []metrics.Record, independent bool) (f firsts) {
	// Positions in records, which are not copied: each prompt's first and
	// next request in send order (next -1: none).
	type pair struct{ first, next int }
	order := map[int]pair{}
	for i := range records {
		key := records[i].Prompt
		if !independent {
			key = 0
		}
		p, ok := order[key]
		switch {
		case !ok:
			p = pair{i, -1}
		case sentEarlier(&records[i], &records[p.first]):
			p = pair{i, p.first}
		case p.next < 0 || sentEarlier(&records[i], &records[p.next]):
			p.next = i
		}
		order[key] = p
	}
	f.firsts = len(order)
	for _, p := range order {
		r := &records[p.first]
		if !f.readable(r) {
			continue
		}
		if independent && p.next >= 0 && overlaps(r, &records[p.next]) {
			f.overlapped++
			continue
		}
		f.checked++
		prompt := r.Usage.PromptTokens
		if prompt == 0 {
			prompt = r.InputTokens
		}
		if prompt > 0 && 2*(*r.Usage.CachedTokens) >= prompt {
			f.hits++
			if !independent && p.next >= 0 && overlaps(r, &records[p.next]) {
				f.contested++
			}
		}
	}
	return f
}

// readable reports whether r, a prompt's first request, carries a cached
// token count it can be judged by; when not, it counts why in f.
func (f *firsts) readable(r *metrics.Record) bool {
	switch {
	case !r.OK():
		f.failed++
	case r.Usage != nil && !r.Usage.Trusted():
		f.untrusted = cmp.Or(f.untrusted, r.Usage.Untrusted)
	case r.Usage != nil && r.Usage.CachedTokens == nil && r.Usage.CacheDropped != "":
		f.dropped = cmp.Or(f.dropped, r.Usage.CacheDropped)
	default:
		return r.Usage != nil && r.Usage.CachedTokens != nil
	}
	return false
}

// sentEarlier orders records by send stamp, then issue index; a record
// never sent (SentNs 0) comes after every sent one.
func sentEarlier(a, b *metrics.Record) bool {
	switch {
	case (a.SentNs == 0) != (b.SentNs == 0):
		return b.SentNs == 0
	case a.SentNs != b.SentNs:
		return a.SentNs < b.SentNs
	}
	return a.Index < b.Index
}

// overlaps reports whether next, sent after first, was sent before first's
// reply began (its first response, else its end), so that next may have
// reached the server first. Without send stamps (records built without
// them) nothing overlaps.
func overlaps(first, next *metrics.Record) bool {
	if next.SentNs == 0 {
		return false
	}
	began := first.ResponseNs.First()
	if began == 0 {
		began = first.EndNs
	}
	return began == 0 || next.SentNs < began
}

// warmCache is the warning of a run without a KV-cache reset whose prompts
// were served from the server's prefix cache on their first request: the
// cache held them before the run (an earlier run with the same seed, or
// other traffic), so TTFT measured cache hits. "" when nothing shows it.
func warmCache(records []metrics.Record, independent bool) string {
	f := firstHits(records, independent)
	const why = ": the server's prefix cache held them before the run (an earlier run with the same seed?), " +
		"so TTFT measures cache hits; --reset-kv-cache clears it before the load (docs/control-hooks.md)"
	switch {
	case f.hits == 0:
		return ""
	case !independent:
		return result.WarnCacheWarm + ": the run's first request was served from the prefix cache" + why
	}
	return fmt.Sprintf("%s: %d of %d prompts were served from the prefix cache on their first request%s",
		result.WarnCacheWarm, f.hits, f.checked, why)
}

// verifyReset joins the two kinds of evidence about the KV-cache reset: the
// server's cached-token usage of the first requests (checkReset) and its
// scraped prefix-cache counters (servermetrics.ResetEvidence). Either one
// showing a warm cache means not cleared, with one exception: when every
// endpoint's counters saw a cold cache, they decide over a cached_tokens hit
// that another request in flight may have caused (prompts that share
// prefixes, the second sent before the first's reply began: which reached
// the server first is the client's guess, the counters are the server's
// count). A hit nothing in flight could have caused (firstHits already
// leaves out first requests overlapped by a copy of their prompt) stays not
// cleared: counters that saw no hit did not see that request (another
// replica behind a load balancer, a tier they do not count), and the
// detail says so. Either one showing a cold cache, without the other
// contradicting it, means verified. The audit records which evidence the
// verdict rests on.
func (c *cell) verifyReset(records []metrics.Record) {
	a := &c.run.Audit
	independent := c.independentPrompts()
	f := firstHits(records, independent)
	a.KVReset, a.KVResetDetail = resetVerdict(f, independent, c.p.ResetHint(), c.p.Server)
	if a.KVReset != result.ResetUnverifiable {
		a.KVResetEvidence = append(a.KVResetEvidence, result.EvidenceCachedTokens)
	}
	var (
		evs         []servermetrics.Evidence
		implausible []string
	)
	if c.run.Server != nil {
		// Hits in the first scrape interval after the reset prove a warm
		// cache only when every request of that interval was the first
		// of an independent prompt.
		evs = servermetrics.ResetEvidence(c.run.Server, c.run.Server.Span,
			func(until int64) bool { return independent && firstSendsOnly(records, until) })
		implausible = distrustCounters(evs, records, phaseEnd(c.run.Server))
	}
	c.joinServerEvidence(evs, f, independent)
	if a.KVReset == result.ResetUnverifiable && len(implausible) > 0 {
		a.KVResetDetail += "; the server's prefix-cache counters cannot be right: " + strings.Join(implausible, "; ")
	}
	if a.KVReset == result.ResetNotCleared {
		a.Warnings = append(a.Warnings, "kv cache reset: "+a.KVResetDetail)
	}
}

// distrustCounters checks each endpoint's prefix-cache counters against
// what the client sent before they are used: every request that completed
// between two scrapes had its prompt looked up between them (a server
// counts a prompt when it schedules it, or at the latest when it finishes
// it), so the counters must count at least the prompt tokens of those
// requests. Counters that count fewer than half of them (half of an even
// share among the endpoints with counters, when there are several: a
// request reached one of them) count something else or lost counts: a
// cold verdict on them would verify a reset on no evidence ("0 of 3 prompt
// tokens looked up" while 550-token prompts were sent), so it becomes no
// evidence (EvidenceNone). A warm or mixed one stands: its hits are real
// whatever share of the traffic the counters saw (a replica behind a load
// balancer that the reset did not reach). Half leaves room for tokenizers and
// chat templates that count differently, not for a tenfold error. The
// windows checked are the first interval that saw lookups and the whole
// window to phaseEndNs (0: not known); one with no request completed in it
// checks nothing. It returns why, for each endpoint it distrusts.
func distrustCounters(evs []servermetrics.Evidence, records []metrics.Record, phaseEndNs int64) (why []string) {
	endpoints := 0
	for _, ev := range evs {
		if ev.Source != "" {
			endpoints++
		}
	}
	for i := range evs {
		ev := &evs[i]
		if ev.Verdict != servermetrics.EvidenceCold {
			continue // hits are hits, whatever share of the traffic the counters saw
		}
		windows := []struct {
			to      int64
			queries float64
			what    string
		}{
			{ev.ToNs, ev.Queries, fmt.Sprintf("in the first %.2f s after the reset", float64(ev.ToNs-ev.FromNs)/1e9)},
			{phaseEndNs, ev.PhaseQueries, "from the reset to the end of the phase"},
		}
		for _, w := range windows {
			tokens, requests := completedPrompts(records, ev.FromNs, w.to)
			if tokens == 0 || 2*float64(endpoints)*w.queries >= float64(tokens) {
				continue
			}
			share := "half"
			if endpoints > 1 {
				share = fmt.Sprintf("half of a 1/%d share", endpoints)
			}
			reason := fmt.Sprintf("%s counted %g prompt tokens looked up (%s) %s, fewer than %s of the %d prompt tokens "+
				"of the %d requests that completed in that time", ev.Endpoint, w.queries, ev.Source, w.what, share, tokens, requests)
			ev.Verdict = servermetrics.EvidenceNone
			ev.Detail = reason + ", so its counters are no evidence (they counted: " + ev.Detail + ")"
			why = append(why, reason)
			break
		}
	}
	return why
}

// completedPrompts sums the client's prompt tokens of the successful
// requests sent at or after from that ended by to (to ≤ 0: none).
func completedPrompts(records []metrics.Record, from, to int64) (tokens, requests int) {
	if to <= 0 {
		return 0, 0
	}
	for i := range records {
		r := &records[i]
		if !r.OK() || r.SentNs < from || r.EndNs <= 0 || r.EndNs > to {
			continue
		}
		if n := r.ClientCounted().InputTokens; n > 0 {
			tokens += n
			requests++
		}
	}
	return tokens, requests
}

// phaseEnd is when the phase ResetEvidence reads (the span) ended, on the
// run's clock; 0 when not known.
func phaseEnd(r *servermetrics.Result) int64 {
	for _, p := range r.Phases {
		if p.Name == r.Span && p.EndNs > 0 {
			return p.EndNs
		}
	}
	return 0
}

// joinServerEvidence joins the endpoints' prefix-cache counters to the
// cached_tokens verdict f gave (see verifyReset).
func (c *cell) joinServerEvidence(evs []servermetrics.Evidence, f firsts, independent bool) {
	a := &c.run.Audit
	cold := 0
	for _, ev := range evs {
		a.ServerResetEvidence = append(a.ServerResetEvidence, ev.Verdict+": "+ev.Detail)
		switch ev.Verdict {
		case servermetrics.EvidenceWarm:
			if a.KVReset != result.ResetNotCleared {
				a.KVReset, a.KVResetDetail = result.ResetNotCleared, "the server's prefix-cache counters: "+ev.Detail+
					": the cache was not cleared ("+c.p.ResetHint()+")"
			}
		case servermetrics.EvidenceCold:
			cold++
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
	if cold == 0 || cold < len(evs) || a.KVReset != result.ResetNotCleared || f.hits == 0 {
		return
	}
	// Every endpoint's counters say cold; only cached_tokens says warm.
	counters := evs[0].Detail
	if len(evs) > 1 {
		counters = fmt.Sprintf("all %d endpoints; %s: %s", len(evs), evs[0].Endpoint, evs[0].Detail)
	}
	if f.contested == 0 {
		// A hit nothing in flight could have caused: counters that saw no
		// hit did not see that request (another replica, a tier they do
		// not count), and cannot prove the absence of what they missed.
		a.KVResetDetail = unseenHits(f, independent, counters, c.p.ResetHint())
		a.KVResetEvidence = []string{result.EvidenceCachedTokens}
		return
	}
	a.KVReset = result.ResetVerified
	a.KVResetDetail = "the server's prefix-cache counters: " + counters + "; the cached_tokens usage of the first request " +
		"after the reset showed prefix-cache hits, which the counters contradict: that client-side evidence is ambiguous " +
		"(the prompts share prefixes and the second request was sent before the reply to the first began, so it may have " +
		"reached the server first and cached the shared prefix), so the counters decide"
	a.KVResetEvidence = []string{result.EvidenceServerCounters}
}

// unseenHits is the detail of a reset not cleared by the cached_tokens of
// first requests that nothing else in flight could have warmed, although
// every endpoint's prefix-cache counters (counters) saw a cold cache.
func unseenHits(f firsts, independent bool, counters, hint string) string {
	which := fmt.Sprintf("%d of %d prompts were served from the prefix cache on their first request after the reset "+
		"(their replies' cached_tokens), with nothing else in flight that could have warmed them", f.hits, f.checked)
	if !independent {
		which = "the run's first request after the reset was served from the prefix cache (its reply's cached_tokens), " +
			"with nothing else in flight that could have warmed it"
	}
	return which + ", but the server's prefix-cache counters saw a cold cache (" + counters + "): those counters did " +
		"not see the requests that hit, so they prove nothing about where those were served: the cache was not cleared " +
		"(likely several replicas behind one URL, such as a load balancer, and the reset and /metrics reached only some " +
		"of them: reset every replica, e.g. give each replica's URL with --url, and point --server-metrics at each " +
		"replica's /metrics; other causes: " + hint + ")"
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
