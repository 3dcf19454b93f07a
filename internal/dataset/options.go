package dataset

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/aiperf-go/aiperf/internal/media"
	"github.com/aiperf-go/aiperf/internal/seqdist"
)

// Input file types (--custom-dataset-type) and public datasets
// (--public-dataset).
const (
	TypeSingleTurn    = "single_turn"
	TypeMultiTurn     = "multi_turn"
	TypeRandomPool    = "random_pool"
	TypeMooncakeTrace = "mooncake_trace"
	// TypeBailianTrace is Alibaba Bailian's usage trace: requests linked
	// into sessions by chat_id and parent_chat_id, timestamps in seconds,
	// 16-token hash blocks.
	TypeBailianTrace = "bailian_trace"
	// TypeInputsJSON is an inputs.json file (AIPerf's and ours): sessions
	// of request bodies, each sent as it is.
	TypeInputsJSON = "inputs_json"
	// TypeBurstGPTTrace is a BurstGPT CSV trace: independent requests of
	// given token counts, timestamps in seconds.
	TypeBurstGPTTrace = "burst_gpt_trace"
	// TypeRawPayload is request bodies sent as written: a JSONL file (one
	// single-turn conversation a line) or a directory of them (one
	// conversation a file).
	TypeRawPayload = "raw_payload"
	// TypeSageMakerCapture is an Amazon SageMaker Data Capture file: the
	// chat requests an endpoint received, and when.
	TypeSageMakerCapture = "sagemaker_data_capture"
	// TypeBasetenTrace is a Baseten completion trace, a Parquet export:
	// literal completion prompts grouped into sessions, timestamps in Unix
	// ms, KV-cache hints forwarded in the body.
	TypeBasetenTrace = "baseten_trace"
	// PublicShareGPT reads a local copy of ShareGPT_V3 (records of
	// {"conversations": [{"from", "value"}, …]}); it is never downloaded.
	PublicShareGPT = "sharegpt"
	// PublicAIMO, PublicAIMOAIME, PublicAIMONuminaCoT and PublicAIMONumina15
	// read a local copy of an AI-MO math set (records with a "problem").
	PublicAIMO          = "aimo"
	PublicAIMOAIME      = "aimo_aime"
	PublicAIMONuminaCoT = "aimo_numina_cot"
	PublicAIMONumina15  = "aimo_numina_1_5"
	// PublicInstructCoder reads a local copy of likaixin/InstructCoder
	// (records with "input" and "instruction").
	PublicInstructCoder = "instruct_coder"
)

// PublicDatasets lists the accepted --public-dataset values; each reads
// its local file as a JSON array, JSON Lines or Parquet.
var PublicDatasets = []string{PublicShareGPT, PublicAIMO, PublicAIMOAIME, PublicAIMONuminaCoT, PublicAIMONumina15, PublicInstructCoder}

// CustomTypes lists the accepted --custom-dataset-type values.
var CustomTypes = append(slices.Clone(lineTypes), TypeBurstGPTTrace, TypeInputsJSON, TypeBasetenTrace, TypeWekaTrace, TypeTraceLab,
	TypeDAGJSONL)

// lineTypes are the record types of JSONL files, one JSON record a line.
var lineTypes = []string{TypeSingleTurn, TypeMultiTurn, TypeRandomPool, TypeMooncakeTrace, TypeBailianTrace, TypeRawPayload,
	TypeSageMakerCapture}

// traceTypes are the record types that are traces: replayed line by line,
// each once, on their timestamps when they carry them.
var traceTypes = []string{TypeMooncakeTrace, TypeBailianTrace, TypeBurstGPTTrace, TypeSageMakerCapture, TypeBasetenTrace, TypeWekaTrace,
	TypeTraceLab}

// IsTraceType reports whether files of record type kind are traces.
func IsTraceType(kind string) bool { return slices.Contains(traceTypes, kind) }

// Defaults AIPerf uses when an option is unset.
const (
	// DefaultBlockSize is the tokens per hash id of a trace
	// (--prompt-input-tokens-block-size).
	DefaultBlockSize = 512
	// BailianBlockSize is the tokens per hash id of a Bailian trace (its
	// salted SipHash blocks) when --prompt-input-tokens-block-size is not
	// given, as AIPerf's plugin metadata declares it.
	BailianBlockSize = 16
	// DefaultEntries is the number of synthetic conversations (and of
	// random_pool samples) when neither Entries nor Conversations is set.
	DefaultEntries = 100
)

// Options describe a dataset: synthetic prompts, or an input file and how
// to read it. The zero value of every field added for files and sessions
// means "unset" and gives AIPerf's default.
type Options struct {
	// ISLMean is the mean prompt length in tokens (at least 1) and
	// ISLStddev its standard deviation (synthetic prompts).
	ISLMean   int
	ISLStddev float64
	// Template is the chat template's share of a synthetic turn's ISL,
	// taken off each drawn length (at least 1 token is left), as AIPerf
	// sizes synthetic prompts under --apply-chat-template.
	Template TemplateOverhead
	// OSLMean is the mean max_tokens and OSLStddev its standard deviation;
	// OSLMean 0 means no max_tokens (Entry.MaxTokens is 0). A file row's
	// output_length wins over the drawn value.
	OSLMean   int
	OSLStddev float64
	// SeqDist, when set, replaces ISL* and OSL*: each synthetic
	// conversation draws its lengths from one bucket of the mixture
	// (--seq-dist), its OSL always giving max_tokens.
	SeqDist *seqdist.Dist
	// Entries is the number of distinct prompts (--num-dataset-entries).
	// For Open it is the number of synthetic conversations and random_pool
	// samples; 0 means Conversations, or DefaultEntries if that is 0 too
	// (AIPerf's resolution: entries, else --conversation-num, else 100).
	Entries int
	// Seed makes the dataset reproducible (--random-seed).
	Seed int64

	// InputFile is the file (or, for random_pool, directory) to read
	// (--input-file); "" gives a synthetic dataset.
	InputFile string
	// CustomType is the file's record type, one of CustomTypes; "" detects
	// it from the first record as AIPerf does (--custom-dataset-type).
	CustomType string
	// PublicDataset is one of PublicDatasets to read InputFile as that
	// public dataset (--public-dataset), or "".
	PublicDataset string
	// BlockSize is the tokens per hash id of a mooncake trace; 0 means
	// DefaultBlockSize (--prompt-input-tokens-block-size).
	BlockSize int

	// Batch is the texts per synthetic request (--prompt-batch-size; 0
	// and 1: one).
	Batch int
	// Rankings, when set, makes each synthetic request a query and
	// passages (the rankings endpoint types).
	Rankings *Rankings

	// Conversations is --conversation-num (0 = unset); see Entries.
	Conversations int
	// TurnMean is the mean number of turns of a synthetic conversation (0
	// means 1) and TurnStddev its standard deviation
	// (--conversation-turn-mean, --conversation-turn-stddev).
	TurnMean   int
	TurnStddev float64
	// TurnDelayMeanMs and TurnDelayStddevMs draw the think time before
	// synthetic turns after the first, multiplied by TurnDelayRatio (nil
	// means 1); no delays when TurnDelayMeanMs is 0
	// (--conversation-turn-delay-mean, -stddev, -ratio).
	TurnDelayMeanMs   float64
	TurnDelayStddevMs float64
	TurnDelayRatio    *float64
	// PrefixPoolSize prompts of PrefixLength tokens are drawn once; the
	// first turn of each synthetic conversation starts with one of them
	// (--prompt-prefix-pool-size, --prompt-prefix-length).
	PrefixPoolSize int
	PrefixLength   int
	// SharedSystemLength is the length of one system prompt shared by
	// every synthetic conversation (--shared-system-prompt-length); 0 for
	// none.
	SharedSystemLength int
	// UserContextLength is the length of a user context prompt distinct to
	// each synthetic conversation (--user-context-prompt-length); 0 for
	// none.
	UserContextLength int

	// FixedSchedule replays the file at its timestamps: every
	// conversation's first turn must carry one (--fixed-schedule).
	FixedSchedule bool
	// AutoOffset shifts the schedule so that its first timestamp is 0
	// (--fixed-schedule-auto-offset).
	AutoOffset bool
	// StartOffsetMs and EndOffsetMs keep only the rows whose timestamp is
	// within [start, end] (inclusive; rows without a timestamp are kept);
	// nil means unbounded (--fixed-schedule-start-offset, -end-offset).
	// Without AutoOffset the schedule's zero is StartOffsetMs, or 0.
	StartOffsetMs *float64
	EndOffsetMs   *float64

	// Images are the synthetic images of each turn (--image-*), when
	// Images.Enabled().
	Images media.ImageOptions
	// Audios are the synthetic audios of each turn (--audio-*), when
	// Audios.Enabled().
	Audios media.AudioOptions
	// Videos are the synthetic videos of each turn (--video-*), when
	// Videos.Enabled().
	Videos media.VideoOptions

	// IgnoreDelays drops the timestamps and delays of a file's turns,
	// unless FixedSchedule (--ignore-trace-delays); DelayCapMs, when set,
	// clamps each turn's delay (--inter-turn-delay-cap-seconds).
	IgnoreDelays bool
	DelayCapMs   *float64
	// Replay holds the trace-replay controls of a JSONL file: session
	// sampling, idle-gap caps, closed-loop and strict replay (replay.go);
	// a weka_trace honours its TraceIdleGapCapMs, compressing each gap
	// between a trace's consecutive request starts (wekaset.go).
	Replay Replay
	// MaxISL, when set, drops a weka_trace's API calls and a
	// baseten_trace's rows of more input tokens, and MaxOSL caps their max
	// tokens (a weka_trace's main agents' only) (--synthesis-max-isl,
	// --synthesis-max-osl, AIPerf's filters for these traces).
	MaxISL, MaxOSL int
	// WekaBasis is how a weka_trace's subagent request times are read:
	// one of WekaBases, "" for WekaBasisAuto (--weka-nested-timestamp-basis;
	// wekabasis.go).
	WekaBasis string

	// UUIDAndStrip strips the bytes of an image a single_turn session
	// already sent with its image_uuids entry (--uuid-and-strip,
	// imageuuids.go).
	UUIDAndStrip bool

	// Sampling is the --dataset-sampling-strategy (SamplingSequential,
	// SamplingRandom, SamplingShuffle), or "" for the data's default.
	Sampling string

	// Corpus is the --prompt-corpus synthetic prompts are cut from: one of
	// Corpora, or "" for CorpusSonnet.
	Corpus string
	// RangeRatio, when set, draws synthetic ISLs and OSLs uniformly from
	// windows around ISLMean and OSLMean instead of normal distributions
	// (--random-range-ratio; rangeratio.go); ISLStddev, OSLStddev and
	// SeqDist are then unset.
	RangeRatio *RangeRatio
	// CorpusStyle is --random-corpus-style, CorpusStyleVLLM ("" too) or
	// CorpusStyleSGLang: RangeRatio's windows, and the token pool of
	// CorpusRandom.
	CorpusStyle string
}

// validate checks the options of Synthetic.
func (o Options) validate() error {
	var errs []error
	if o.ISLMean < 1 {
		errs = append(errs, fmt.Errorf("input tokens mean must be at least 1, got %d", o.ISLMean))
	}
	if o.OSLMean < 0 {
		errs = append(errs, fmt.Errorf("output tokens mean must not be negative, got %d", o.OSLMean))
	}
	if !finiteNonNegative(o.ISLStddev) {
		errs = append(errs, fmt.Errorf("input tokens stddev must be a finite number ≥ 0, got %v", o.ISLStddev))
	}
	if !finiteNonNegative(o.OSLStddev) {
		errs = append(errs, fmt.Errorf("output tokens stddev must be a finite number ≥ 0, got %v", o.OSLStddev))
	}
	if o.Entries < 1 {
		errs = append(errs, fmt.Errorf("number of dataset entries must be at least 1, got %d", o.Entries))
	}
	if err := o.checkRange(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("synthetic dataset: %w", err)
	}
	return nil
}

// validateOpen checks the options of Open, all problems at once, with
// AIPerf's messages where it has one.
func (o Options) validateOpen() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if o.CustomType != "" && !slices.Contains(CustomTypes, o.CustomType) && !IsSpeedBenchType(o.CustomType) {
		bad("unknown custom dataset type %q: expected one of %v or speed_bench_<config>", o.CustomType, CustomTypes)
	}
	if o.PublicDataset != "" && !slices.Contains(PublicDatasets, o.PublicDataset) {
		bad("unknown public dataset %q: expected one of %v", o.PublicDataset, PublicDatasets)
	}
	if o.Corpus != "" && !slices.Contains(Corpora, o.Corpus) {
		bad("unknown prompt corpus %q: expected one of %v (AIPerf's coding corpus is not built here)", o.Corpus, Corpora)
	}
	if o.PublicDataset != "" && o.CustomType != "" {
		bad("the --public-dataset and --custom-dataset-type options cannot be set together")
	}
	if o.InputFile == "" {
		switch {
		case o.PublicDataset != "":
			bad("--public-dataset %s reads a local copy given with --input-file (it is never downloaded)", o.PublicDataset)
		case o.CustomType != "":
			bad("custom dataset type requires --input-file to be provided")
		case o.FixedSchedule:
			bad("fixed schedule requires a file to be provided")
		case o.UUIDAndStrip:
			bad("--uuid-and-strip strips the repeated images of an input file's sessions (single_turn records with image_uuids): give --input-file, or remove the option")
		}
	}
	if o.UUIDAndStrip && o.PublicDataset != "" {
		bad("--uuid-and-strip strips repeated images of single_turn sessions; --public-dataset %s has none (remove the option)", o.PublicDataset)
	}
	if o.Sampling != "" && !slices.Contains([]string{SamplingSequential, SamplingRandom, SamplingShuffle}, o.Sampling) {
		bad("unknown dataset sampling strategy %q: expected sequential, random or shuffle", o.Sampling)
	}
	if o.Sampling != "" && o.FixedSchedule {
		bad("dataset sampling strategy is not compatible with fixed schedule mode: remove the --dataset-sampling-strategy option")
	}
	if o.OSLMean < 0 || !finiteNonNegative(o.OSLStddev) {
		bad("output tokens mean must not be negative and its stddev must be a finite number ≥ 0, got %d and %v", o.OSLMean, o.OSLStddev)
	}
	if o.BlockSize < 0 {
		bad("prompt input tokens block size must be at least 1, got %d", o.BlockSize)
	}
	if o.Entries < 0 || o.Conversations < 0 {
		bad("numbers of dataset entries and conversations must not be negative, got %d and %d", o.Entries, o.Conversations)
	}
	if o.TurnMean < 0 {
		bad("conversation turn mean must be at least 1, got %d", o.TurnMean)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"conversation turn stddev", o.TurnStddev}, {"conversation turn delay mean", o.TurnDelayMeanMs},
		{"conversation turn delay stddev", o.TurnDelayStddevMs}} {
		if !finiteNonNegative(f.v) {
			bad("%s must be a finite number ≥ 0, got %v", f.name, f.v)
		}
	}
	if o.TurnDelayRatio != nil && !finiteNonNegative(*o.TurnDelayRatio) {
		bad("conversation turn delay ratio must be a finite number ≥ 0, got %v", *o.TurnDelayRatio)
	}
	if o.PrefixPoolSize < 0 || o.PrefixLength < 0 || o.SharedSystemLength < 0 || o.UserContextLength < 0 {
		bad("prefix pool size and prompt lengths must not be negative")
	}
	if o.PrefixLength > 0 && o.PrefixPoolSize == 0 {
		bad("--prompt-prefix-length %d needs --prompt-prefix-pool-size of at least 1 (the prefix prompts pool is empty)", o.PrefixLength)
	}
	if (o.SharedSystemLength > 0 || o.UserContextLength > 0) && (o.PrefixLength > 0 || o.PrefixPoolSize > 0) {
		bad("cannot use both --shared-system-prompt-length/--user-context-prompt-length and " +
			"--prompt-prefix-length/--prompt-prefix-pool-size: these are mutually exclusive prompt configuration modes")
	}
	for _, off := range []*float64{o.StartOffsetMs, o.EndOffsetMs} {
		if off != nil && !finiteNonNegative(*off) {
			bad("fixed schedule offsets must be finite numbers of ms ≥ 0, got %v", *off)
		}
	}
	if o.StartOffsetMs != nil && o.AutoOffset {
		bad("the --fixed-schedule-start-offset and --fixed-schedule-auto-offset options cannot be used together")
	}
	if o.StartOffsetMs != nil && o.EndOffsetMs != nil && *o.StartOffsetMs > *o.EndOffsetMs {
		bad("the --fixed-schedule-start-offset must be less than or equal to the --fixed-schedule-end-offset")
	}
	return errors.Join(errs...)
}

// entries is the number of synthetic conversations or random_pool samples.
func (o Options) entries() int {
	switch {
	case o.Entries > 0:
		return o.Entries
	case o.Conversations > 0:
		return o.Conversations
	}
	return DefaultEntries
}

func (o Options) blockSize() int { return o.blockSizeOf(TypeMooncakeTrace) }

// blockSizeOf is the tokens per hash id of a file of record type kind.
func (o Options) blockSizeOf(kind string) int {
	switch {
	case o.BlockSize != 0:
		return o.BlockSize
	case kind == TypeBailianTrace:
		return BailianBlockSize
	}
	return DefaultBlockSize
}

func (o Options) delayRatio() float64 {
	if o.TurnDelayRatio == nil {
		return 1
	}
	return *o.TurnDelayRatio
}

func finiteNonNegative(v float64) bool { return v >= 0 && !math.IsInf(v, 0) }

// TemplateOverhead is what a chat template adds to a conversation's
// tokens: First on a request's first user turn (the fixed cost of a
// request, its BOS and generation prompt, and one message's wrapping),
// Later on each later user turn (a message's wrapping).
type TemplateOverhead struct{ First, Later int }

// of is the overhead of turn k.
func (t TemplateOverhead) of(k int) int {
	if k == 0 {
		return t.First
	}
	return t.Later
}
