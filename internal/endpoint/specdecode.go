package endpoint

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"

	"github.com/aiperf-go/aiperf/internal/metrics"
)

// wireMetrics is the response-root "metrics" object of vLLM (with
// --per-request-spec-decode-metrics): its speculative_decoding member is
// the request's acceptance. In a stream it rides the trailing usage frame.
type wireMetrics struct {
	SpecDecoding json.RawMessage `json:"speculative_decoding"`
}

// vllmSpecDecode is vLLM's per-request acceptance object: the histogram
// dense (index j: the verify steps that accepted j draft tokens) or keyed
// by j, the per-step arrays only at its "detailed" level.
type vllmSpecDecode struct {
	MeanAcceptanceLength   *float64        `json:"mean_acceptance_length"`
	DraftAcceptanceRate    *float64        `json:"draft_acceptance_rate"`
	AcceptanceHistogram    json.RawMessage `json:"acceptance_histogram"`
	NumAcceptedDraftTokens *int            `json:"num_accepted_draft_tokens"`
	NumDraftTokens         *int            `json:"num_draft_tokens"`
	NumSpecSteps           *int            `json:"num_spec_steps"`
	NumSpecTokens          *int            `json:"num_spec_tokens"`
	PerStepAccepted        []int           `json:"per_step_accepted"`
	PerStepDrafted         []int           `json:"per_step_drafted"`
}

// maxSpecTokens bounds a histogram's draft counts: no drafter proposes
// more tokens in one step.
const maxSpecTokens = 1 << 12

// specDecode is the chunk's speculative-decoding acceptance, nil when it
// has none or the object is not a consistent acceptance (AIPerf's adapter
// degrades a malformed one to none): counts that are not non-negative
// integers, a rate outside 0–1, a histogram whose steps or accepted tokens
// do not add up to the totals, more accepted than proposed drafts, or
// per-step arrays that do not reconcile with them.
func (w *wireChunk) specDecode() *metrics.SpecDecode {
	if w.Metrics == nil || len(w.Metrics.SpecDecoding) == 0 || isNull(w.Metrics.SpecDecoding) {
		return nil
	}
	var v vllmSpecDecode
	if json.Unmarshal(w.Metrics.SpecDecoding, &v) != nil {
		return nil
	}
	return v.acceptance()
}

func (v *vllmSpecDecode) acceptance() *metrics.SpecDecode {
	if v.MeanAcceptanceLength == nil || v.DraftAcceptanceRate == nil || v.NumAcceptedDraftTokens == nil ||
		v.NumDraftTokens == nil || v.NumSpecSteps == nil {
		return nil
	}
	sd := &metrics.SpecDecode{Engine: "vllm", MeanAcceptanceLength: *v.MeanAcceptanceLength,
		DraftAcceptanceRate: *v.DraftAcceptanceRate, NumAcceptedDraftTokens: *v.NumAcceptedDraftTokens,
		NumDraftTokens: *v.NumDraftTokens, NumSpecSteps: *v.NumSpecSteps, NumSpecTokens: v.NumSpecTokens,
		PerStepAccepted: v.PerStepAccepted, PerStepDrafted: v.PerStepDrafted}
	hist, dense, ok := histogram(v.AcceptanceHistogram)
	switch {
	case !ok, !nonNegative(sd.NumAcceptedDraftTokens, sd.NumDraftTokens, sd.NumSpecSteps),
		v.NumSpecTokens != nil && (*v.NumSpecTokens < 0 || dense >= 0 && dense != *v.NumSpecTokens+1),
		!(sd.DraftAcceptanceRate >= 0 && sd.DraftAcceptanceRate <= 1),
		math.IsNaN(sd.MeanAcceptanceLength) || sd.MeanAcceptanceLength < 0 || sd.MeanAcceptanceLength > maxSpecTokens+1,
		sd.NumAcceptedDraftTokens > sd.NumDraftTokens, !reconciles(sd, hist):
		return nil
	}
	if len(hist) > 0 {
		sd.AcceptanceHistogram = hist
	}
	return sd
}

// histogram reads a dense array or a {"j": steps} object; dense is the
// array's length, -1 for an object or none. Zero counts are left out.
func histogram(raw json.RawMessage) (h map[int]int, dense int, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || isNull(raw) {
		return nil, -1, true
	}
	h = map[int]int{}
	if raw[0] == '[' {
		var counts []int
		if json.Unmarshal(raw, &counts) != nil || len(counts) > maxSpecTokens+1 || !nonNegative(counts...) {
			return nil, 0, false
		}
		for j, n := range counts {
			if n > 0 {
				h[j] = n
			}
		}
		return h, len(counts), true
	}
	var keyed map[string]int
	if json.Unmarshal(raw, &keyed) != nil {
		return nil, 0, false
	}
	for k, n := range keyed {
		j, err := strconv.Atoi(k)
		if err != nil || j < 0 || j > maxSpecTokens || n < 0 {
			return nil, 0, false
		}
		if n > 0 {
			h[j] += n
		}
	}
	return h, -1, true
}

// reconciles checks the histogram and the per-step arrays against the
// totals: the steps and the accepted tokens they count, each step
// accepting no more than it drafted.
func reconciles(sd *metrics.SpecDecode, hist map[int]int) bool {
	if hist != nil {
		steps, accepted := 0, 0
		for j, n := range hist {
			steps, accepted = steps+n, accepted+j*n
		}
		if steps != sd.NumSpecSteps || accepted != sd.NumAcceptedDraftTokens {
			return false
		}
	}
	if sd.PerStepAccepted == nil && sd.PerStepDrafted == nil {
		return true
	}
	if len(sd.PerStepAccepted) != sd.NumSpecSteps || len(sd.PerStepDrafted) != sd.NumSpecSteps {
		return false
	}
	accepted, drafted := 0, 0
	for i, a := range sd.PerStepAccepted {
		d := sd.PerStepDrafted[i]
		if a < 0 || a > d {
			return false
		}
		accepted, drafted = accepted+a, drafted+d
	}
	return accepted == sd.NumAcceptedDraftTokens && drafted == sd.NumDraftTokens
}

// nonNegative reports whether every n is a count.
func nonNegative(ns ...int) bool {
	for _, n := range ns {
		if n < 0 {
			return false
		}
	}
	return true
}
