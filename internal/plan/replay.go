package plan

import (
	"fmt"
	"slices"
)

// TraceReplay holds AIPerf's trace-replay controls (issue 24). It is
// embedded in Profile: its fields are Profile options like any other (CLI
// flags, YAML keys, Starlark profile(...) arguments).
//
// AIPerf honours these in its baseten_trace loader only; here they apply to
// the sessions of every JSONL input file (mooncake_trace, bailian_trace,
// burst_gpt_trace, sagemaker_data_capture, single_turn, multi_turn,
// raw_payload), an extension. The two that shape a baseten request body
// (OmitKVHints, ForceMinTokens) are refused where no request carries what
// they would change.
type TraceReplay struct {
	TraceSessionSampleRatio *float64 `json:"trace_session_sample_ratio,omitempty" name:"trace-session-sample-ratio" group:"Input" placeholder:"R" help:"Replay only this fraction (0 < R ≤ 1) of the file's sessions, whole sessions picked by --random-seed: max(1, round(R × sessions)) of them."`
	MaxIdleGapCapSeconds    *float64 `json:"max_idle_gap_cap_seconds,omitempty" name:"max-idle-gap-cap-seconds" group:"Conversation input" placeholder:"SECONDS" help:"On a fixed schedule, collapse every idle gap between consecutive requests (across all sessions) to at most this many seconds of replay time (after --replay-speedup), so a sparse or sampled trace replays no dead air."`
	TraceIdleGapCapSeconds  *float64 `json:"trace_idle_gap_cap_seconds,omitempty" name:"trace-idle-gap-cap-seconds" group:"Conversation input" placeholder:"SECONDS" help:"Within each session, compress every gap between consecutive requests to at most this many seconds of replay time (timestamps and delays alike); it takes precedence over --inter-turn-delay-cap-seconds."`
	OpenLoopReplay          *bool    `json:"open_loop_replay,omitempty" name:"open-loop-replay" negatable:"" group:"Conversation input" help:"Open loop (the default): a session's later turns are sent at their recorded timestamps, or when the previous reply ends if that is later. --no-open-loop-replay: closed loop, each later turn sent its recorded start-to-start gap after the previous reply ends."`
	OpenLoopStrict          bool     `json:"open_loop_strict,omitempty" name:"open-loop-strict" group:"Conversation input" help:"Send every row of a trace at its own recorded timestamp as an independent one-turn session (no session grouping)."`
	OmitKVHints             bool     `json:"omit_kv_hints,omitempty" name:"omit-kv-hints" group:"Conversation input" help:"Drop the recorded KV-cache hints (hash_ids, block_size) from replayed request bodies (baseten_trace, whose bodies forward them)."`
	ForceMinTokens          *bool    `json:"force_min_tokens,omitempty" name:"force-min-tokens" negatable:"" group:"Conversation input" help:"Pin min_tokens to the recorded output length (baseten_trace; the default there); --no-force-min-tokens lets EOS end generations."`

	// AIPerf's weka_trace and agentic-replay controls: refused for the
	// other formats, as AIPerf refuses them; --allow-dataset-wrap for all,
	// as no replay here reuses traces.
	UseThinkTimeOnly         bool   `json:"use_think_time_only,omitempty" name:"use-think-time-only" group:"Input" help:"weka_trace: each turn's delay is its recorded think_time only, not the whole gap since the previous request."`
	MaxContextLength         *int   `json:"max_context_length,omitempty" name:"max-context-length" group:"Input" placeholder:"TOKENS" help:"weka_trace: drop whole traces whose recorded peak prompt+output length exceeds TOKENS."`
	AllowDatasetWrap         *bool  `json:"allow_dataset_wrap,omitempty" name:"allow-dataset-wrap" negatable:"" group:"Input" help:"weka_trace and agentic replay: reuse traces across concurrency lanes when --concurrency exceeds them (default: refused)."`
	WekaNestedTimestampBasis string `json:"weka_nested_timestamp_basis,omitempty" name:"weka-nested-timestamp-basis" enum:",auto,absolute,relative" default:"" group:"Input" placeholder:"BASIS" help:"weka_trace: a subagent's request timestamps are absolute (the root trace's clock), relative (added to its marker's) or auto (the default: relative for the whole corpus when any of them is more than 1 µs before its marker, else absolute)."`
}

// Dataset formats that put recorded KV hints and min_tokens in their
// request bodies (AIPerf's baseten_trace).
var kvHintFormats = []string{"baseten_trace"}

// detectedFormat reports whether p's input file is of a format read from
// the file itself: the format-only controls are then checked when it is
// read (dataset.Replay), not here.
func detectedFormat(p *Profile) bool {
	return p.CustomDatasetType == "" && p.InputFile != "" && p.PublicDataset == ""
}

// Dataset formats that honour AIPerf's weka-only controls: weka_trace, and
// tracelab, which AIPerf replays as Weka traces (whose subagents' times it
// writes itself, so --weka-nested-timestamp-basis is weka_trace's only).
var (
	wekaFormats      = []string{"weka_trace", "tracelab"}
	wekaBasisFormats = []string{"weka_trace"}
)

// OpenLoop reports whether later turns keep their recorded timestamps
// (--open-loop-replay, the default).
func (r TraceReplay) OpenLoop() bool { return deref(r.OpenLoopReplay, true) }

// traceReplay checks the trace-replay controls: AIPerf's ranges, a file to
// apply them to, and a fixed schedule for those that shape one.
func (v *validator) traceReplay(p *Profile) {
	file := p.InputFile != "" && p.PublicDataset == ""
	r := p.TraceReplay
	if x := r.TraceSessionSampleRatio; x != nil && !v.nonFinite["trace_session_sample_ratio"] {
		v.check(*x > 0 && *x <= 1, "trace_session_sample_ratio", fmt.Sprintf("must be greater than 0 and at most 1, got %g", *x))
		v.check(file, "trace_session_sample_ratio", "samples the sessions of --input-file: give one")
	}
	for _, f := range []struct {
		name   string
		x      *float64
		zeroOK bool
	}{{"max_idle_gap_cap_seconds", r.MaxIdleGapCapSeconds, false}, {"trace_idle_gap_cap_seconds", r.TraceIdleGapCapSeconds, true}} {
		if f.x == nil || v.nonFinite[f.name] {
			continue
		}
		lo := "greater than 0"
		if f.zeroOK {
			lo = "at least 0"
		}
		v.check((*f.x > 0 || f.zeroOK && *f.x == 0) && *f.x <= MaxDelayMs/1000, f.name,
			fmt.Sprintf("must be %s and at most %g, got %g", lo, MaxDelayMs/1000, *f.x))
	}
	v.check(r.TraceIdleGapCapSeconds == nil || file || v.nonFinite["trace_idle_gap_cap_seconds"], "trace_idle_gap_cap_seconds",
		"applies to the sessions of --input-file: give one")
	schedule := file && !p.NoFixedSchedule
	const needSchedule = "applies to a fixed schedule: needs --input-file with a trace (and no --no-fixed-schedule)"
	v.check(r.MaxIdleGapCapSeconds == nil || schedule || v.nonFinite["max_idle_gap_cap_seconds"], "max_idle_gap_cap_seconds", needSchedule)
	v.check(r.OpenLoop() || schedule, "open_loop_replay", "false (--no-open-loop-replay) "+needSchedule) // the default is accepted anywhere, as AIPerf
	v.check(!r.OpenLoopStrict || schedule, "open_loop_strict", needSchedule)
	v.check(!r.OpenLoopStrict || r.OpenLoop(), "open_loop_strict",
		"requires open-loop replay: remove --no-open-loop-replay (or drop --open-loop-strict)")
	kind := p.CustomDatasetType
	if kind == "" {
		kind = "this input"
	}
	hints := slices.Contains(kvHintFormats, p.CustomDatasetType) || detectedFormat(p)
	v.check(!r.OmitKVHints || hints, "omit_kv_hints", fmt.Sprintf(
		"applies to baseten_trace, whose request bodies forward the recorded hash_ids and block_size; %s sends none: remove it", kind))
	v.check(deref(r.ForceMinTokens, true) || hints, "force_min_tokens", fmt.Sprintf(
		"false (--no-force-min-tokens) applies to baseten_trace, which pins min_tokens to the recorded output length; %s sends no min_tokens: remove it", kind))
	v.weka(p, kind)
}

// weka checks AIPerf's weka_trace and agentic-replay controls: their
// ranges, --use-think-time-only against --ignore-trace-delays, and a
// format that honours them.
func (v *validator) weka(p *Profile, kind string) {
	r := p.TraceReplay
	v.check(!(r.UseThinkTimeOnly && p.IgnoreTraceDelays), "use_think_time_only",
		"and --ignore-trace-delays are mutually exclusive (each sets a turn's delay differently): pick one")
	v.intRange("max_context_length", r.MaxContextLength, 1, MaxTokens)
	weka := slices.Contains(wekaFormats, p.CustomDatasetType) || detectedFormat(p)
	v.check(!r.UseThinkTimeOnly || weka, "use_think_time_only", fmt.Sprintf(
		"applies to weka_trace and tracelab, whose requests record their think_time; %s records none: remove it", kind))
	v.check(r.MaxContextLength == nil || weka, "max_context_length", fmt.Sprintf(
		"applies to weka_trace and tracelab (it drops whole traces whose recorded peak prompt+output length exceeds it), not %s: remove it", kind))
	v.check(!deref(r.AllowDatasetWrap, false), "allow_dataset_wrap", fmt.Sprintf(
		"reuses traces across AIPerf's agentic-replay concurrency lanes; a %s replay here sends each session once: remove it", kind))
	v.wekaBasis(p, kind)
}
