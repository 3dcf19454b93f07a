package mock

import "encoding/json"

// The mock's speculative decoding (--spec-decode-stats): every verify step
// proposes specDraftWidth draft tokens and accepts the next of
// specPattern's counts, emitting them and its bonus token, until the reply
// is complete (the last step accepting no more than the reply needs).
const specDraftWidth = 4

var specPattern = [...]int{3, 1, 4, 0, 2}

// specDecoding is vLLM's per-request acceptance object
// (metrics.speculative_decoding, --per-request-spec-decode-metrics
// summary). A complete reply's steps and drafts also count in /metrics'
// vllm:spec_decode_* counters.
type specDecoding struct {
	MeanAcceptanceLength   float64 `json:"mean_acceptance_length"`
	DraftAcceptanceRate    float64 `json:"draft_acceptance_rate"`
	AcceptanceHistogram    []int   `json:"acceptance_histogram"` // dense: index j, the steps that accepted j drafts
	NumAcceptedDraftTokens int     `json:"num_accepted_draft_tokens"`
	NumDraftTokens         int     `json:"num_draft_tokens"`
	NumSpecSteps           int     `json:"num_spec_steps"`
	NumSpecTokens          int     `json:"num_spec_tokens"`
}

// newSpecDecoding is the acceptance of a reply of tokens output tokens:
// its steps plus its accepted drafts are the tokens.
func newSpecDecoding(tokens int) *specDecoding {
	sd := &specDecoding{AcceptanceHistogram: make([]int, specDraftWidth+1), NumSpecTokens: specDraftWidth,
		MeanAcceptanceLength: 1}
	for emitted := 0; emitted < tokens; sd.NumSpecSteps++ {
		a := min(specPattern[sd.NumSpecSteps%len(specPattern)], tokens-emitted-1)
		sd.AcceptanceHistogram[a]++
		sd.NumAcceptedDraftTokens += a
		emitted += a + 1
	}
	sd.NumDraftTokens = sd.NumSpecSteps * specDraftWidth
	if sd.NumSpecSteps > 0 {
		sd.MeanAcceptanceLength = 1 + float64(sd.NumAcceptedDraftTokens)/float64(sd.NumSpecSteps)
		sd.DraftAcceptanceRate = float64(sd.NumAcceptedDraftTokens) / float64(sd.NumDraftTokens)
	}
	return sd
}

// encode is the object as the wire carries it.
func (sd *specDecoding) encode() json.RawMessage {
	b, _ := json.Marshal(sd) // numbers and a slice always encode
	return b
}

// specMetrics is the response-root "metrics" object carrying it.
type specMetrics struct {
	SpeculativeDecoding json.RawMessage `json:"speculative_decoding"`
}
