package metrics

import "strconv"

// Speculative-decoding acceptance metrics (AIPerf's spec_decode_metrics.py),
// from the acceptance the server reports per request.
const (
	TagSpecAcceptanceLength       = "spec_decode_acceptance_length"
	TagSpecDraftAcceptanceRate    = "spec_decode_draft_acceptance_rate"
	TagSpecAcceptedPerVerified    = "spec_decode_accepted_per_verified"
	TagSpecSteps                  = "spec_decode_steps"
	TagSpecAcceptedDraftTokens    = "spec_decode_accepted_draft_tokens"
	TagSpecDraftTokens            = "spec_decode_draft_tokens"
	TagSpecZeroStepRequests       = "spec_decode_zero_step_requests"
	TagTotalSpecSteps             = "total_spec_decode_steps"
	TagTotalSpecAcceptedDraftToks = "total_accepted_draft_tokens"
	TagTotalSpecDraftTokens       = "total_draft_tokens"
	TagSpecWeightedLength         = "spec_decode_token_weighted_acceptance_length"
	TagSpecOverallAcceptanceRate  = "spec_decode_overall_draft_acceptance_rate"

	UnitCount = "count"
)

var (
	defSpecZeroStep       = def{TagSpecZeroStepRequests, "Zero-Step Requests", UnitRequests}
	defTotalSpecSteps     = def{TagTotalSpecSteps, "Total Spec Decode Steps", UnitCount}
	defTotalAcceptedDraft = def{TagTotalSpecAcceptedDraftToks, "Total Accepted Draft Tokens", UnitTokens}
	defTotalDraft         = def{TagTotalSpecDraftTokens, "Total Draft Tokens", UnitTokens}
	defSpecWeightedLength = def{TagSpecWeightedLength, "Token-Weighted Acceptance Length", UnitRatio}
	defSpecOverallRate    = def{TagSpecOverallAcceptanceRate, "Overall Draft Acceptance Rate", UnitPercent}
)

// SpecDecode is one request's speculative-decoding acceptance as its
// server reported it, engine-neutral (AIPerf's SpecDecodeAcceptanceRecord):
// the verify steps, the draft tokens proposed and accepted (the bonus
// token of each step excluded), and how many steps accepted each number of
// draft tokens.
type SpecDecode struct {
	Engine                 string  `json:"engine"`
	MeanAcceptanceLength   float64 `json:"mean_acceptance_length"` // 1 + accepted / steps
	DraftAcceptanceRate    float64 `json:"draft_acceptance_rate"`  // accepted / draft, 0 to 1
	NumAcceptedDraftTokens int     `json:"num_accepted_draft_tokens"`
	NumDraftTokens         int     `json:"num_draft_tokens"`
	NumSpecSteps           int     `json:"num_spec_steps"`
	NumSpecTokens          *int    `json:"num_spec_tokens,omitempty"` // the most drafted per step, when fixed
	// AcceptanceHistogram maps an accepted-draft count to the steps that
	// accepted that many (zero counts left out).
	AcceptanceHistogram map[int]int `json:"acceptance_histogram,omitempty"`
	PerStepAccepted     []int       `json:"per_step_accepted,omitempty"`
	PerStepDrafted      []int       `json:"per_step_drafted,omitempty"`
}

// visitSpecDecode emits a request's acceptance metrics; a request that ran
// no verify step has none (it counts in spec_decode_zero_step_requests).
func visitSpecDecode(sd *SpecDecode, emit func(id int, v float64)) {
	if sd == nil || sd.NumSpecSteps <= 0 {
		return
	}
	emit(idSpecAcceptLength, sd.MeanAcceptanceLength)
	emit(idSpecDraftRate, 100*sd.DraftAcceptanceRate)
	if d := sd.NumDraftTokens + sd.NumSpecSteps; d > 0 {
		emit(idSpecAcceptedPerVerified, float64(sd.NumAcceptedDraftTokens+sd.NumSpecSteps)/float64(d))
	}
	emit(idSpecSteps, float64(sd.NumSpecSteps))
	emit(idSpecAcceptedDraft, float64(sd.NumAcceptedDraftTokens))
	emit(idSpecDraft, float64(sd.NumDraftTokens))
}

// specTotals pools the acceptance of a phase's successful requests.
type specTotals struct {
	seen                    bool // a request reported acceptance
	zeroStep                int
	steps, accepted, drafts int
	histogram               map[int]int
}

func (t *specTotals) add(sd *SpecDecode) {
	if sd == nil {
		return
	}
	t.seen = true
	if sd.NumSpecSteps <= 0 {
		t.zeroStep++
		return
	}
	t.steps += sd.NumSpecSteps
	t.accepted += sd.NumAcceptedDraftTokens
	t.drafts += sd.NumDraftTokens
	for k, n := range sd.AcceptanceHistogram {
		if t.histogram == nil {
			t.histogram = map[int]int{}
		}
		t.histogram[k] += n
	}
}

// scalars emits the pooled acceptance: the zero-step requests (when any),
// the totals, the token-weighted acceptance length (1 + accepted / steps)
// and the overall draft acceptance rate (accepted / drafted, %).
func (t *specTotals) scalars(scalar func(def, float64)) {
	if !t.seen {
		return
	}
	if t.zeroStep > 0 {
		scalar(defSpecZeroStep, float64(t.zeroStep))
	}
	if t.steps == 0 {
		return
	}
	scalar(defTotalSpecSteps, float64(t.steps))
	scalar(defTotalAcceptedDraft, float64(t.accepted))
	scalar(defTotalDraft, float64(t.drafts))
	scalar(defSpecWeightedLength, 1+float64(t.accepted)/float64(t.steps))
	if t.drafts > 0 {
		scalar(defSpecOverallRate, 100*float64(t.accepted)/float64(t.drafts))
	}
}

// pooled is the run's accepted-draft histogram keyed as AIPerf's JSON
// (pooled_spec_decode_acceptance_histogram), nil when none was reported.
func (t *specTotals) pooled() map[string]int {
	if len(t.histogram) == 0 {
		return nil
	}
	out := make(map[string]int, len(t.histogram))
	for k, n := range t.histogram {
		out[strconv.Itoa(k)] = n
	}
	return out
}
