package plan

import (
	"fmt"
	"slices"
	"strings"
)

// Bounds of the conversation options.
const (
	// MaxTurns bounds the turns of a synthetic conversation: its history is
	// re-sent with every turn.
	MaxTurns = 1 << 10
	// MaxDelayMs bounds a think time: one day, in ms.
	MaxDelayMs = 24 * 60 * 60 * 1000.0
	// DefaultBlockSize is --prompt-input-tokens-block-size when not given
	// (AIPerf's, and the Mooncake trace's).
	DefaultBlockSize = 512
	// DefaultDatasetEntries is --num-dataset-entries' default (its kong tag).
	DefaultDatasetEntries = 100
)

// CustomDatasetTypes are the --custom-dataset-type values (and the YAML
// dataset formats): the record types, then AIPerf's SPEED-Bench configs.
var CustomDatasetTypes = append([]string{"single_turn", "multi_turn", "random_pool", "mooncake_trace", "bailian_trace",
	"burst_gpt_trace", "inputs_json", "raw_payload", "sagemaker_data_capture", "baseten_trace", "weka_trace", "tracelab", TypeDAG},
	SpeedBenchTypes...)

// TypeDAG is AIPerf's dag_jsonl: conversations whose turns start others
// (forks inheriting the history, spawned sub-agents, joins).
const TypeDAG = "dag_jsonl"

// CustomDatasetTypesHelp names the --custom-dataset-type values for an
// error: the record types, and the SPEED-Bench configs by their pattern.
func CustomDatasetTypesHelp() string {
	return "one of " + strings.Join(CustomDatasetTypes[:len(CustomDatasetTypes)-len(SpeedBenchTypes)], ", ") +
		", or speed_bench_<config> (aiperf profile --help lists them)"
}

// SpeedBenchTypes are AIPerf's speed_bench_* dataset types: NVIDIA's
// SPEED-Bench, its qualitative split, one per category of it, and the
// throughput splits by input length and entropy tier.
var SpeedBenchTypes = speedBenchTypes()

func speedBenchTypes() []string {
	ts := []string{"speed_bench_qualitative"}
	for _, c := range []string{"coding", "humanities", "math", "multilingual", "qa", "rag", "reasoning", "roleplay", "stem",
		"summarization", "writing"} {
		ts = append(ts, "speed_bench_"+c)
	}
	for _, n := range []string{"1k", "2k", "8k", "16k", "32k"} {
		ts = append(ts, "speed_bench_throughput_"+n)
		for _, tier := range []string{"low_entropy", "mixed", "high_entropy"} {
			ts = append(ts, "speed_bench_throughput_"+n+"_"+tier)
		}
	}
	return ts
}

// Multi reports whether the profile's synthetic conversations have more
// than one turn.
func (p *Profile) Multi() bool {
	return p.InputFile == "" && (p.ConversationTurnMean > 1 || p.ConversationTurnStddev > 0)
}

// inputs checks the input-file, fixed-schedule, conversation and prefix
// options and their combinations, with AIPerf's rules.
func (v *validator) inputs(p *Profile) {
	file := p.InputFile != ""
	v.check(p.CustomDatasetType == "" || slices.Contains(CustomDatasetTypes, p.CustomDatasetType), "custom_dataset_type",
		fmt.Sprintf("unknown type %q: use %s", p.CustomDatasetType, CustomDatasetTypesHelp()))
	v.check(file || p.CustomDatasetType == "", "custom_dataset_type", "needs --input-file (the file to read)")
	v.check(file || p.PublicDataset == "", "public_dataset", "needs --input-file (the local file of the public dataset; nothing is downloaded)")
	v.check(p.PublicDataset == "" || p.CustomDatasetType == "", "public_dataset", "cannot be used with --custom-dataset-type: pick one")
	v.check(!p.FixedSchedule || file, "fixed_schedule", "needs --input-file (a trace with timestamps)")
	v.check(!(p.FixedSchedule && p.NoFixedSchedule), "no_fixed_schedule", "cannot be used with --fixed-schedule")
	if p.CustomDatasetType == TypeDAG {
		v.check(!p.FixedSchedule, "fixed_schedule", "cannot be used with --custom-dataset-type dag_jsonl: its turns have no "+
			"timestamps (a branch starts when its parent's turn returns); use --concurrency or --request-rate")
		v.check(p.UserCentricRate == nil, "user_centric_rate", "cannot be used with --custom-dataset-type dag_jsonl: "+
			"a branch runs outside the users' turn gaps; use --concurrency or --request-rate")
	}
	fixedOnly := []struct {
		name string
		set  bool
	}{
		{"fixed_schedule_auto_offset", p.FixedScheduleAutoOffset},
		{"fixed_schedule_start_offset", p.FixedScheduleStartOffset != nil},
		{"fixed_schedule_end_offset", p.FixedScheduleEndOffset != nil},
		{"replay_speedup", p.ReplaySpeedup != nil},
	}
	for _, f := range fixedOnly {
		v.check(!f.set || v.nonFinite[f.name] || file && !p.NoFixedSchedule, f.name,
			"applies to a fixed schedule: needs --input-file with a trace (and no --no-fixed-schedule)")
	}
	v.intRange("fixed_schedule_start_offset", p.FixedScheduleStartOffset, 0, 1<<53)
	v.intRange("fixed_schedule_end_offset", p.FixedScheduleEndOffset, 0, 1<<53)
	if s, e := p.FixedScheduleStartOffset, p.FixedScheduleEndOffset; s != nil && e != nil && *s > *e {
		v.add("fixed_schedule_start_offset", fmt.Sprintf("must be at most --fixed-schedule-end-offset (%d), got %d", *e, *s))
	}
	v.check(!(p.FixedScheduleAutoOffset && p.FixedScheduleStartOffset != nil), "fixed_schedule_auto_offset",
		"cannot be used with --fixed-schedule-start-offset (the start offset is the schedule's zero)")
	if x := p.ReplaySpeedup; x != nil && !v.nonFinite["replay_speedup"] {
		v.check(*x > 0 && *x <= 1e6, "replay_speedup", fmt.Sprintf("must be greater than 0 and at most 1e6, got %g", *x))
	}
	v.check(!p.IgnoreTraceDelays || file, "ignore_trace_delays", "applies to the timestamps and delays of --input-file's turns")
	v.check(p.InterTurnDelayCapSeconds == nil || file || v.nonFinite["inter_turn_delay_cap_seconds"], "inter_turn_delay_cap_seconds", "applies to the delays of --input-file's turns")
	if x := p.InterTurnDelayCapSeconds; x != nil && !v.nonFinite["inter_turn_delay_cap_seconds"] {
		v.check(*x >= 0 && *x <= MaxDelayMs/1000, "inter_turn_delay_cap_seconds",
			fmt.Sprintf("must be between 0 and %g, got %g", MaxDelayMs/1000, *x))
	}
	if p.FixedSchedule {
		v.check(p.DatasetSamplingStrategy == "", "dataset_sampling_strategy",
			"cannot be used with --fixed-schedule (the schedule replays every conversation once, in time order)")
		v.check(p.RequestRate == nil, "request_rate", "cannot be used with --fixed-schedule (the trace's timestamps set the send times)")
	}

	v.intRange("chat_template_max_steps", p.ChatTemplateMaxSteps, 1, 1<<62)
	v.check(p.ChatTemplateMaxSteps == nil || p.ApplyChatTemplate, "chat_template_max_steps", "applies to --apply-chat-template")
	v.conversations(p)
	v.prefixes(p, file)
}

// conversations checks the shape of synthetic conversations: how many,
// their turns and the think time between them.
func (v *validator) conversations(p *Profile) {
	v.intRange("conversation_num", p.ConversationNum, 1, MaxRequests)
	v.check(p.ConversationNum == nil || p.RequestCount == nil, "conversation_num",
		"cannot be used with --request-count: stop on sessions or on requests, not both")
	if n, c := p.ConversationNum, p.Concurrency; n != nil && c != nil && *c > *n && *n >= 1 {
		v.add("concurrency", fmt.Sprintf("(%d) cannot be greater than --conversation-num (%d): lower --concurrency or raise --conversation-num", *c, *n))
	}
	v.check(p.ConversationTurnMean >= 0 && p.ConversationTurnMean <= MaxTurns, "conversation_turn_mean",
		fmt.Sprintf("must be between 1 and %d, got %d", MaxTurns, p.ConversationTurnMean))
	v.check(p.ConversationTurnStddev >= 0 && p.ConversationTurnStddev <= MaxTurns, "conversation_turn_stddev",
		fmt.Sprintf("must be between 0 and %d, got %d", MaxTurns, p.ConversationTurnStddev))
	for _, d := range []struct {
		name string
		x    float64
	}{{"conversation_turn_delay_mean", p.ConversationTurnDelayMean}, {"conversation_turn_delay_stddev", p.ConversationTurnDelayStddev}} {
		v.check(v.nonFinite[d.name] || d.x >= 0 && d.x <= MaxDelayMs, d.name,
			fmt.Sprintf("must be between 0 and %.0f ms (a day), got %g", MaxDelayMs, d.x))
	}
	if r := p.ConversationTurnDelayRatio; r != nil && !v.nonFinite["conversation_turn_delay_ratio"] {
		v.check(*r >= 0 && *r <= 1e6, "conversation_turn_delay_ratio", fmt.Sprintf("must be between 0 and 1e6, got %g", *r))
	}
	if p.Multi() {
		v.check(p.Spec().Messages && p.Spec().Tokens, "conversation_turn_mean",
			"needs --endpoint-type chat, responses or messages: a multi-turn session re-sends its history as messages")
	}
}

// prefixes checks the shared-prefix options, and refuses the synthetic-only
// ones with an input file.
func (v *validator) prefixes(p *Profile, file bool) {
	v.check(p.PromptInputTokensBlockSize >= 0 && p.PromptInputTokensBlockSize <= MaxTokens, "prompt_input_tokens_block_size",
		fmt.Sprintf("must be between 1 and %d, got %d", MaxTokens, p.PromptInputTokensBlockSize))
	v.check(p.PromptPrefixPoolSize >= 0 && p.PromptPrefixPoolSize <= MaxDatasetEntries, "prompt_prefix_pool_size",
		fmt.Sprintf("must be between 0 and %d, got %d", MaxDatasetEntries, p.PromptPrefixPoolSize))
	v.check(p.PromptPrefixLength >= 0 && p.PromptPrefixLength <= MaxTokens, "prompt_prefix_length",
		fmt.Sprintf("must be between 0 and %d, got %d", MaxTokens, p.PromptPrefixLength))
	v.check((p.PromptPrefixPoolSize > 0) == (p.PromptPrefixLength > 0), "prompt_prefix_pool_size",
		"and --prompt-prefix-length go together: a pool of prefixes of that length")
	v.intRange("shared_system_prompt_length", p.SharedSystemPromptLength, 1, MaxTokens)
	v.intRange("user_context_prompt_length", p.UserContextPromptLength, 1, MaxTokens)
	if (p.SharedSystemPromptLength != nil || p.UserContextPromptLength != nil) && (p.PromptPrefixPoolSize > 0 || p.PromptPrefixLength > 0) {
		v.add("shared_system_prompt_length", "and --user-context-prompt-length cannot be used with --prompt-prefix-length/--prompt-prefix-pool-size: "+
			"they are two ways to share a prefix, pick one")
	}
	if file {
		var synthOnly []string
		for _, f := range []struct {
			name string
			set  bool
		}{
			{"conversation_turn_mean", p.ConversationTurnMean > 1},
			{"conversation_turn_stddev", p.ConversationTurnStddev > 0},
			{"conversation_turn_delay_mean", p.ConversationTurnDelayMean > 0},
			{"prompt_prefix_pool_size", p.PromptPrefixPoolSize > 0},
			{"shared_system_prompt_length", p.SharedSystemPromptLength != nil},
			{"user_context_prompt_length", p.UserContextPromptLength != nil},
		} {
			if f.set {
				synthOnly = append(synthOnly, "--"+flagName(f.name))
			}
		}
		if len(synthOnly) > 0 {
			v.add("input_file", fmt.Sprintf("cannot be used with %s: they shape synthetic conversations; the file defines its own",
				strings.Join(synthOnly, ", ")))
		}
	}
}
