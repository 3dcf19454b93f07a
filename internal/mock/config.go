package mock

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/aiperf-go/aiperf/internal/kvcache"
)

// Config is the mock server's flag set. It carries kong tags so both CLIs
// (`aiperf-mock-server` and `aiperf mock-server`) embed it unchanged.
type Config struct {
	Host string `name:"host" default:"127.0.0.1" help:"Address to listen on."`
	Port int    `name:"port" short:"p" default:"8000" help:"Port to listen on (0 picks a free port)."`

	TTFT    float64 `name:"ttft" default:"20" placeholder:"MS" help:"Time to first token in milliseconds (default ${default})."`
	ITL     float64 `name:"itl" default:"5" placeholder:"MS" help:"Inter-token latency in milliseconds (default ${default})."`
	Prefill float64 `name:"prefill-us-per-token" default:"0" placeholder:"US" help:"Extra time to first token per uncached prompt token (prompt_tokens - cached_tokens), in microseconds (default ${default})."`
	// The continuous-batching terms of the latency model (docs/mock.md).
	ITLPerSeq     float64 `name:"itl-concurrency-lin-ms" default:"0" placeholder:"MS" help:"Decode step time added per running sequence: a step costs --itl + this × the requests generating when it begins, as AIPerf's mock (default ${default})."`
	ITLPerOSL     float64 `name:"itl-per-osl-token-ms" default:"0" placeholder:"MS" help:"Decode step time added per output token of the request (its max_tokens), as AIPerf's mock (default ${default})."`
	TrialJitterCV float64 `name:"trial-jitter-cv" default:"0" placeholder:"CV" help:"Trial-to-trial noise: every latency is scaled by a lognormal draw of mean 1 and this coefficient of variation, drawn at start and again at every prefix-cache reset, seeded by --random-seed (default ${default}: no noise)."`
	Fast          bool    `name:"fast" help:"No token latency at all (sets every latency flag to 0)."`
	// ImageGenUSPerPixel prices image generation (docs/multimodal.md).
	VideoGenMSPerFrame float64 `name:"video-gen-ms-per-frame" default:"0" placeholder:"MS" help:"Time a /v1/videos job takes per frame (num_frames, else seconds × fps, 4 s at 16 fps by default) after --ttft, in milliseconds (default ${default})."`
	ImageGenUSPerPixel float64 `name:"image-gen-us-per-pixel" default:"0" placeholder:"US" help:"Time to generate each pixel of each image /v1/images/generations and /v1/images/edits return, after the prompt's prefill, in microseconds (default ${default})."`

	Model      string  `name:"model" default:"mock-model" help:"Model id listed by /v1/models (requests for any model are accepted); a llava-1.5 id counts each image as LLaVA-1.5 does (576 tokens), any other as Qwen2-VL."`
	APIKey     string  `name:"api-key" help:"Require 'Authorization: Bearer <key>' on inference routes."`
	ErrorRate  float64 `name:"error-rate" default:"0" placeholder:"PERCENT" help:"Share of inference requests, 0-100, answered with HTTP 500 (default ${default})."`
	RandomSeed int64   `name:"random-seed" default:"0" help:"Seed for injected errors and unbounded output lengths."`
	AccessLogs bool    `name:"access-logs" help:"Log one line per request (method, path, status, duration) to stderr, admin calls included."`

	AdminFailStatus   int     `name:"admin-fail-status" placeholder:"CODE" help:"HTTP status the first --admin-fail-count admin calls answer."`
	AdminFailCount    int     `name:"admin-fail-count" placeholder:"N" help:"Number of admin calls (reset, flush, start, stop; one shared count) that answer --admin-fail-status."`
	AdminLatencyMS    float64 `name:"admin-latency-ms" placeholder:"MS" help:"Delay before answering each admin call, in milliseconds."`
	ResetSuccessFalse bool    `name:"reset-success-false" help:"Answer /reset_prefix_cache with 200 {\"success\": false} and keep the prefix cache, as vLLM does when blocks are busy."`
	ResetNoop         bool    `name:"reset-noop" help:"Answer /reset_prefix_cache and /flush_cache as usual but keep the prefix cache (a reset that reports success without resetting, vllm#57727)."`
	NoCacheReport     bool    `name:"no-cache-report" help:"Leave the cached-token counts (usage.prompt_tokens_details.cached_tokens, and the Responses and Messages fields) out of replies, like vLLM without --enable-prompt-tokens-details."`
	SpecDecodeStats   bool    `name:"spec-decode-stats" help:"Report each chat and completions reply's speculative-decoding acceptance at the response root, metrics.speculative_decoding (on a stream's usage frame), like vLLM with --per-request-spec-decode-metrics summary."`
	FirstChunkTokens  int     `name:"first-chunk-tokens" default:"1" placeholder:"N" help:"Output tokens the first content chunk of a streamed chat or completions reply carries, as a server that streams several tokens at a time (TRT-LLM's stream_interval) bundles them; it goes out when its last token is due, every later chunk carries one (default ${default})."`

	BlockSize        int  `name:"block-size" default:"16" placeholder:"TOKENS" help:"Prefix-cache block size in tokens: prompts are cached and matched in whole blocks (default ${default}, as vLLM)."`
	KVCacheTokens    int  `name:"kv-cache-tokens" default:"0" placeholder:"TOKENS" help:"KV-cache capacity in tokens; cached blocks beyond it are evicted least recently used first (default 0: the largest the mock allows, 2,097,152 blocks)."`
	MaxNumSeqs       int  `name:"max-num-seqs" default:"0" placeholder:"N" help:"At most N requests generate at once; later ones wait in a FIFO queue and their time to first token includes the wait (default 0: no limit)."`
	MaxBatchedTokens int  `name:"max-num-batched-tokens" default:"0" placeholder:"TOKENS" help:"Per-step token budget, as vLLM's: an uncached prompt longer than it is prefilled in chunks, one engine step each (default 0: no limit, one step)."`
	MaxModelLen      int  `name:"max-model-len" default:"1048576" placeholder:"TOKENS" help:"The model's context length, as vLLM's: a prompt that fills it (as many tokens or more), or a max_tokens past what it leaves, is refused with 400; without max_tokens the output stops there (default ${default}; 0: the default)."`
	GPUMetrics       bool `name:"gpu-metrics" help:"Serve DCGM-exporter-like metrics of synthetic GPUs, loaded by the running requests, at GET /dcgm/metrics."`
	GPUs             int  `name:"gpus" default:"1" placeholder:"N" help:"Number of synthetic GPUs under --gpu-metrics (default ${default})."`

	// CountTokens counts a prompt's tokens for usage.prompt_tokens when
	// EncodeTokens is nil; nil approximates one token per four bytes.
	// Results are cached per prompt.
	CountTokens func(string) int `kong:"-"`
	// EncodeTokens turns prompt text into token ids for usage.prompt_tokens
	// and the prefix cache's block hashes (both CLIs use o200k_base). Without
	// it, token ids are synthetic: whole 4-byte chunks of the text, or
	// ids derived from each text as a whole under CountTokens (so only whole
	// identical messages share blocks), and replies are not cached.
	EncodeTokens func(string) []int `kong:"-"`
	// AccessLog receives the --access-logs lines; nil means os.Stderr.
	AccessLog io.Writer `kong:"-"`
}

// Defaults for the zero Config (kong applies the same ones from the tags).
const (
	defaultModel = "mock-model"
	defaultHost  = "127.0.0.1"
)

// Validate checks every flag and returns the first problem, naming the flag.
// New calls it; kong calls it after parsing when Config is the root grammar.
func (c *Config) Validate() error {
	for _, f := range []struct {
		flag string
		v    float64
	}{{"ttft", c.TTFT}, {"itl", c.ITL}, {"prefill-us-per-token", c.Prefill}, {"itl-concurrency-lin-ms", c.ITLPerSeq},
		{"itl-per-osl-token-ms", c.ITLPerOSL}, {"trial-jitter-cv", c.TrialJitterCV}, {"error-rate", c.ErrorRate},
		{"admin-latency-ms", c.AdminLatencyMS}, {"image-gen-us-per-pixel", c.ImageGenUSPerPixel}, {"video-gen-ms-per-frame", c.VideoGenMSPerFrame}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return fmt.Errorf("--%s must be a finite number, got %g", f.flag, f.v)
		}
	}
	for _, f := range []struct {
		flag, unit string
		v, max     float64
	}{{"ttft", "ms", c.TTFT, maxLatencyMS}, {"itl", "ms", c.ITL, maxLatencyMS},
		{"prefill-us-per-token", "us", c.Prefill, maxLatencyUS}, {"itl-concurrency-lin-ms", "ms", c.ITLPerSeq, maxLatencyMS},
		{"itl-per-osl-token-ms", "ms", c.ITLPerOSL, maxLatencyMS}, {"admin-latency-ms", "ms", c.AdminLatencyMS, maxLatencyMS},
		{"video-gen-ms-per-frame", "ms", c.VideoGenMSPerFrame, maxLatencyMS}, {"image-gen-us-per-pixel", "us", c.ImageGenUSPerPixel, maxLatencyUS}} {
		if f.v < 0 || f.v > f.max {
			return fmt.Errorf("--%s must be between 0 and %.0f %s (one hour), got %g", f.flag, f.max, f.unit, f.v)
		}
	}
	switch {
	case c.Port < 0 || c.Port > 65535:
		return fmt.Errorf("--port must be between 0 and 65535, got %d", c.Port)
	case c.TrialJitterCV < 0 || c.TrialJitterCV > maxTrialJitterCV:
		return fmt.Errorf("--trial-jitter-cv must be between 0 and %g, got %g", float64(maxTrialJitterCV), c.TrialJitterCV)
	case c.ErrorRate < 0 || c.ErrorRate > 100:
		return fmt.Errorf("--error-rate must be a percentage between 0 and 100, got %g", c.ErrorRate)
	case c.AdminFailCount < 0:
		return fmt.Errorf("--admin-fail-count must be >= 0, got %d", c.AdminFailCount)
	case c.AdminFailCount > 0 && c.AdminFailStatus == 0:
		return fmt.Errorf("--admin-fail-count needs --admin-fail-status")
	case c.AdminFailStatus != 0 && (c.AdminFailStatus < 200 || c.AdminFailStatus > 599):
		return fmt.Errorf("--admin-fail-status must be an HTTP status between 200 and 599, got %d", c.AdminFailStatus)
	case c.AdminFailStatus != 0 && c.AdminFailCount == 0:
		return fmt.Errorf("--admin-fail-status needs --admin-fail-count >= 1")
	case c.BlockSize < 1 || c.BlockSize > maxBlockSize:
		return fmt.Errorf("--block-size must be between 1 and %d tokens, got %d", maxBlockSize, c.BlockSize)
	case c.KVCacheTokens < 0:
		return fmt.Errorf("--kv-cache-tokens must be >= 0 (0: the largest allowed), got %d", c.KVCacheTokens)
	case c.KVCacheTokens > 0 && c.KVCacheTokens < c.BlockSize:
		return fmt.Errorf("--kv-cache-tokens must hold at least one block of --block-size %d tokens, got %d", c.BlockSize, c.KVCacheTokens)
	case c.KVCacheTokens > kvcache.MaxBlocks*c.BlockSize:
		return fmt.Errorf("--kv-cache-tokens must be at most %d (%d blocks of --block-size %d), got %d",
			kvcache.MaxBlocks*c.BlockSize, kvcache.MaxBlocks, c.BlockSize, c.KVCacheTokens)
	case c.MaxModelLen < 0:
		return fmt.Errorf("--max-model-len must be >= 0 (0: the default, %d tokens), got %d", defaultMaxModelLen, c.MaxModelLen)
	case c.MaxNumSeqs < 0:
		return fmt.Errorf("--max-num-seqs must be >= 0 (0: no limit), got %d", c.MaxNumSeqs)
	case c.MaxBatchedTokens < 0:
		return fmt.Errorf("--max-num-batched-tokens must be >= 0 (0: no limit), got %d", c.MaxBatchedTokens)
	case c.MaxBatchedTokens > 0 && c.MaxBatchedTokens < c.MaxNumSeqs:
		return fmt.Errorf("--max-num-batched-tokens (%d) must be >= --max-num-seqs (%d), as in vLLM: every running sequence takes a token of each step", c.MaxBatchedTokens, c.MaxNumSeqs)
	case c.FirstChunkTokens < 1 || c.FirstChunkTokens > maxFirstChunkTokens:
		return fmt.Errorf("--first-chunk-tokens must be between 1 and %d, got %d", maxFirstChunkTokens, c.FirstChunkTokens)
	case c.GPUMetrics && (c.GPUs < 1 || c.GPUs > maxGPUs):
		return fmt.Errorf("--gpus must be between 1 and %d with --gpu-metrics, got %d", maxGPUs, c.GPUs)
	}
	return nil
}

// maxLatencyMS and maxLatencyUS bound every latency flag, in its unit, to
// one hour: a time, or a time per token, per running sequence, per pixel or
// per frame. The durations the mock computes from them saturate at
// maxDelay (model.go), so no count they multiply can overflow.
const (
	maxLatencyMS = 3_600_000
	maxLatencyUS = 3_600_000_000
)

// maxTrialJitterCV bounds --trial-jitter-cv (a lognormal of CV 10 already
// puts most of its mass near 0).
const maxTrialJitterCV = 10

// Bounds of the cache and GPU flags. A zero --block-size is invalid, but
// New gives the zero Config's the default first (Serve validates the flags
// as given).
const (
	defaultBlockSize = 16
	maxBlockSize     = 4096
	maxGPUs          = 64
)

// cacheBlocks returns the prefix cache's capacity in blocks.
func (c *Config) cacheBlocks() int { return kvcache.Blocks(c.KVCacheTokens, c.BlockSize) }

// model returns the latency model in effect (no latency under --fast).
func (c *Config) model() latencyModel {
	m := latencyModel{budget: c.MaxBatchedTokens}
	if c.Fast {
		return m
	}
	m.ttft, m.itl, m.perSeq, m.perOSL = msDuration(c.TTFT), msDuration(c.ITL), msDuration(c.ITLPerSeq), msDuration(c.ITLPerOSL)
	m.prefill = usDuration(c.Prefill)
	return m
}

// msDuration converts milliseconds to the nearest nanosecond (4.35 ms is
// 4,350,000 ns, not the 4,349,999 its float product truncates to).
func msDuration(ms float64) time.Duration {
	return floatDuration(ms * float64(time.Millisecond))
}

// usDuration converts microseconds to the nearest nanosecond.
func usDuration(us float64) time.Duration {
	return floatDuration(us * float64(time.Microsecond))
}
