package metrics

import "math"

// AIPerf's aggregate totals and timestamps.
const (
	TagTotalOutputTokens         = "total_output_tokens"
	TagTotalReasoningTokens      = "total_reasoning_tokens"
	TagTotalUsagePromptTokens    = "total_usage_prompt_tokens"
	TagTotalUsageCompletion      = "total_usage_completion_tokens"
	TagTotalUsageTotalTokens     = "total_usage_total_tokens"
	TagTotalUsageReasoning       = "total_usage_reasoning_tokens"
	TagTotalUsageCacheRead       = "total_usage_prompt_cache_read_tokens"
	TagTotalUsageCacheWrite      = "total_usage_prompt_cache_write_tokens"
	TagTotalUsageCacheMiss       = "total_usage_prompt_cache_miss_tokens"
	TagTotalUsageAcceptedPredict = "total_usage_accepted_prediction_tokens"
	TagTotalUsageRejectedPredict = "total_usage_rejected_prediction_tokens"
	TagOverallCacheReadPct       = "overall_usage_prompt_cache_read_pct"
	TagMinRequestTimestamp       = "min_request_timestamp"
	TagMaxResponseTimestamp      = "max_response_timestamp"
	TagRequestErrorRate          = "request_error_rate"
	UnitNs                       = "ns"
)

var (
	defTotalOutputTokens    = def{TagTotalOutputTokens, "Total Output Tokens", UnitTokens}
	defTotalReasoning       = def{TagTotalReasoningTokens, "Total Reasoning Tokens", UnitTokens}
	defTotalUsagePrompt     = def{TagTotalUsagePromptTokens, "Total Usage Prompt Tokens", UnitTokens}
	defTotalUsageCompletion = def{TagTotalUsageCompletion, "Total Usage Completion Tokens", UnitTokens}
	defTotalUsageTotal      = def{TagTotalUsageTotalTokens, "Total Usage Total Tokens", UnitTokens}
	defTotalUsageReasoning  = def{TagTotalUsageReasoning, "Total Usage Reasoning Tokens", UnitTokens}
	defTotalUsageCacheRead  = def{TagTotalUsageCacheRead, "Total Usage Prompt Cache Read Tokens", UnitTokens}
	defOverallCacheRead     = def{TagOverallCacheReadPct, "Overall Usage Prompt Cache Read %", UnitPercent}
	defTotalUsageCacheWrite = def{TagTotalUsageCacheWrite, "Total Usage Prompt Cache Write Tokens", UnitTokens}
	defTotalUsageCacheMiss  = def{TagTotalUsageCacheMiss, "Total Usage Prompt Cache Miss Tokens", UnitTokens}
	defTotalUsageAccepted   = def{TagTotalUsageAcceptedPredict, "Total Usage Accepted Prediction Tokens", UnitTokens}
	defTotalUsageRejected   = def{TagTotalUsageRejectedPredict, "Total Usage Rejected Prediction Tokens", UnitTokens}
	defMinRequest           = def{TagMinRequestTimestamp, "Minimum Request Timestamp", UnitNs}
	defMaxResponse          = def{TagMaxResponseTimestamp, "Maximum Response Timestamp", UnitNs}
	defErrorRate            = def{TagRequestErrorRate, "Request Error Rate", UnitPercent}
)

// totals accumulates AIPerf's aggregate token totals (over successful
// requests; the usage ones over trusted server usage), the OSL mismatches
// and the wall-clock span of the requests (all of them, as AIPerf's
// timestamps).
type totals struct {
	output, reasoning            int
	tokens                       bool // a successful request produced output tokens
	usagePrompt, usageCompletion int
	usage                        bool
	// The optional usage counts, summed over the requests that reported
	// them (nil: none did).
	reasoningUsage, cacheRead, cacheWrite, cacheMiss, accepted, rejected, usageTotal *int
	osl                                                                              oslMismatch
	spec                                                                             specTotals
	firstSend, lastEnd                                                               int64 // wall clock, ns
	wall                                                                             bool
}

// addCount adds a reported count to a sum (nil: nothing reported yet).
func addCount(sum **int, n *int) {
	if n == nil {
		return
	}
	if *sum == nil {
		*sum = new(int)
	}
	**sum += *n
}

func (t *totals) add(r *Record) {
	if r.WallStartNs != 0 {
		if !t.wall {
			t.firstSend, t.lastEnd, t.wall = math.MaxInt64, math.MinInt64, true
		}
		t.firstSend = min(t.firstSend, r.WallStartNs)
		t.lastEnd = max(t.lastEnd, r.WallStartNs+LatencyNs(r))
	}
	if !r.OK() {
		return
	}
	if !r.NoTokens {
		// The OSL's parts (outputCounts): nothing for a reply whose OSL is
		// not known, so the totals are then a lower bound.
		output, reasoning, _ := outputCounts(r)
		t.output += output
		t.reasoning += reasoning
		t.tokens = true
	}
	if u := r.Usage; u.Trusted() {
		t.usagePrompt += u.PromptTokens
		t.usageCompletion += u.CompletionTokens
		addCount(&t.usageTotal, u.TotalTokens)
		t.usage = true
		if u.reasoningReported() {
			addCount(&t.reasoningUsage, &u.ReasoningTokens)
		}
		addCount(&t.cacheRead, u.CachedTokens)
		addCount(&t.cacheWrite, u.CacheWriteTokens)
		addCount(&t.cacheMiss, u.CacheMissTokens)
		addCount(&t.accepted, u.AcceptedPredictionTokens)
		addCount(&t.rejected, u.RejectedPredictionTokens)
	}
	if !r.NoTokens {
		t.osl.add(r)
	}
	t.spec.add(r.SpecDecode)
}

// scalars emits the totals that apply: token totals when requests produced
// tokens (reasoning only when there was any), usage totals when a server
// reported usage, the timestamps when requests were stamped, and the error
// rate (% of requests that ended in error) when any ended.
func (t *totals) scalars(scalar func(def, float64), ok, failed int) {
	if t.tokens {
		scalar(defTotalOutputTokens, float64(t.output))
		if t.reasoning > 0 {
			scalar(defTotalReasoning, float64(t.reasoning))
		}
	}
	if t.usage {
		t.usageScalars(scalar)
	}
	t.spec.scalars(scalar)
	if t.wall {
		scalar(defMinRequest, float64(t.firstSend))
		scalar(defMaxResponse, float64(t.lastEnd))
	}
	if ok+failed > 0 {
		scalar(defErrorRate, 100*float64(failed)/float64(ok+failed))
	}
}

// usageScalars emits the usage totals in AIPerf's order, each optional one
// when a request reported it, and the share of the prompt tokens read from
// the prefix cache (overall_usage_prompt_cache_read_pct: the totals'
// ratio, so a long prompt weighs more than a short one).
func (t *totals) usageScalars(scalar func(def, float64)) {
	opt := func(d def, n *int) {
		if n != nil {
			scalar(d, float64(*n))
		}
	}
	scalar(defTotalUsagePrompt, float64(t.usagePrompt))
	opt(defTotalUsageCacheRead, t.cacheRead)
	if t.cacheRead != nil && t.usagePrompt > 0 {
		scalar(defOverallCacheRead, 100*float64(*t.cacheRead)/float64(t.usagePrompt))
	}
	opt(defTotalUsageCacheWrite, t.cacheWrite)
	opt(defTotalUsageCacheMiss, t.cacheMiss)
	scalar(defTotalUsageCompletion, float64(t.usageCompletion))
	opt(defTotalUsageReasoning, t.reasoningUsage)
	opt(defTotalUsageAccepted, t.accepted)
	opt(defTotalUsageRejected, t.rejected)
	opt(defTotalUsageTotal, t.usageTotal)
}
