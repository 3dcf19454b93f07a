package compare

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/store"
)

// configField is a setting of a run, read as text.
type configField struct {
	name string
	get  func(r *store.RunRow) string
}

// configFields are the settings whose mismatch makes a comparison suspect.
var configFields = []configField{
	{"model", func(r *store.RunRow) string { return r.Model }},
	{"url", func(r *store.RunRow) string { return sameURLs(r.URL) }}, // redacted when stored
	{"endpoint_type", func(r *store.RunRow) string { return r.EndpointType }},
	{"streaming", func(r *store.RunRow) string { return strconv.FormatBool(r.Streaming) }},
	{"mode", func(r *store.RunRow) string { return r.Mode }},
	{"concurrency", func(r *store.RunRow) string { return optional(r.Concurrency) }},
	{"request_rate", func(r *store.RunRow) string { return optional(r.RequestRate) }},
	{"isl", func(r *store.RunRow) string { return optional(r.ISL) }},
	{"osl", func(r *store.RunRow) string { return optional(r.OSL) }},
	// how the client read (its default follows the client's cores)
	{"rx_coalesce_usecs", func(r *store.RunRow) string { return strconv.Itoa(r.RxCoalesceUsecs) }},
}

// workloadKeys are the stored configuration's keys (plan.Profile's JSON
// names) that change what the server is asked to do or how the figures are
// counted, beyond the columns above: a comparison across a difference in
// any of them names it.
var workloadKeys = []string{
	"endpoint", "extra_inputs", "use_server_token_count", "connection_reuse_strategy", "request_content_type",
	"require_stream_completion",
	"use_legacy_max_tokens",
	"request_rate_mode", "arrival_smoothness", "cap_policy", "prefill_concurrency", "request_rate_series",
	"user_centric_rate", "num_users", "phases", "request_cancellation_rate", "request_cancellation_delay", "goodput",
	"synthetic_input_tokens_stddev", "output_tokens_stddev", "sequence_distribution", "num_dataset_entries",
	"tokenizer", "tokenizer_revision", "apply_chat_template", "prompt_batch_size", "prompt_corpus",
	"rankings_passages_mean", "rankings_passages_prompt_token_mean", "rankings_query_prompt_token_mean",
	"image_width_mean", "image_height_mean", "image_batch_size", "image_format", "image_source",
	"audio_length_mean", "audio_batch_size", "audio_format",
	"video_width", "video_height", "video_batch_size", "video_duration", "video_fps", "video_format",
	"input_file", "custom_dataset_type", "public_dataset", "dataset_sampling_strategy", "fixed_schedule",
	"replay_speedup", "ignore_trace_delays", "inter_turn_delay_cap_seconds",
	"conversation_num", "conversation_turn_mean", "conversation_turn_delay_mean", "conversation_turn_delay_ratio",
	"prompt_prefix_pool_size", "prompt_prefix_length", "shared_system_prompt_length", "user_context_prompt_length",
	"cache_bust", "reset_kv_cache", "reset_kv_cache_path",
	// how much was sent: request_count.avg is a verdict of its own, and a
	// longer run warms a cache longer
	"request_count", "benchmark_duration", "warmup_request_count", "warmup_duration",
}

// maxValueText bounds a side's values as a note shows them (they are
// compared whole).
const maxValueText = 100

func init() {
	for _, k := range workloadKeys {
		configFields = append(configFields, configField{k, func(r *store.RunRow) string { return configValue(r, k) }})
	}
}

// configValue is the stored configuration's value of key as compact JSON
// ("-" when unset).
func configValue(r *store.RunRow, key string) string {
	raw, ok := r.Config[key]
	if !ok || string(raw) == "null" {
		return "-"
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return "?"
	}
	return buf.String()
}

// shorten cuts s to maxValueText runes.
func shorten(s string) string {
	if v := []rune(s); len(v) > maxValueText {
		return string(v[:maxValueText-1]) + "…"
	}
	return s
}

// sameURLs is a run's --url list as the requests went: a URL given
// without a scheme is http://, a trailing slash is none.
func sameURLs(list string) string {
	urls := strings.Split(list, ",")
	for i, u := range urls {
		if u != "" {
			urls[i] = strings.TrimSuffix(plan.NormalizeURL(u), "/")
		}
	}
	return strings.Join(urls, ",")
}

func optional[T int | float64](p *T) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

// configDifferences lists, one line per setting, the settings whose values
// differ between the named sides, e.g. `osl: A = 64, B = 128`. A side
// whose runs disagree among themselves shows every value, as "4|8".
func configDifferences(names []string, sides [][]store.RunRow) []string {
	var out []string
	for _, f := range configFields {
		values := make([]string, len(sides))
		for i, runs := range sides {
			var seen []string
			for j := range runs {
				if v := f.get(&runs[j]); !slices.Contains(seen, v) {
					seen = append(seen, v)
				}
			}
			slices.Sort(seen)
			values[i] = strings.Join(seen, "|")
		}
		if len(slices.Compact(slices.Clone(values))) <= 1 {
			continue
		}
		parts := make([]string, len(sides))
		for i := range sides {
			parts[i] = names[i] + " = " + shorten(values[i])
		}
		out = append(out, f.name+": "+strings.Join(parts, ", "))
	}
	return out
}

// configNotes words config differences for the notes under a table.
func configNotes(diffs []string) []string {
	out := make([]string, len(diffs))
	for i, d := range diffs {
		out[i] = "config differs: " + d
	}
	return out
}
