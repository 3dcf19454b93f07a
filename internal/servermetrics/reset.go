package servermetrics

import (
	"fmt"
	"math"
)

// Verdicts of ResetEvidence.
const (
	EvidenceCold  = "cold"  // the first lookups after the reset hit nothing
	EvidenceWarm  = "warm"  // at least half of them hit: the reset did not clear the cache
	EvidenceMixed = "mixed" // some hit: shared prefixes, a repeated prompt or a partial reset
	EvidenceNone  = "none"  // no prefix-cache counters, or no lookup to judge by
)

// Evidence is what one server endpoint's prefix-cache counters say about
// a KV-cache reset.
type Evidence struct {
	Endpoint string `json:"endpoint"` // redacted URL
	Source   string `json:"source"`   // the counters read, "hits / queries"
	// FromNs is the reset mark's scrape (without one: the phase's begin
	// mark), ToNs the first scrape after it that saw prefix-cache lookups,
	// on the run's clock.
	FromNs int64 `json:"from_ns"`
	ToNs   int64 `json:"to_ns"`
	// Hits and Queries are prompt tokens served from the prefix cache and
	// looked up in it between FromNs and ToNs.
	Hits    float64 `json:"hits"`
	Queries float64 `json:"queries"`
	// PhaseHits and PhaseQueries run from FromNs to the phase's end.
	PhaseHits    float64 `json:"phase_hits"`
	PhaseQueries float64 `json:"phase_queries"`
	Verdict      string  `json:"verdict"`
	Detail       string  `json:"detail"`
}

// ResetEvidence reads each server endpoint's prefix-cache counters from
// the reset (the PhaseReset mark, made right after the reset hook; without
// one, the begin of phase) to the first scrape that saw lookups, and on to
// the end of phase. It needs the collecting process's samples: a Result
// read back from JSON gives none.
//
// What it proves: the counters count prompt tokens, per engine, since the
// server started, so their deltas over the window are exactly what the
// server looked up and found between two scrapes. Right after a reset the
// cache holds nothing, and a prompt the run has not sent yet cannot hit
// anything the run put there: when the prompts of the first interval share
// no prefix (independent synthetic prompts), a hit can only come from
// content cached before the reset, so Hits ≥ half of Queries (warm) shows
// the reset did not clear the cache. Hits = 0 (cold) shows the looked-up
// prefixes were not cached — consistent with a cleared cache, though it
// says nothing of prefixes no one looked up. The first interval holds every
// request that reached the server within one scrape interval; under high
// concurrency it may hold prompts that share a prefix (a shared system
// prompt, a repeated prompt, a trace), which hit legitimately: between 0
// and half (mixed) is not evidence either way, and neither is a warm first
// interval unless firstSends (nil: assumed) says every request sent by its
// end, a run-clock time, was the first of an independent prompt. Servers
// without such counters (llama.cpp before prompt_tokens_cached_total,
// TensorRT-LLM) give EvidenceNone.
func ResetEvidence(r *Result, phase string, firstSends func(untilNs int64) bool) []Evidence {
	if r.timeline == nil {
		return nil
	}
	pi := -1
	for i, p := range r.Phases {
		if p.Name == phase {
			pi = i
			break
		}
	}
	if pi < 0 {
		return nil
	}
	var out []Evidence
	for ei, b := range r.timeline.endpoints {
		if r.Endpoints[ei].Source != SourceServer {
			continue
		}
		ev := Evidence{Endpoint: r.Endpoints[ei].URL, Verdict: EvidenceNone}
		names, ok := lookupFamilies(func(name string) bool { return b.fams[name] != nil })
		from, to, found := r.timeline.resetWindow(r.Phases, pi, ei, b)
		switch {
		case !ok:
			ev.Detail = "the server exposes no prefix-cache counters, so the reset cannot be checked from them"
		case !found:
			ev.Detail = "no scrape of the endpoint bounds the reset and the " + phase + " phase"
		default:
			ev.Source = names.String()
			ev.judge(b, names, from, to, phase, firstSends)
		}
		out = append(out, ev)
	}
	return out
}

// resetWindow is the retained scrapes from the reset (or phase pi's begin)
// to phase pi's end on endpoint ei.
func (tl *timeline) resetWindow(phases []Phase, pi, ei int, b *endpointBuf) (from, to int, ok bool) {
	begin, end := int64(-1), int64(-1)
	for _, m := range tl.marks {
		switch {
		case m.ep != ei:
		case phases[m.phase].Name == PhaseReset && m.begin && m.t <= phases[pi].BeginNs:
			begin = m.t // the last reset before the phase
		case m.phase == pi && m.begin && begin < 0:
			begin = m.t
		case m.phase == pi && !m.begin:
			end = m.t
		}
	}
	if begin < 0 || len(b.times) == 0 {
		return 0, 0, false
	}
	from = b.at(begin)
	to = len(b.times) - 1
	if end >= 0 {
		to = b.at(end)
	}
	return from, to, to >= from
}

// judge reads the counters over [from, to] and gives the verdict.
func (ev *Evidence) judge(b *endpointBuf, names lookupNames, from, to int, phase string, firstSends func(int64) bool) {
	hits := cumulative(b, names.hits, from, to)
	queries := cumulative(b, names.queries, from, to)
	if names.plusHits {
		for i := range queries {
			queries[i] += hits[i]
		}
	}
	first := len(queries) - 1
	for i, q := range queries {
		if q > 0 {
			first = i
			break
		}
	}
	ev.FromNs, ev.ToNs = b.times[from], b.times[from+first]
	ev.Hits, ev.Queries = hits[first], queries[first]
	ev.PhaseHits, ev.PhaseQueries = hits[len(hits)-1], queries[len(queries)-1]
	secs := float64(ev.ToNs-ev.FromNs) / 1e9
	switch {
	case ev.Queries == 0:
		ev.Verdict, ev.Detail = EvidenceNone, "no prefix-cache lookup between the reset and the end of "+phase
		return
	case ev.Hits == 0:
		ev.Verdict = EvidenceCold
	case 2*ev.Hits >= ev.Queries:
		ev.Verdict = EvidenceWarm
	default:
		ev.Verdict = EvidenceMixed
	}
	ev.Detail = fmt.Sprintf("%g of %g prompt tokens looked up in the first %.2f s after the reset were served from the prefix cache "+
		"(%s); %g of %g through the end of %s", ev.Hits, ev.Queries, secs, ev.Source, ev.PhaseHits, ev.PhaseQueries, phase)
	if ev.Verdict == EvidenceWarm && firstSends != nil && !firstSends(ev.ToNs) {
		ev.Verdict = EvidenceMixed
		ev.Detail += " (the requests of that interval repeat prompts or share prefixes, so their hits prove nothing)"
	}
}

// cumulative is a counter family's increase from scrape from to each
// scrape up to to, summed over its label sets.
func cumulative(b *endpointBuf, name string, from, to int) []float64 {
	out := make([]float64, to-from+1)
	for _, s := range b.order {
		if s.fam.name != name || s.vals == nil {
			continue
		}
		var total float64
		prev := math.NaN()
		for i := from; i <= to; i++ {
			if v := s.vals[i]; !math.IsNaN(v) {
				if !math.IsNaN(prev) || i > from {
					total += rise(zeroNaN(prev), v)
				}
				prev = v
			}
			out[i-from] += total
		}
	}
	return out
}

func zeroNaN(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return v
}
