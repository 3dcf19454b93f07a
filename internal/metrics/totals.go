package metrics

import "math"

// AIPerf's aggregate totals and timestamps.
const (
	TagTotalOutputTokens      = "total_output_tokens"
	TagTotalReasoningTokens   = "total_reasoning_tokens"
	TagTotalUsagePromptTokens = "total_usage_prompt_tokens"
	TagTotalUsageCompletion   = "total_usage_completion_tokens"
	TagTotalUsageTotalTokens  = "total_usage_total_tokens"
	TagMinRequestTimestamp    = "min_request_timestamp"
	TagMaxResponseTimestamp   = "max_response_timestamp"
	TagRequestErrorRate       = "request_error_rate"
	UnitNs                    = "ns"
)

var (
	defTotalOutputTokens    = def{TagTotalOutputTokens, "Total Output Tokens", UnitTokens}
	defTotalReasoning       = def{TagTotalReasoningTokens, "Total Reasoning Tokens", UnitTokens}
	defTotalUsagePrompt     = def{TagTotalUsagePromptTokens, "Total Usage Prompt Tokens", UnitTokens}
	defTotalUsageCompletion = def{TagTotalUsageCompletion, "Total Usage Completion Tokens", UnitTokens}
	defTotalUsageTotal      = def{TagTotalUsageTotalTokens, "Total Usage Total Tokens", UnitTokens}
	defMinRequest           = def{TagMinRequestTimestamp, "Minimum Request Timestamp", UnitNs}
	defMaxResponse          = def{TagMaxResponseTimestamp, "Maximum Response Timestamp", UnitNs}
	defErrorRate            = def{TagRequestErrorRate, "Request Error Rate", UnitPercent}
)

// totals accumulates AIPerf's aggregate token totals (over successful
// requests; the usage ones over trusted server usage) and the wall-clock
// span of the requests (all of them, as AIPerf's timestamps).
type totals struct {
	output, reasoning            int
	tokens                       bool // a successful request produced output tokens
	usagePrompt, usageCompletion int
	usageTotal                   int
	usage                        bool
	firstSend, lastEnd           int64 // wall clock, ns
	wall                         bool
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
		t.output += r.OutputTokens
		t.reasoning += r.ReasoningTokens
		t.tokens = true
	}
	if u := r.Usage; u.Trusted() {
		t.usagePrompt += u.PromptTokens
		t.usageCompletion += u.CompletionTokens
		t.usageTotal += u.TotalTokens
		t.usage = true
	}
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
		scalar(defTotalUsagePrompt, float64(t.usagePrompt))
		scalar(defTotalUsageCompletion, float64(t.usageCompletion))
		scalar(defTotalUsageTotal, float64(t.usageTotal))
	}
	if t.wall {
		scalar(defMinRequest, float64(t.firstSend))
		scalar(defMaxResponse, float64(t.lastEnd))
	}
	if ok+failed > 0 {
		scalar(defErrorRate, 100*float64(failed)/float64(ok+failed))
	}
}
