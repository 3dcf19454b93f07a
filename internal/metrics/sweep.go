package metrics

// AIPerf's time-weighted ("sweep line") metrics: step functions over the
// run of how many requests were in flight (in all, in prefill, in
// decode), of the token rates they were served at and of the tokens they
// held, summarised by how long each value held. Effective: over the whole
// window, from the first send to the last end; Active: only while the
// phase the curve belongs to had a request in it.
const (
	TagEffectiveConcurrency        = "effective_concurrency"
	TagEffectiveDecodeThroughput   = "effective_decode_throughput"
	TagEffectivePrefillThroughput  = "effective_prefill_throughput"
	TagEffectiveDecodeConcurrency  = "effective_decode_concurrency"
	TagEffectivePrefillConcurrency = "effective_prefill_concurrency"
	TagEffectiveTotalThroughput    = "effective_total_throughput"
	TagEffectiveDecodePerUser      = "effective_decode_throughput_per_user"
	TagEffectivePrefillPerUser     = "effective_prefill_throughput_per_user"
	TagTokensInFlight              = "tokens_in_flight"
	TagActiveDecodeThroughput      = "active_decode_throughput"
	TagActivePrefillThroughput     = "active_prefill_throughput"
	TagActiveDecodePerUser         = "active_decode_throughput_per_user"
	TagActivePrefillPerUser        = "active_prefill_throughput_per_user"
	TagActiveTotalThroughput       = "active_total_throughput"
)

// Which curve a sweep metric summarises.
const (
	curveConcurrency = iota
	curveDecode
	curvePrefill
	curveDecodeConc
	curvePrefillConc
	curveTotal
	curveDecodePerUser
	curvePrefillPerUser
	curveTokens
	numCurves
)

// sweepDefs are the sweep metrics in AIPerf's order: the curve each
// summarises, the curve whose positive stretches it is restricted to (-1:
// the whole window) and the scale from per-ns rates to per-second ones.
var sweepDefs = [...]struct {
	def
	curve, mask int
	scale       float64
}{
	{def{TagEffectiveConcurrency, "Effective Concurrency", UnitRequests}, curveConcurrency, -1, 1},
	{def{TagEffectiveDecodeThroughput, "Effective Decode Throughput", UnitTokensPerSec}, curveDecode, -1, 1e9},
	{def{TagEffectivePrefillThroughput, "Effective Prefill Throughput", UnitTokensPerSec}, curvePrefill, -1, 1e9},
	{def{TagEffectiveDecodeConcurrency, "Effective Decode Concurrency", UnitRequests}, curveDecodeConc, -1, 1},
	{def{TagEffectivePrefillConcurrency, "Effective Prefill Concurrency", UnitRequests}, curvePrefillConc, -1, 1},
	{def{TagEffectiveTotalThroughput, "Effective Total Throughput", UnitTokensPerSec}, curveTotal, -1, 1e9},
	{def{TagEffectiveDecodePerUser, "Effective Decode Throughput Per User", UnitPerUser}, curveDecodePerUser, -1, 1e9},
	{def{TagEffectivePrefillPerUser, "Effective Prefill Throughput Per User", UnitPerUser}, curvePrefillPerUser, -1, 1e9},
	{def{TagTokensInFlight, "Tokens In Flight", UnitTokens}, curveTokens, -1, 1},
	{def{TagActiveDecodeThroughput, "Active Decode Throughput", UnitTokensPerSec}, curveDecode, curveDecodeConc, 1e9},
	{def{TagActivePrefillThroughput, "Active Prefill Throughput", UnitTokensPerSec}, curvePrefill, curvePrefillConc, 1e9},
	{def{TagActiveDecodePerUser, "Active Decode Throughput Per User", UnitPerUser}, curveDecodePerUser, curveDecodeConc, 1e9},
	{def{TagActivePrefillPerUser, "Active Prefill Throughput Per User", UnitPerUser}, curvePrefillPerUser, curvePrefillConc, 1e9},
	{def{TagActiveTotalThroughput, "Active Total Throughput", UnitTokensPerSec}, curveTotal, curveConcurrency, 1e9},
}

// TimeWeighted reports whether tag is a sweep metric, whose statistics are
// time-weighted: AIPerf exports only their avg, min, max, p50, p90, p95,
// p99 and std.
func TimeWeighted(tag string) bool {
	for _, d := range sweepDefs {
		if d.tag == tag {
			return true
		}
	}
	return false
}

// weightedStats are the statistics a time-weighted metric has: AIPerf's
// sweep-line results carry no p1…p25, p75, count nor sum ("unit" is the
// exports' field beside them).
var weightedStats = map[string]bool{"avg": true, "min": true, "max": true, "p50": true, "p90": true, "p95": true,
	"p99": true, "std": true, "unit": true}

// HasStat reports whether the distribution tag has the statistic stat
// under its JSON (AIPerf) name: every one, except that a time-weighted
// metric has only those AIPerf's sweep-line results carry. The exports,
// the store and compare ask it, so none shows, keeps or compares a
// statistic the metric does not have.
func HasStat(tag, stat string) bool { return !TimeWeighted(tag) || weightedStats[stat] }

// sweepRequest is one request as the curves see it (ns): its credit
// issued (its send when not known), sent, first token (0: none measured)
// and end; its ISL and OSL, -1 when it has none (a failed request's are
// its error_isl and nothing).
type sweepRequest struct {
	issued, start, first, end float64
	isl, osl                  float64
}

// sweepRequests are the requests of records that were not cancelled, a
// failed one too: it held its slot until it failed.
func sweepRequests(records []Record, streaming bool) []sweepRequest {
	out := make([]sweepRequest, 0, len(records))
	for i := range records {
		r := &records[i]
		if r.Cancelled || r.EndNs == 0 {
			continue
		}
		q := sweepRequest{issued: float64(r.SentNs), start: float64(r.SentNs), end: float64(r.EndNs), isl: -1, osl: -1}
		if r.IssuedNs != 0 {
			q.issued = float64(min(r.IssuedNs, r.SentNs))
		}
		if r.OK() {
			t := Times(r, streaming)
			if t.Streamed {
				q.first = float64(r.ResponseNs.First())
			}
			if !r.NoTokens || r.InputTokens > 0 {
				q.isl = float64(r.InputTokens)
			}
			if !r.NoTokens && !t.NoOSL {
				q.osl = float64(t.OSL)
			}
		}
		out = append(out, q)
	}
	return out
}

// sweepCurves builds the curves of reqs, indexed by curve*.
func sweepCurves(reqs []sweepRequest) [numCurves]step {
	var ev [numCurves][]event
	add := func(c int, from, to, v float64) { ev[c] = append(ev[c], event{from, v}, event{to, -v}) }
	for _, q := range reqs {
		add(curveConcurrency, q.start, q.end, 1)
		if q.first == 0 {
			continue
		}
		add(curveDecodeConc, q.first, q.end, 1)
		add(curvePrefillConc, q.start, q.first, 1)
		if d := q.end - q.first; q.osl >= 1 && d > 0 { // the first token came with TTFT; none: no decode
			add(curveDecode, q.first, q.end, (q.osl-1)/d)
			add(curveTotal, q.first, q.end, (q.osl-1)/d)
		}
		if d := q.first - q.start; q.isl >= 0 && d > 0 {
			add(curvePrefill, q.start, q.first, q.isl/d)
			add(curveTotal, q.start, q.first, q.isl/d)
		}
		tokensInFlight(&ev[curveTokens], q)
	}
	var out [numCurves]step
	for c, e := range ev {
		out[c] = sweep(e)
	}
	out[curveDecodePerUser] = divide(out[curveDecode], out[curveDecodeConc])
	out[curvePrefillPerUser] = divide(out[curvePrefill], out[curvePrefillConc])
	return out
}

// tokensInFlight adds q's tokens held (AIPerf's KV-cache proxy): its input
// from its send while in prefill, its output too from its first token,
// all freed at its end.
func tokensInFlight(ev *[]event, q sweepRequest) {
	prefill := q.isl >= 0 && q.first > q.start
	decode := q.osl >= 0 && q.end > q.first
	var freed float64
	if prefill {
		*ev = append(*ev, event{q.start, q.isl})
		freed += q.isl
	}
	if decode {
		*ev = append(*ev, event{q.first, q.osl})
		freed += q.osl
	}
	if prefill || decode {
		*ev = append(*ev, event{q.end, -freed})
	}
}

// sweepMetrics returns the sweep metrics of records over AIPerf's
// window: from the first credit issued (the first send when none is known)
// to the last end of the requests not cancelled; none when there is no
// such request. Every one is there then, at 0 when its curve never moved
// (a run without streaming has no prefill nor decode).
func sweepMetrics(records []Record, streaming bool) []Metric {
	reqs := sweepRequests(records, streaming)
	if len(reqs) == 0 {
		return nil
	}
	from, to := sweepWindow(reqs)
	return sweepStats(sweepCurves(reqs), from, to)
}

// sweepWindow is the window of reqs (at least one): its first credit to
// its last end.
func sweepWindow(reqs []sweepRequest) (from, to float64) {
	from, to = reqs[0].issued, reqs[0].end
	for _, q := range reqs {
		from, to = min(from, q.issued), max(to, q.end)
	}
	return from, to
}

// sweepStats summarises curves (sweepCurves) over [from, to], as
// sweepDefs says.
func sweepStats(curves [numCurves]step, from, to float64) []Metric {
	out := make([]Metric, 0, len(sweepDefs))
	for _, d := range sweepDefs {
		var st Stats
		if d.mask < 0 {
			st = timeWeighted(curves[d.curve], from, to)
		} else {
			st = activeWeighted(curves[d.curve], curves[d.mask], from, to)
		}
		st = st.scaled(d.scale)
		out = append(out, Metric{Tag: d.tag, Header: d.header, Unit: d.unit, Stats: &st})
	}
	return out
}

// scaled is st with its time-weighted statistics multiplied by k.
func (st Stats) scaled(k float64) Stats {
	return Stats{Avg: st.Avg * k, Min: st.Min * k, Max: st.Max * k, P50: st.P50 * k, P90: st.P90 * k,
		P95: st.P95 * k, P99: st.P99 * k, Std: st.Std * k}
}
