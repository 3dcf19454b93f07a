package metrics

// AIPerf metric tags.
const (
	TagTTFT                    = "time_to_first_token"
	TagTTST                    = "time_to_second_token"
	TagTTFO                    = "time_to_first_output_token"
	TagRequestLatency          = "request_latency"
	TagDecodeDuration          = "decode_duration"
	TagFullDecodeDuration      = "full_decode_duration"
	TagITL                     = "inter_token_latency"
	TagFullITL                 = "full_response_inter_token_latency"
	TagICL                     = "inter_chunk_latency"
	TagPerUserThroughput       = "output_token_throughput_per_user"
	TagFullPerUser             = "full_response_output_token_throughput_per_user"
	TagE2EOutputThroughput     = "e2e_output_token_throughput"
	TagPrefillPerUser          = "prefill_throughput_per_user"
	TagOSL                     = "output_sequence_length"
	TagISL                     = "input_sequence_length"
	TagOutputTokenCount        = "output_token_count"
	TagReasoningTokenCount     = "reasoning_token_count"
	TagUsagePromptTokens       = "usage_prompt_tokens"
	TagUsageCacheReadTokens    = "usage_prompt_cache_read_tokens"
	TagUsageCacheWriteTokens   = "usage_prompt_cache_write_tokens"
	TagUsageCacheMissTokens    = "usage_prompt_cache_miss_tokens"
	TagUsageCompletionTokens   = "usage_completion_tokens"
	TagUsageReasoningTokens    = "usage_reasoning_tokens"
	TagUsageAcceptedPrediction = "usage_accepted_prediction_tokens"
	TagUsageRejectedPrediction = "usage_rejected_prediction_tokens"
	TagUsageTotalTokens        = "usage_total_tokens"
	TagUsagePromptDiffPct      = "usage_prompt_tokens_diff_pct"
	TagUsageCompletionDiffPct  = "usage_completion_tokens_diff_pct"
	TagUsageReasoningDiffPct   = "usage_reasoning_tokens_diff_pct"
	TagOSLMismatchDiffPct      = "osl_mismatch_diff_pct"
	TagSendLag                 = "send_lag" // ours: sent − scheduled
	TagErrorISL                = "error_isl"

	TagOutputTokenThroughput = "output_token_throughput"
	TagTotalTokenThroughput  = "total_token_throughput"
	TagRequestThroughput     = "request_throughput"
	TagRequestCount          = "request_count"
	TagErrorRequestCount     = "error_request_count"
	TagTotalISL              = "total_isl"
	TagTotalOSL              = "total_osl"
	TagTotalErrorISL         = "total_error_isl"
	TagBenchmarkDuration     = "benchmark_duration"
	TagUsageDiscrepancyCount = "usage_discrepancy_count"
	TagOSLMismatchCount      = "osl_mismatch_count"
	TagMalformedChunkCount   = "malformed_chunk_count" // ours: stream lines that were not a response chunk
	TagCancelledRequestCount = "cancelled_request_count"
	TagGoodput               = "goodput"
	TagGoodRequestCount      = "good_request_count"
	TagGoodRequestFraction   = "good_request_fraction"
)

// Units as AIPerf displays them.
const (
	UnitMs           = "ms"
	UnitSec          = "sec"
	UnitTokens       = "tokens"
	UnitPercent      = "%"
	UnitRequests     = "requests"
	UnitTokensPerSec = "tokens/sec"
	UnitPerUser      = "tokens/sec/user"
	UnitRequestsSec  = "requests/sec"
	UnitChunks       = "chunks"
	UnitRatio        = "ratio"
)

// def names one metric for display.
type def struct{ tag, header, unit string }

// Record metrics, in AIPerf display order; the index is the metric's id.
const (
	idTTFT = iota
	idTTST
	idTTFO
	idLatency
	idDecode
	idFullDecode
	idITL
	idFullITL
	idICL
	idPerUser
	idFullPerUser
	idE2E
	idPrefill
	idOSL
	idISL
	idOutputTokens
	idReasoningTokens
	idUsagePrompt
	idUsageCacheRead
	idUsageCacheWrite
	idUsageCacheMiss
	idUsageCompletion
	idUsageReasoning
	idUsageAccepted
	idUsageRejected
	idUsageTotal
	idUsagePromptDiff
	idUsageCompletionDiff
	idUsageReasoningDiff
	idOSLMismatch
	idSpecAcceptLength
	idSpecDraftRate
	idSpecAcceptedPerVerified
	idSpecSteps
	idSpecAcceptedDraft
	idSpecDraft
	idHTTPBlocked
	idHTTPDNS
	idHTTPConnecting
	idHTTPTLS
	idHTTPSending
	idHTTPWaiting
	idHTTPReceiving
	idHTTPDuration
	idHTTPOverhead
	idHTTPTotal
	idHTTPDataSent
	idHTTPDataReceived
	idHTTPReused
	idHTTPChunksSent
	idHTTPChunksReceived
	idSendLag
	idErrorISL
	// The media metrics (media.go).
	idNumImages
	idImageThroughput
	idImageLatency
	idAudioDuration
	idRTFX
	idVideoInferenceTime
	idVideoPeakMemory
	idPayloadBytes
	numRecordMetrics
)

var recordDefs = [numRecordMetrics]def{
	idTTFT:                    {TagTTFT, "Time to First Token", UnitMs},
	idTTST:                    {TagTTST, "Time to Second Token", UnitMs},
	idTTFO:                    {TagTTFO, "Time to First Output Token", UnitMs},
	idLatency:                 {TagRequestLatency, "Request Latency", UnitMs},
	idDecode:                  {TagDecodeDuration, "Decode Duration", UnitMs},
	idFullDecode:              {TagFullDecodeDuration, "Full Decode Duration", UnitMs},
	idITL:                     {TagITL, "Inter Token Latency", UnitMs},
	idFullITL:                 {TagFullITL, "Full-Response Inter Token Latency", UnitMs},
	idICL:                     {TagICL, "Inter Chunk Latency", UnitMs},
	idPerUser:                 {TagPerUserThroughput, "Output Token Throughput Per User", UnitPerUser},
	idFullPerUser:             {TagFullPerUser, "Full-Response Output Token Throughput Per User", UnitPerUser},
	idE2E:                     {TagE2EOutputThroughput, "E2E Output Token Throughput", UnitPerUser},
	idPrefill:                 {TagPrefillPerUser, "Prefill Throughput Per User", UnitPerUser},
	idOSL:                     {TagOSL, "Output Sequence Length", UnitTokens},
	idISL:                     {TagISL, "Input Sequence Length", UnitTokens},
	idOutputTokens:            {TagOutputTokenCount, "Output Token Count", UnitTokens},
	idReasoningTokens:         {TagReasoningTokenCount, "Reasoning Token Count", UnitTokens},
	idUsagePrompt:             {TagUsagePromptTokens, "Usage Prompt Tokens", UnitTokens},
	idUsageCacheRead:          {TagUsageCacheReadTokens, "Usage Prompt Cache Read Tokens", UnitTokens},
	idUsageCacheWrite:         {TagUsageCacheWriteTokens, "Usage Prompt Cache Write Tokens", UnitTokens},
	idUsageCacheMiss:          {TagUsageCacheMissTokens, "Usage Prompt Cache Miss Tokens", UnitTokens},
	idUsageCompletion:         {TagUsageCompletionTokens, "Usage Completion Tokens", UnitTokens},
	idUsageReasoning:          {TagUsageReasoningTokens, "Usage Reasoning Tokens", UnitTokens},
	idUsageAccepted:           {TagUsageAcceptedPrediction, "Usage Accepted Prediction Tokens", UnitTokens},
	idUsageRejected:           {TagUsageRejectedPrediction, "Usage Rejected Prediction Tokens", UnitTokens},
	idUsageTotal:              {TagUsageTotalTokens, "Usage Total Tokens", UnitTokens},
	idUsagePromptDiff:         {TagUsagePromptDiffPct, "Usage Prompt Diff", UnitPercent},
	idUsageCompletionDiff:     {TagUsageCompletionDiffPct, "Usage Completion Diff", UnitPercent},
	idUsageReasoningDiff:      {TagUsageReasoningDiffPct, "Usage Reasoning Diff", UnitPercent},
	idOSLMismatch:             {TagOSLMismatchDiffPct, "OSL Mismatch Diff", UnitPercent},
	idSpecAcceptLength:        {TagSpecAcceptanceLength, "Acceptance Length", UnitRatio},
	idSpecDraftRate:           {TagSpecDraftAcceptanceRate, "Draft Acceptance Rate", UnitPercent},
	idSpecAcceptedPerVerified: {TagSpecAcceptedPerVerified, "Accepted per Verified", UnitRatio},
	idSpecSteps:               {TagSpecSteps, "Spec Decode Steps", UnitCount},
	idSpecAcceptedDraft:       {TagSpecAcceptedDraftTokens, "Accepted Draft Tokens", UnitTokens},
	idSpecDraft:               {TagSpecDraftTokens, "Draft Tokens", UnitTokens},
	idHTTPBlocked:             {TagHTTPBlocked, "HTTP Blocked", UnitMs},
	idHTTPDNS:                 {TagHTTPDNSLookup, "HTTP DNS Lookup", UnitMs},
	idHTTPConnecting:          {TagHTTPConnecting, "HTTP Connecting", UnitMs},
	idHTTPTLS:                 {TagHTTPTLSHandshaking, "HTTP TLS Handshaking", UnitMs},
	idHTTPSending:             {TagHTTPSending, "HTTP Sending", UnitMs},
	idHTTPWaiting:             {TagHTTPWaiting, "HTTP Waiting (TTFB)", UnitMs},
	idHTTPReceiving:           {TagHTTPReceiving, "HTTP Receiving", UnitMs},
	idHTTPDuration:            {TagHTTPDuration, "HTTP Duration (excl. conn)", UnitMs},
	idHTTPOverhead:            {TagHTTPConnectionOverhead, "HTTP Connection Overhead", UnitMs},
	idHTTPTotal:               {TagHTTPTotal, "HTTP Total Time", UnitMs},
	idHTTPDataSent:            {TagHTTPDataSent, "HTTP Data Sent", UnitKB},
	idHTTPDataReceived:        {TagHTTPDataReceived, "HTTP Data Received", UnitKB},
	idHTTPReused:              {TagHTTPConnectionReused, "HTTP Connection Reused", UnitRatio},
	idHTTPChunksSent:          {TagHTTPChunksSent, "HTTP Chunks Sent", UnitCount},
	idHTTPChunksReceived:      {TagHTTPChunksReceived, "HTTP Chunks Received", UnitCount},
	idSendLag:                 {TagSendLag, "Send Lag", UnitMs},
	idErrorISL:                {TagErrorISL, "Error Input Sequence Length", UnitTokens},
}

// Derived and aggregate metrics, in display order.
var (
	defOutputThroughput = def{TagOutputTokenThroughput, "Output Token Throughput", UnitTokensPerSec}
	defTotalThroughput  = def{TagTotalTokenThroughput, "Total Token Throughput", UnitTokensPerSec}
	defRequestRate      = def{TagRequestThroughput, "Request Throughput", UnitRequestsSec}
	defRequestCount     = def{TagRequestCount, "Request Count", UnitRequests}
	defErrorCount       = def{TagErrorRequestCount, "Error Request Count", UnitRequests}
	defTotalISL         = def{TagTotalISL, "Total Input Sequence Length", UnitTokens}
	defTotalOSL         = def{TagTotalOSL, "Total Output Sequence Length", UnitTokens}
	defTotalErrorISL    = def{TagTotalErrorISL, "Total Error Input Sequence Length", UnitTokens}
	defDuration         = def{TagBenchmarkDuration, "Benchmark Duration", UnitSec}
	defUsageDiscrepancy = def{TagUsageDiscrepancyCount, "Usage Discrepancy Count", UnitRequests}
	defOSLMismatch      = def{TagOSLMismatchCount, "OSL Mismatch Count", UnitRequests}
	defMalformedChunks  = def{TagMalformedChunkCount, "Malformed Chunk Count", UnitChunks}
	defCancelledCount   = def{TagCancelledRequestCount, "Cancelled Request Count", UnitRequests}
)

// scalarDefs are the derived and aggregate metrics, in display order; the
// GPU power-efficiency ones come from AddEnergy, network_rtt from
// AdjustForNetwork, not from Summarize.
var scalarDefs = [...]def{defOutputThroughput, defInputThroughput, defTotalThroughput, defRequestRate,
	defE2EInteractivityP[0].def, defE2EInteractivityP[1].def, defRequestCount, defErrorCount,
	defTotalISL, defTotalOSL, defTotalErrorISL, defDuration, defUsageDiscrepancy, defOSLMismatch, defMalformedChunks,
	defCancelledCount, defTotalOutputTokens, defTotalReasoning,
	defTotalUsagePrompt, defTotalUsageCacheRead, defOverallCacheRead, defTotalUsageCacheWrite, defTotalUsageCacheMiss,
	defTotalUsageCompletion, defTotalUsageReasoning, defTotalUsageAccepted, defTotalUsageRejected, defTotalUsageTotal,
	defSpecZeroStep, defTotalSpecSteps, defTotalAcceptedDraft, defTotalDraft, defSpecWeightedLength, defSpecOverallRate,
	defMinRequest, defMaxResponse, defErrorRate,
	defGoodput, defGoodCount, defGoodFraction,
	defEnergyDelay, defPerfPerWatt, defOutputTPSPerWatt, defGoodputPerWatt, defAveragePower, defTotalEnergy,
	defTotalPower, defEnergyPerTotalToken, defEnergyPerOutputToken, defEnergyPerRequest, defTokensPerJoule,
	defEnergyPerUser, defNetworkRTT}

// RecordTags lists the tags of the metrics that summarise to a
// distribution (Stats): the record metrics in display order, then the
// derived distributions (derivedDistributions).
func RecordTags() []string {
	derived := derivedDistributions()
	out := make([]string, 0, len(recordDefs)+len(derived))
	for _, d := range recordDefs {
		out = append(out, d.tag)
	}
	for _, d := range derived {
		out = append(out, d.tag)
	}
	return out
}

// derivedDistributions are the distributions that are no record metric:
// the network-adjusted latencies (AdjustForNetwork), the credit-issue
// latencies (effective.go) and the time-weighted sweep metrics (sweep.go).
func derivedDistributions() []def {
	out := make([]def, 0, len(networkAdjusted)+len(issuedDefs)+len(sweepDefs))
	for _, a := range networkAdjusted {
		out = append(out, a.def)
	}
	out = append(out, issuedDefs[:]...)
	for _, d := range sweepDefs {
		out = append(out, d.def)
	}
	return out
}

// ScalarTags lists the tags of the derived and aggregate metrics, in display
// order: each summarises to a single Value.
func ScalarTags() []string {
	out := make([]string, len(scalarDefs))
	for i, d := range scalarDefs {
		out[i] = d.tag
	}
	return out
}

// UnitOf is the display unit of the metric tag ("ms" for
// time_to_first_token), "" for a tag this package does not define.
func UnitOf(tag string) string {
	for _, defs := range [][]def{recordDefs[:], scalarDefs[:], derivedDistributions()} {
		for _, d := range defs {
			if d.tag == tag {
				return d.unit
			}
		}
	}
	return ""
}
