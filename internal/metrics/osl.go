package metrics

// AIPerf's OSL mismatch thresholds (AIPERF_METRICS_OSL_MISMATCH_PCT_THRESHOLD
// and AIPERF_METRICS_OSL_MISMATCH_MAX_TOKEN_THRESHOLD): a request whose
// output length is off the max_tokens it asked for by more than
// min(requested × 5%, 50) tokens is a mismatch.
const (
	OSLMismatchPct       = 5.0
	OSLMismatchMaxTokens = 50.0
)

// oslMismatch counts the successful requests that asked for an output
// length (max_tokens) and those of them that missed it by more than the
// threshold (osl_mismatch_count).
type oslMismatch struct {
	asked, missed int
}

func (o *oslMismatch) add(r *Record) {
	req := r.RequestedOutputTokens
	if req <= 0 || !OSLKnown(r) {
		return
	}
	o.asked++
	diff := float64(OutputSequenceLength(r) - req)
	if diff < 0 {
		diff = -diff
	}
	if diff > min(float64(req)*OSLMismatchPct/100, OSLMismatchMaxTokens) {
		o.missed++
	}
}
