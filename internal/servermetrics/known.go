package servermetrics

import (
	"slices"
	"strings"
)

// role is what a known family tells, whatever server exposes it: the
// headline rows and the reset evidence look families up by role.
type role int

const (
	roleNone             role = iota
	roleRunning               // gauge: requests in the running batch
	roleWaiting               // gauge: requests queued
	roleKVUsage               // gauge: KV-cache usage, 0–1
	rolePrefixHits            // counter: prompt tokens served from the prefix cache
	rolePrefixQueries         // counter: prompt tokens looked up in the prefix cache
	roleCachedTokens          // counter: cached prompt tokens (hits; queries are the prompt tokens)
	roleHitRate               // gauge: prefix-cache hit rate, 0–1
	rolePreemptions           // counter
	rolePromptTokens          // counter
	roleGenTokens             // counter
	roleGenThroughput         // gauge: generated tokens/s
	roleTTFT                  // histogram, seconds
	roleITL                   // histogram, seconds
	roleE2E                   // histogram, seconds
	roleQueueTime             // histogram, seconds
	roleGPUUtil               // DCGM gauge, %
	roleGPUMemUsed            // DCGM gauge, MiB
	roleGPUPower              // DCGM gauge, W
	roleSpecAccepted          // counter: draft tokens the target model accepted
	roleSpecDraftTokens       // counter: draft tokens proposed
	roleSpecDrafts            // counter: drafts (verify steps)
	roleSpecAcceptRate        // gauge: draft acceptance rate, 0–1
	roleSpecAcceptLength      // gauge: tokens per verify step, the bonus included
)

// known is a family the console can name.
type known struct {
	name     string
	friendly string
	unit     string
	role     role
	// promptExcludesCached: the server's prompt-token counter leaves the
	// cached tokens out (llama.cpp), so queries = prompt + cached.
	promptExcludesCached bool
}

// knownFamilies lists the families of vLLM, SGLang, TensorRT-LLM, Dynamo,
// llama.cpp and the DCGM exporter that the console names, in order of
// preference within a role (a current name before its older alias).
// Counters are named as AIPerf names them, without the _total of their
// samples (AIPerfName). Sources:
//   - vLLM: vllm/v1/metrics/loggers.py (PrometheusStatLogger); the older
//     vllm:gpu_cache_usage_perc and vllm:time_per_output_token_seconds;
//   - SGLang: python/sglang/srt/metrics/collector.py (TokenizerMetricsCollector,
//     SchedulerMetricsCollector);
//   - TensorRT-LLM: tensorrt_llm/metrics/collector.py, served at
//     /prometheus/metrics (trtllm_ names; older builds wrote trtllm:);
//   - Dynamo: lib/llm/src/http/service/metrics.rs (dynamo_frontend_*) and the
//     component KV statistics;
//   - llama.cpp: tools/server/server-task.cpp, server_task_result_metrics::to_metrics
//     (llama-server --metrics);
//   - DCGM: dcgm-exporter's default-counters.csv.
//
// AIPerf's server-metrics reference (docs/server-metrics) lists the same.
var knownFamilies = []known{
	{"vllm:num_requests_running", "Running requests", "requests", roleRunning, false},
	{"vllm:num_requests_waiting", "Waiting requests", "requests", roleWaiting, false},
	{"vllm:kv_cache_usage_perc", "KV-cache usage", "ratio", roleKVUsage, false},
	{"vllm:gpu_cache_usage_perc", "KV-cache usage", "ratio", roleKVUsage, false},
	{"vllm:prefix_cache_hits", "Prefix-cache hits", "tokens", rolePrefixHits, false},
	{"vllm:prefix_cache_queries", "Prefix-cache queries", "tokens", rolePrefixQueries, false},
	{"vllm:num_preemptions", "Preemptions", "preemptions", rolePreemptions, false},
	{"vllm:prompt_tokens", "Prompt tokens", "tokens", rolePromptTokens, false},
	{"vllm:generation_tokens", "Generation tokens", "tokens", roleGenTokens, false},
	{"vllm:request_success", "Successful requests", "requests", roleNone, false},
	{"vllm:time_to_first_token_seconds", "Server TTFT", "seconds", roleTTFT, false},
	{"vllm:inter_token_latency_seconds", "Server ITL", "seconds", roleITL, false},
	{"vllm:time_per_output_token_seconds", "Server ITL", "seconds", roleITL, false},
	{"vllm:e2e_request_latency_seconds", "Server e2e latency", "seconds", roleE2E, false},
	{"vllm:request_queue_time_seconds", "Server queue time", "seconds", roleQueueTime, false},
	{"vllm:request_prefill_time_seconds", "Server prefill time", "seconds", roleNone, false},
	{"vllm:request_decode_time_seconds", "Server decode time", "seconds", roleNone, false},
	{"vllm:spec_decode_num_accepted_tokens", "Spec decode accepted tokens", "tokens", roleSpecAccepted, false},
	{"vllm:spec_decode_num_draft_tokens", "Spec decode draft tokens", "tokens", roleSpecDraftTokens, false},
	{"vllm:spec_decode_num_drafts", "Spec decode drafts", "drafts", roleSpecDrafts, false},

	{"sglang:num_running_reqs", "Running requests", "requests", roleRunning, false},
	{"sglang:num_queue_reqs", "Waiting requests", "requests", roleWaiting, false},
	{"sglang:token_usage", "KV-cache usage", "ratio", roleKVUsage, false},
	{"sglang:cached_tokens", "Cached prompt tokens", "tokens", roleCachedTokens, false},
	{"sglang:cache_hit_rate", "Prefix-cache hit rate", "ratio", roleHitRate, false},
	{"sglang:gen_throughput", "Generation throughput", "tokens/s", roleGenThroughput, false},
	{"sglang:prompt_tokens", "Prompt tokens", "tokens", rolePromptTokens, false},
	{"sglang:generation_tokens", "Generation tokens", "tokens", roleGenTokens, false},
	{"sglang:num_requests", "Requests", "requests", roleNone, false},
	{"sglang:time_to_first_token_seconds", "Server TTFT", "seconds", roleTTFT, false},
	{"sglang:inter_token_latency_seconds", "Server ITL", "seconds", roleITL, false},
	{"sglang:time_per_output_token_seconds", "Server ITL", "seconds", roleITL, false},
	{"sglang:e2e_request_latency_seconds", "Server e2e latency", "seconds", roleE2E, false},
	{"sglang:queue_time_seconds", "Server queue time", "seconds", roleQueueTime, false},
	{"sglang:spec_accept_rate", "Spec decode acceptance rate", "ratio", roleSpecAcceptRate, false},
	{"sglang:spec_accept_length", "Spec decode acceptance length", "tokens/step", roleSpecAcceptLength, false},

	{"trtllm_num_requests_running", "Running requests", "requests", roleRunning, false},
	{"trtllm_num_requests_waiting", "Waiting requests", "requests", roleWaiting, false},
	{"trtllm_kv_cache_utilization", "KV-cache usage", "ratio", roleKVUsage, false},
	{"trtllm_kv_cache_hit_rate", "Prefix-cache hit rate", "ratio", roleHitRate, false},
	{"trtllm_prompt_tokens", "Prompt tokens", "tokens", rolePromptTokens, false},
	{"trtllm_generation_tokens", "Generation tokens", "tokens", roleGenTokens, false},
	{"trtllm_request_success", "Successful requests", "requests", roleNone, false},
	{"trtllm_time_to_first_token_seconds", "Server TTFT", "seconds", roleTTFT, false},
	{"trtllm_time_per_output_token_seconds", "Server ITL", "seconds", roleITL, false},
	{"trtllm_e2e_request_latency_seconds", "Server e2e latency", "seconds", roleE2E, false},
	{"trtllm_request_queue_time_seconds", "Server queue time", "seconds", roleQueueTime, false},
	{"trtllm:time_to_first_token_seconds", "Server TTFT", "seconds", roleTTFT, false},
	{"trtllm:time_per_output_token_seconds", "Server ITL", "seconds", roleITL, false},
	{"trtllm:e2e_request_latency_seconds", "Server e2e latency", "seconds", roleE2E, false},
	{"trtllm:request_queue_time_seconds", "Server queue time", "seconds", roleQueueTime, false},
	{"trtllm:request_success", "Successful requests", "requests", roleNone, false},

	{"dynamo_frontend_inflight_requests", "Running requests", "requests", roleRunning, false},
	{"dynamo_frontend_queued_requests", "Waiting requests", "requests", roleWaiting, false},
	{"dynamo_frontend_requests", "Requests", "requests", roleNone, false},
	{"dynamo_frontend_output_tokens", "Generation tokens", "tokens", roleGenTokens, false},
	{"dynamo_frontend_time_to_first_token_seconds", "Server TTFT", "seconds", roleTTFT, false},
	{"dynamo_frontend_inter_token_latency_seconds", "Server ITL", "seconds", roleITL, false},
	{"dynamo_frontend_request_duration_seconds", "Server e2e latency", "seconds", roleE2E, false},
	{"dynamo_frontend_input_sequence_tokens", "Input sequence length", "tokens", roleNone, false},
	{"dynamo_frontend_output_sequence_tokens", "Output sequence length", "tokens", roleNone, false},
	{"dynamo_component_kvstats_gpu_cache_usage_percent", "KV-cache usage", "ratio", roleKVUsage, false},
	{"dynamo_component_kvstats_gpu_prefix_cache_hit_rate", "Prefix-cache hit rate", "ratio", roleHitRate, false},

	{"llamacpp:requests_processing", "Running requests", "requests", roleRunning, false},
	{"llamacpp:requests_deferred", "Waiting requests", "requests", roleWaiting, false},
	{"llamacpp:kv_cache_usage_ratio", "KV-cache usage", "ratio", roleKVUsage, false},
	{"llamacpp:kv_cache_tokens", "KV-cache tokens", "tokens", roleNone, false},
	{"llamacpp:prompt_tokens_cached", "Cached prompt tokens", "tokens", roleCachedTokens, false},
	{"llamacpp:prompt_tokens", "Prompt tokens", "tokens", rolePromptTokens, true},
	{"llamacpp:tokens_predicted", "Generation tokens", "tokens", roleGenTokens, false},
	{"llamacpp:prompt_seconds", "Prompt processing time", "seconds", roleNone, false},
	{"llamacpp:tokens_predicted_seconds", "Generation time", "seconds", roleNone, false},
	{"llamacpp:prompt_tokens_seconds", "Prompt throughput", "tokens/s", roleNone, false},
	{"llamacpp:predicted_tokens_seconds", "Generation throughput per request", "tokens/s", roleNone, false},
	{"llamacpp:n_decode", "Decode calls", "calls", roleNone, false},
	{"llamacpp:n_busy_slots_per_decode", "Busy slots per decode", "slots", roleNone, false},
	{"llamacpp:n_tokens_max", "Largest batch (tokens)", "tokens", roleNone, false},

	{"DCGM_FI_DEV_GPU_UTIL", "GPU utilization", "%", roleGPUUtil, false},
	{"DCGM_FI_DEV_FB_USED", "GPU memory used", "MiB", roleGPUMemUsed, false},
	{"DCGM_FI_DEV_FB_FREE", "GPU memory free", "MiB", roleNone, false},
	{"DCGM_FI_DEV_FB_TOTAL", "GPU memory total", "MiB", roleNone, false},
	{"DCGM_FI_DEV_POWER_USAGE", "GPU power", "W", roleGPUPower, false},
	{"DCGM_FI_DEV_SM_CLOCK", "SM clock", "MHz", roleNone, false},
	{"DCGM_FI_DEV_MEM_CLOCK", "Memory clock", "MHz", roleNone, false},
	{"DCGM_FI_DEV_GPU_TEMP", "GPU temperature", "°C", roleNone, false},
	{"DCGM_FI_DEV_MEMORY_TEMP", "Memory temperature", "°C", roleNone, false},
	{"DCGM_FI_DEV_MEM_COPY_UTIL", "Memory utilization", "%", roleNone, false},
	{"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "Energy consumption", "mJ", roleNone, false},
	{"DCGM_FI_PROF_SM_ACTIVE", "SM activity", "ratio", roleNone, false},
}

// knownByName indexes knownFamilies.
var knownByName = func() map[string]*known {
	m := make(map[string]*known, len(knownFamilies))
	for i := range knownFamilies {
		m[knownFamilies[i].name] = &knownFamilies[i]
	}
	return m
}()

// byRole lists the known families of a role in order of preference.
func byRole(r role) []string {
	var out []string
	for _, k := range knownFamilies {
		if k.role == r {
			out = append(out, k.name)
		}
	}
	return out
}

// describe names a family for people: its friendly name when known, and
// its unit (from the table, else inferred from the name as AIPerf does).
func describe(name, typ string) (friendly, unit string) {
	name = AIPerfName(name, typ)
	if k := knownByName[name]; k != nil {
		return k.friendly, k.unit
	}
	return "", inferUnit(name)
}

// isMaximum reports whether a family the server types as a counter is a
// maximum in meaning (llama.cpp's n_tokens_max: the largest batch seen):
// it is reduced as a gauge, whose max is the figure, since a delta of a
// high-water mark means nothing.
func isMaximum(name string) bool { return strings.HasSuffix(name, "_max") }

// AIPerfName is a family's name as AIPerf's Python parser (prometheus_client)
// reports it, the one name a family has here, in the exports, the store,
// compare and the console: a counter without the _total of its samples
// (vllm:prompt_tokens_total is vllm:prompt_tokens), every other type as
// exposed. Only raw Prometheus text keeps the _total. The store also reads
// through it the counters that versions before it stored with the suffix.
func AIPerfName(name, typ string) string {
	if typ == TypeCounter {
		return strings.TrimSuffix(name, "_total")
	}
	return name
}

// unitSuffixes are AIPerf's unit inference from a name's suffix
// (docs/server-metrics/server-metrics-json-schema.md, "Unit Inference"),
// longest first.
var unitSuffixes = func() [][2]string {
	s := [][2]string{
		{"_seconds", "seconds"}, {"_seconds_total", "seconds"},
		{"_milliseconds", "milliseconds"}, {"_ms", "milliseconds"}, {"_ms_total", "milliseconds"},
		{"_nanoseconds", "nanoseconds"}, {"_ns", "nanoseconds"}, {"_ns_total", "nanoseconds"},
		{"_bytes", "bytes"}, {"_bytes_total", "bytes"}, {"_kilobytes", "kilobytes"},
		{"_megabytes", "megabytes"}, {"_gigabytes", "gigabytes"},
		{"_total", "count"}, {"_count", "count"},
		{"_tokens", "tokens"}, {"_tokens_total", "tokens"},
		{"_requests", "requests"}, {"_requests_total", "requests"}, {"_reqs", "requests"}, {"request_success", "requests"},
		{"_errors", "errors"}, {"_errors_total", "errors"}, {"_error_count", "errors"}, {"_error_count_total", "errors"},
		{"_blocks", "blocks"}, {"_blocks_total", "blocks"}, {"_block_count", "blocks"},
		{"_gb_s", "gb/s"}, {"_ratio", "ratio"}, {"_percent", "percent"}, {"_perc", "percent"},
		{"_celsius", "celsius"}, {"_joules", "joule"}, {"_watts", "watt"},
	}
	slices.SortStableFunc(s, func(a, b [2]string) int { return len(b[0]) - len(a[0]) })
	return s
}()

// inferUnit is the unit AIPerf infers from a name's suffix; "" when none.
func inferUnit(name string) string {
	for _, s := range unitSuffixes {
		if strings.HasSuffix(name, s[0]) {
			return s[1]
		}
	}
	return ""
}
