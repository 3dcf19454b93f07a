package metrics

import (
	"math"
	"slices"
)

// AIPerf's run-level figures that are neither a record metric's
// distribution nor a plain total: the input (prefill) side of the token
// throughput, and the E2E normalized interactivity (InferenceX's Pareto
// x-axis). Both are exported only (no console group).
const (
	TagInputTokenThroughput = "input_token_throughput"
	TagE2EInteractivityP75  = "e2e_normalized_interactivity_p75"
	TagE2EInteractivityP90  = "e2e_normalized_interactivity_p90"
)

var (
	defInputThroughput   = def{TagInputTokenThroughput, "Input Token Throughput", UnitTokensPerSec}
	defE2EInteractivityP = [...]struct {
		def
		p float64
	}{
		{def{TagE2EInteractivityP75, "E2E Normalized Interactivity p75", UnitPerUser}, 75},
		{def{TagE2EInteractivityP90, "E2E Normalized Interactivity p90", UnitPerUser}, 90},
	}
)

// interactivity collects the seconds each successful request took per
// output token (request latency over OSL), AIPerf's per-request ratio
// behind e2e_normalized_interactivity_pNN.
type interactivity struct {
	ratios []float64
	// streamed: some request has a time to first token; AIPerf then
	// keeps only requests whose TTFT is positive (the column's filter).
	streamed bool
	pending  []interactivityRow
}

// interactivityRow is one request's figures before the run-wide filter.
type interactivityRow struct {
	latencyNs, ttftNs int64
	osl, isl          int
	streamed          bool
}

// add notes r, a successful request of a run with streaming as given.
func (x *interactivity) add(r *Record, streaming bool) {
	if r.NoTokens || !OSLKnown(r) {
		return
	}
	t := Times(r, streaming)
	x.streamed = x.streamed || t.Streamed
	x.pending = append(x.pending, interactivityRow{latencyNs: t.LatencyNs, ttftNs: t.TTFTNs, osl: t.OSL,
		isl: r.InputTokens, streamed: t.Streamed})
}

// scalars emits e2e_normalized_interactivity_p75 and _p90: for each, one
// over the numpy (linear) percentile of the kept requests' seconds per
// output token, so that p90 is the token rate of the slow tail
// (1 / p90(latency / OSL), not p90(OSL / latency)). A request is kept when
// its latency, OSL and input length are positive, and its TTFT too when
// the run measured TTFT. Nothing when no request is kept.
func (x *interactivity) scalars(scalar func(def, float64)) {
	for _, row := range x.pending {
		if row.latencyNs <= 0 || row.osl <= 0 || row.isl <= 0 || x.streamed && (!row.streamed || row.ttftNs <= 0) {
			continue
		}
		if ratio := float64(row.latencyNs) / 1e9 / float64(row.osl); !math.IsInf(ratio, 0) {
			x.ratios = append(x.ratios, ratio)
		}
	}
	if len(x.ratios) == 0 {
		return
	}
	slices.Sort(x.ratios)
	for _, d := range defE2EInteractivityP {
		p := percentile(x.ratios, d.p)
		if v := 1 / p; p > 0 && !math.IsInf(v, 0) {
			scalar(d.def, v)
		}
	}
}
