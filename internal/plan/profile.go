package plan

import (
	"fmt"
	"reflect"
)

// Endpoint types.
const (
	EndpointChat        = "chat"
	EndpointCompletions = "completions"
)

// Request-rate modes.
const (
	RateConstant = "constant"
	RatePoisson  = "poisson"
	RateGamma    = "gamma" // gamma gaps of shape Phase.Smoothness (vLLM's --burstiness)
	// RateConcurrencyBurst is AIPerf's name for concurrency mode: no rate,
	// each send the instant a --concurrency slot is free.
	RateConcurrencyBurst = "concurrency_burst"
)

// What a rate phase does with a send that finds its in-flight cap full
// (--cap-policy).
const (
	CapSkip  = "skip"  // AIPerf's: the send is dropped, the schedule goes on
	CapDelay = "delay" // the send waits for a slot, keeping its scheduled time
)

// Phase kinds.
const (
	KindWarmup    = "warmup"
	KindProfiling = "profiling"
)

// Model selection strategies (--model-selection-strategy); "" is
// round robin.
const (
	ModelRoundRobin = "round_robin"
	ModelRandom     = "random"
)

// Wait-for-model modes (--wait-for-model-mode).
const (
	WaitModels    = "models"
	WaitInference = "inference"
	WaitBoth      = "both"
)

// DefaultWaitForModelInterval is the seconds between readiness probes.
const DefaultWaitForModelInterval = 5.0

// Default control-hook settings (AIPerf §10).
const (
	DefaultResetPath            = "/reset_prefix_cache"
	DefaultProfilerStartPath    = "/start_profile"
	DefaultProfilerStopPath     = "/stop_profile"
	DefaultHookTimeoutSeconds   = 30.0
	DefaultResetMaxRetrySeconds = 60.0
)

// Profile is one benchmark cell. Pointer fields are optional values whose zero
// is meaningful or invalid (so an explicit 0 can be told from "not given").
//
// Field order is the order of `aiperf profile --help`.
type Profile struct {
	// Endpoint.
	Model                   []string `json:"model,omitempty" short:"m" aliases:"model-names" sep:"," group:"Endpoint" placeholder:"NAME" help:"Model name sent in each request (alias --model-names; several comma-separated or repeated: round-robin per request)."`
	URL                     []string `json:"url,omitempty" short:"u" type:"list" default:"http://localhost:8000" group:"Endpoint" placeholder:"URL" help:"Server base URL; several (space-separated or the flag repeated) share the load as --url-strategy says (default ${default})."`
	URLStrategy             string   `json:"url_strategy,omitempty" name:"url-strategy" enum:",round_robin" default:"" group:"Endpoint" placeholder:"STRATEGY" help:"How requests are spread over several --url: round_robin (AIPerf's only strategy, the default), each session's first request to the next URL in turn and its later turns to the same one."`
	EndpointType            string   `json:"endpoint_type" name:"endpoint-type" default:"chat" enum:"chat,cohere_rankings,completions,responses,messages,chat_embeddings,embeddings,hf_tei_rankings,huggingface_generate,image_generation,image_edit,video_generation,image_retrieval,nim_embeddings,nim_rankings,raw,solido_rag,template,audio_transcription" group:"Endpoint" placeholder:"TYPE" help:"API shape: chat, completions, responses, messages, embeddings, chat_embeddings, nim_embeddings, nim_rankings, hf_tei_rankings, cohere_rankings, huggingface_generate, image_generation, image_edit, video_generation, image_retrieval, solido_rag, template, audio_transcription or raw (default ${default})."`
	ModelSelectionStrategy  string   `json:"model_selection_strategy,omitempty" name:"model-selection-strategy" enum:",round_robin,random,weighted" default:"" group:"Endpoint" placeholder:"STRATEGY" help:"With several --model: round_robin (the nth session gets model n mod count, the default) or random (uniform, seeded by --random-seed); a session keeps its model for every turn."`
	Endpoint                string   `json:"endpoint,omitempty" aliases:"custom-endpoint" group:"Endpoint" placeholder:"PATH" help:"Override the request path appended to every --url (alias --custom-endpoint)."`
	Streaming               bool     `json:"streaming,omitempty" group:"Endpoint" help:"Request SSE streaming (needed for TTFT and ITL)."`
	RequireStreamCompletion bool     `json:"require_stream_completion,omitempty" name:"require-stream-completion" group:"Endpoint" help:"Fail a streamed chat reply unless it ends with data: [DONE] (or, without it, with a finish_reason on every choice seen); an empty, malformed or non-chat data event, data after [DONE] and a reply that is not text/event-stream fail it too (needs --streaming and --endpoint-type chat)."`
	Header                  []string `json:"header,omitempty" short:"H" sep:"none" group:"Endpoint" placeholder:"K:V" help:"Extra HTTP headers on every request, as Key:Value (repeatable, or space-separated)."`
	APIKey                  string   `json:"api_key,omitempty" name:"api-key" group:"Endpoint" placeholder:"KEY" help:"API key, sent as Authorization: Bearer <key>. Never logged or stored."`
	// AWS SigV4 signing (sigv4.go).
	AuthType   string `json:"auth_type,omitempty" name:"auth-type" enum:",sigv4" default:"" group:"Endpoint" placeholder:"TYPE" help:"sigv4: sign every request with AWS Signature Version 4 (its Authorization; --api-key is not sent), with credentials read as the AWS CLI reads them (the environment, then --aws-profile of ~/.aws/credentials and ~/.aws/config)."`
	AWSRegion  string `json:"aws_region,omitempty" name:"aws-region" group:"Endpoint" placeholder:"REGION" help:"The AWS region of the signature's scope, e.g. us-west-2 (with --auth-type sigv4)."`
	AWSService string `json:"aws_service,omitempty" name:"aws-service" group:"Endpoint" placeholder:"NAME" help:"The AWS signing name: sagemaker (SageMaker Runtime), bedrock (Bedrock Runtime), execute-api (API Gateway) (with --auth-type sigv4)."`
	AWSProfile string `json:"aws_profile,omitempty" name:"aws-profile" group:"Endpoint" placeholder:"NAME" help:"The AWS credentials profile (default: AWS_PROFILE, else the environment's keys, else default) (with --auth-type sigv4)."`
	// AWS SageMaker Runtime transport (sagemaker.go): set by
	// --sagemaker-endpoint-name (or --transport sagemaker).
	SageMakerEndpointName           string   `json:"sagemaker_endpoint_name,omitempty" name:"sagemaker-endpoint-name" group:"Endpoint" placeholder:"NAME" help:"Send each request to SageMaker Runtime's /endpoints/NAME/invocations (invocations-response-stream when streaming), signed with SigV4, in --aws-region (AIPerf's SageMaker transport)."`
	SageMakerTargetModel            string   `json:"sagemaker_target_model,omitempty" name:"sagemaker-target-model" group:"Endpoint" placeholder:"MODEL" help:"X-Amzn-SageMaker-Target-Model: the model of a multi-model endpoint."`
	SageMakerInferenceComponentName string   `json:"sagemaker_inference_component_name,omitempty" name:"sagemaker-inference-component-name" group:"Endpoint" placeholder:"NAME" help:"X-Amzn-SageMaker-Inference-Component: the inference component to invoke."`
	SageMakerTargetVariant          string   `json:"sagemaker_target_variant,omitempty" name:"sagemaker-target-variant" group:"Endpoint" placeholder:"VARIANT" help:"X-Amzn-SageMaker-Target-Variant: the production variant to invoke."`
	ExtraInputs                     []string `json:"extra_inputs,omitempty" name:"extra-inputs" sep:"none" group:"Endpoint" placeholder:"K:V|JSON" help:"Extra request-body fields as key:value, or JSON objects (repeatable, or space-separated: --extra-inputs temperature:0.7 top_p:0.9)."`
	RedactParam                     []string `json:"redact_param,omitempty" name:"redact-param" sep:"," group:"Endpoint" placeholder:"NAME" help:"Treat this URL query parameter or --extra-inputs key as a secret, redacted wherever the API key is (repeatable; key, api_key, token, sig, signature, password, secret and other credential names always are)."`
	RequestTimeoutSeconds           float64  `json:"request_timeout_seconds" name:"request-timeout-seconds" default:"21600" group:"Endpoint" placeholder:"SECONDS" help:"Per-request timeout covering connect, send and receive (default ${default})."`
	WaitForModelTimeout             *float64 `json:"wait_for_model_timeout,omitempty" name:"wait-for-model-timeout" group:"Endpoint" placeholder:"SECONDS" help:"Before the reset hook and any load, probe the server every --wait-for-model-interval until it is ready, for up to this many seconds (default 0: no probe); a server still not ready fails the run with nothing sent."`
	WaitForModelMode                string   `json:"wait_for_model_mode,omitempty" name:"wait-for-model-mode" enum:"models,inference,both" default:"inference" group:"Endpoint" placeholder:"MODE" help:"How readiness is probed: models (GET /v1/models lists every --model), inference (a one-token request of the endpoint type succeeds) or both (default ${default})."`
	WaitForModelInterval            *float64 `json:"wait_for_model_interval,omitempty" name:"wait-for-model-interval" group:"Endpoint" placeholder:"SECONDS" help:"Seconds between readiness probes (default 5)."`
	MaxEventBytes                   *int     `json:"max_event_bytes,omitempty" name:"max-event-bytes" group:"Endpoint" placeholder:"BYTES" help:"Largest SSE line or event, and non-streaming body, accepted; a larger response fails (default 16 MiB)."`
	UseServerTokenCount             bool     `json:"use_server_token_count,omitempty" name:"use-server-token-count" group:"Endpoint" help:"Take ISL and OSL from the server's usage instead of counting with the tokenizer."`
	PerChunkUsage                   bool     `json:"per_chunk_usage,omitempty" name:"per-chunk-usage" group:"Endpoint" help:"Ask for usage on every streamed chunk (stream_options.continuous_usage_stats) and divide the inter-token latency by the output tokens after the first content chunk's reported count, not OSL-1 (needs --use-server-token-count, --streaming and --endpoint-type chat)."`
	ConnectionReuseStrategy         string   `json:"connection_reuse_strategy,omitempty" name:"connection-reuse-strategy" enum:",pooled,never,sticky-user-sessions" default:"" group:"Endpoint" placeholder:"STRATEGY" help:"pooled: every request shares one pool of kept-alive connections (the default); never: a new connection per request, closed after it; sticky-user-sessions: a connection per session, kept for its turns and closed after its last (for sticky load balancers)."`
	RequestContentType              string   `json:"request_content_type,omitempty" name:"request-content-type" enum:",application/json,multipart/form-data" default:"" group:"Endpoint" placeholder:"TYPE" help:"How request bodies are sent: application/json (the default) or multipart/form-data, a form field per key of the JSON body (strings as they are, other values as JSON), for servers that read forms."`
	SessionHeader                   string   `json:"session_header,omitempty" name:"session-header" group:"Endpoint" placeholder:"NAME" help:"Send each request's session id in this header instead of X-Correlation-ID (e.g. X-Session-ID), for routers that keep a session on one replica."`
	UseLegacyMaxTokens              bool     `json:"use_legacy_max_tokens,omitempty" name:"use-legacy-max-tokens" group:"Endpoint" help:"Send chat's output cap as max_tokens instead of max_completion_tokens, for servers that only read the older field."`

	// How the client reads its connections (clientio.go).
	ClientIO

	// Load.
	Concurrency                    *int     `json:"concurrency,omitempty" group:"Load" placeholder:"N" help:"Requests kept in flight (concurrency mode); with --request-rate, a cap on in-flight requests."`
	RequestRate                    *float64 `json:"request_rate,omitempty" name:"request-rate" group:"Load" placeholder:"RPS" help:"Open-loop target rate in requests/s."`
	RequestRateMode                string   `json:"request_rate_mode" name:"request-rate-mode" aliases:"arrival-pattern" default:"poisson" enum:"constant,poisson,gamma,concurrency_burst" group:"Load" placeholder:"MODE" help:"Arrival pattern for --request-rate (alias --arrival-pattern): constant, poisson or gamma (seeded); concurrency_burst is concurrency mode, without a rate: each send the instant a --concurrency slot is free (default ${default})."`
	ArrivalSmoothness              *float64 `json:"arrival_smoothness,omitempty" name:"arrival-smoothness" aliases:"vllm-burstiness" group:"Load" placeholder:"SHAPE" help:"Shape of the gamma inter-arrival gaps (alias --vllm-burstiness; mean gap still 1/rate): 1 is Poisson, below 1 burstier, above 1 more regular; makes the arrival pattern gamma (default 1)."`
	CapPolicy                      string   `json:"cap_policy,omitempty" name:"cap-policy" enum:",skip,delay" default:"" group:"Load" placeholder:"POLICY" help:"With --request-rate and --concurrency, what becomes of a new session's send that comes due while the cap is full: skip (AIPerf's, the default) drops it and the schedule goes on, counted as cap_skipped; delay waits for a free slot and sends late, counted as cap_delayed. A later turn of a running session always waits."`
	PrefillConcurrency             *int     `json:"prefill_concurrency,omitempty" name:"prefill-concurrency" group:"Load" placeholder:"N" help:"At most N requests in prefill at once (sent, no first token yet), on top of --concurrency (needs --streaming; at most --concurrency)."`
	ConcurrencyRampDuration        *float64 `json:"concurrency_ramp_duration,omitempty" name:"concurrency-ramp-duration" group:"Load" placeholder:"SECONDS" help:"Raise the concurrency (with --request-rate, the cap) from 1 to --concurrency over this many seconds, one more every ramp/(concurrency-1) seconds (the warmup too)."`
	PrefillConcurrencyRampDuration *float64 `json:"prefill_concurrency_ramp_duration,omitempty" name:"prefill-concurrency-ramp-duration" group:"Load" placeholder:"SECONDS" help:"Raise the --prefill-concurrency cap from 1 to its value over this many seconds, one more every ramp/(N-1) seconds (the warmup too, unless --warmup-prefill-concurrency-ramp-duration)."`
	RequestRateRampDuration        *float64 `json:"request_rate_ramp_duration,omitempty" name:"request-rate-ramp-duration" group:"Load" placeholder:"SECONDS" help:"Raise the request rate linearly from rate×0.1/ramp to --request-rate over this many seconds, keeping the arrival pattern (the warmup too)."`
	RequestRateSeries              string   `json:"request_rate_series,omitempty" name:"request-rate-series" group:"Load" placeholder:"FILE" help:"Send at a rate that follows this JSON file's points, {\"points\": [{\"time_s\": 0, \"qps\": 1}, {\"time_s\": 60, \"qps\": 40}]}: linear between points, the last rate held after them, in the --arrival-pattern (instead of --request-rate)."`
	// RateSeries are the points of the --request-rate-series file, read
	// before the run (so a sweep's trials carry them).
	RateSeries                           []RatePoint `json:"rate_series,omitempty" kong:"-"`
	UserCentricRate                      *float64    `json:"user_centric_rate,omitempty" name:"user-centric-rate" group:"Load" placeholder:"QPS" help:"User-centric mode at this total rate (needs --num-users and multi-turn data; takes precedence over --request-rate): each user sends a turn every num-users/QPS seconds, never two at once, starting from a steady-state mix of users; a new user joins each time one would have finished."`
	NumUsers                             *int        `json:"num_users,omitempty" name:"num-users" group:"Load" placeholder:"N" help:"Users of --user-centric-rate (a comma list is a sweep)."`
	RequestCount                         *int        `json:"request_count,omitempty" name:"request-count" aliases:"num-requests" group:"Load" placeholder:"N" help:"Profiling requests to send (alias --num-requests; default max(10, 2×concurrency) when no duration is set, and with a trace every line once)."`
	BenchmarkDuration                    *float64    `json:"benchmark_duration,omitempty" name:"benchmark-duration" group:"Load" placeholder:"SECONDS" help:"Seconds to send profiling requests for."`
	BenchmarkGracePeriod                 *float64    `json:"benchmark_grace_period,omitempty" name:"benchmark-grace-period" group:"Load" placeholder:"SECONDS" help:"Seconds to wait for in-flight requests after --benchmark-duration (default 30; inf: wait for all, as long as a year)."`
	WarmupRequestCount                   *int        `json:"warmup_request_count,omitempty" name:"warmup-request-count" aliases:"num-warmup-requests" group:"Load" placeholder:"N" help:"Warmup requests before profiling (> 0; omit for no warmup)."`
	WarmupDuration                       *float64    `json:"warmup_duration,omitempty" name:"warmup-duration" group:"Load" placeholder:"SECONDS" help:"Warmup seconds before profiling (> 0; omit for no warmup)."`
	NumWarmupSessions                    *int        `json:"num_warmup_sessions,omitempty" name:"num-warmup-sessions" group:"Warmup" placeholder:"N" help:"Warmup sessions (conversations) before profiling (> 0; AIPerf's stop order: requests, then sessions, then duration)."`
	WarmupConcurrency                    *int        `json:"warmup_concurrency,omitempty" name:"warmup-concurrency" group:"Warmup" placeholder:"N" help:"Warmup concurrency (default the profiling --concurrency, else 1; with a rate, a cap)."`
	WarmupRequestRate                    *float64    `json:"warmup_request_rate,omitempty" name:"warmup-request-rate" group:"Warmup" placeholder:"RPS" help:"Warmup request rate (default the profiling --request-rate)."`
	WarmupArrivalPattern                 string      `json:"warmup_arrival_pattern,omitempty" name:"warmup-arrival-pattern" enum:",constant,poisson,gamma" default:"" group:"Warmup" placeholder:"MODE" help:"Warmup arrival pattern: constant, poisson or gamma (with --arrival-smoothness) (default the profiling one)."`
	WarmupPrefillConcurrency             *int        `json:"warmup_prefill_concurrency,omitempty" name:"warmup-prefill-concurrency" group:"Warmup" placeholder:"N" help:"Warmup prefill cap (default --prefill-concurrency; needs --streaming)."`
	WarmupConcurrencyRampDuration        *float64    `json:"warmup_concurrency_ramp_duration,omitempty" name:"warmup-concurrency-ramp-duration" group:"Warmup" placeholder:"SECONDS" help:"Warmup concurrency ramp (default --concurrency-ramp-duration)."`
	WarmupRequestRateRampDuration        *float64    `json:"warmup_request_rate_ramp_duration,omitempty" name:"warmup-request-rate-ramp-duration" group:"Warmup" placeholder:"SECONDS" help:"Warmup request-rate ramp (default --request-rate-ramp-duration)."`
	WarmupPrefillConcurrencyRampDuration *float64    `json:"warmup_prefill_concurrency_ramp_duration,omitempty" name:"warmup-prefill-concurrency-ramp-duration" group:"Warmup" placeholder:"SECONDS" help:"Warmup prefill-concurrency ramp (default --prefill-concurrency-ramp-duration)."`
	WarmupGracePeriod                    *float64    `json:"warmup_grace_period,omitempty" name:"warmup-grace-period" group:"Warmup" placeholder:"SECONDS" help:"Seconds to wait for in-flight warmup requests after --warmup-duration (default: all of them)."`
	PrecisePacing                        bool        `json:"precise_pacing,omitempty" name:"precise-pacing" group:"Load" help:"Spin the last 2 ms before each scheduled send (costs one core; for high request rates)."`
	Phases                               []Phase     `json:"phases,omitempty" kong:"-"`
	RequestCancellationRate              *float64    `json:"request_cancellation_rate,omitempty" name:"request-cancellation-rate" group:"Load" placeholder:"PERCENT" help:"Abort this share (0-100] of the profiling requests, picked with --random-seed, --request-cancellation-delay after each was fully sent; reported apart as cancelled_request_count."`
	RequestCancellationDelay             *float64    `json:"request_cancellation_delay,omitempty" name:"request-cancellation-delay" group:"Load" placeholder:"SECONDS" help:"Seconds after a picked request was fully sent before it is aborted (default 0: at once)."`
	FailedRequestThreshold               *float64    `json:"failed_request_threshold,omitempty" name:"failed-request-threshold" group:"Load" placeholder:"RATIO" help:"End the profiling early once failed/finished profiling requests exceeds this ratio in [0, 1], checked after max(concurrency, 10) have finished; in-flight requests drain, the results are exported and the run fails (exit 1)."`
	Goodput                              string      `json:"goodput,omitempty" group:"Load" placeholder:"SLOS" help:"Service-level objectives as space-separated tag:value pairs in display units, e.g. \"time_to_first_token:200 inter_token_latency:20\": adds goodput (good requests/s), good_request_count and good_request_fraction."`

	// Dataset.
	SyntheticInputTokensMean   int     `json:"synthetic_input_tokens_mean" name:"synthetic-input-tokens-mean" aliases:"isl,prompt-input-tokens-mean" default:"550" group:"Dataset" placeholder:"TOKENS" help:"Mean prompt length in tokens (alias --isl) (default ${default})."`
	SyntheticInputTokensStddev float64 `json:"synthetic_input_tokens_stddev,omitempty" name:"synthetic-input-tokens-stddev" aliases:"isl-stddev,prompt-input-tokens-stddev" group:"Dataset" placeholder:"TOKENS" help:"Standard deviation of the prompt length (alias --isl-stddev)."`
	OutputTokensMean           *int    `json:"output_tokens_mean,omitempty" name:"output-tokens-mean" aliases:"osl,prompt-output-tokens-mean" group:"Dataset" placeholder:"TOKENS" help:"Mean max_tokens per request (alias --osl; omit to let the server decide)."`
	OutputTokensStddev         float64 `json:"output_tokens_stddev,omitempty" name:"output-tokens-stddev" aliases:"osl-stddev,prompt-output-tokens-stddev" group:"Dataset" placeholder:"TOKENS" help:"Standard deviation of max_tokens (alias --osl-stddev)."`
	SequenceDistribution       string  `json:"sequence_distribution,omitempty" name:"sequence-distribution" aliases:"seq-dist" group:"Dataset" placeholder:"MIX" help:"Draw each synthetic conversation's ISL and OSL (its max_tokens) from a mixture of pairs, AIPerf's grammar: ISL[|STDDEV],OSL[|STDDEV]:WEIGHT;... (weights relative), the bracket form [(ISL,OSL):WEIGHT,...] or JSON {\"pairs\": [{\"isl\", \"osl\", \"prob\", ...}]}; replaces --isl and --osl."`
	RandomSeed                 int64   `json:"random_seed" name:"random-seed" default:"0" group:"Dataset" placeholder:"SEED" help:"Seed for prompts, lengths and Poisson arrivals (default ${default})."`
	NumDatasetEntries          int     `json:"num_dataset_entries" name:"num-dataset-entries" aliases:"num-prompts" default:"100" group:"Dataset" placeholder:"N" help:"Distinct synthetic prompts, reused in shuffled order (default ${default})."`
	Tokenizer                  string  `json:"tokenizer,omitempty" group:"Dataset" placeholder:"NAME|PATH" help:"tokenizer.json file or directory, built-in name (o200k_base, cl100k_base) or Hugging Face model id from the local cache (default o200k_base)."`
	TokenizerRevision          string  `json:"tokenizer_revision,omitempty" name:"tokenizer-revision" group:"Dataset" placeholder:"REVISION" help:"Branch, tag or commit hash of the --tokenizer model id to use from the local Hugging Face cache (default main)."`
	ApplyChatTemplate          bool    `json:"apply_chat_template,omitempty" name:"apply-chat-template" group:"Dataset" help:"Count the ISL of chat requests through the tokenizer's chat template (chat_template.jinja or tokenizer_config.json beside its tokenizer.json), with the generation prompt, as the server's model reads them; tool schemas are counted on top."`
	ChatTemplateMaxSteps       *int    `json:"chat_template_max_steps,omitempty" name:"chat-template-max-steps" group:"Dataset" placeholder:"N" help:"Work allowed each chat-template render under --apply-chat-template, in steps of the template engine (about ten million a second; default 10000000, plus one for each 16 bytes of the conversation): a template that goes over it fails before traffic."`

	// Batched and rankings inputs (endpoints.go).
	PromptBatchSize int `json:"prompt_batch_size,omitempty" name:"prompt-batch-size" aliases:"batch-size-text,batch-size" short:"b" default:"1" group:"Prompt" placeholder:"N" help:"Texts per request for embeddings and nim_embeddings (default ${default})."`
	// PromptCorpus is the corpus synthetic prompts are cut from (prompt_corpus.go).
	PromptCorpus                      string `json:"prompt_corpus,omitempty" name:"prompt-corpus" enum:",sonnet,coding,random" default:"" group:"Prompt" placeholder:"CORPUS" help:"Text synthetic prompts are cut from: sonnet (the built-in prose, the default), coding (code and tool calls) or random (vllm bench serve's random prompts: consecutive vocabulary tokens, decoded, each exactly its ISL)."`
	RandomRangeRatio                  string `json:"random_range_ratio,omitempty" name:"random-range-ratio" group:"Prompt" placeholder:"R|JSON" help:"Draw each synthetic ISL and OSL uniformly from a window around --isl and --osl: vllm style [floor(mean*(1-R)), ceil(mean*(1+R))], R in [0, 1), or {\"input\": R, \"output\": R}; sglang style [max(1, int(mean*R)), mean], R in [0, 1] (needs --isl and --osl; not with --isl-stddev, --osl-stddev or --seq-dist)."`
	RandomCorpusStyle                 string `json:"random_corpus_style,omitempty" name:"random-corpus-style" enum:",vllm,sglang" default:"" group:"Prompt" placeholder:"STYLE" help:"vllm (default) or sglang: the window of --random-range-ratio, and the token pool of --prompt-corpus random (vllm: the vocabulary without special tokens; sglang: all of it)."`
	RankingsPassagesMean              *int   `json:"rankings_passages_mean,omitempty" name:"rankings-passages-mean" group:"Rankings" placeholder:"N" help:"Mean passages per rankings request (default 1)."`
	RankingsPassagesStddev            *int   `json:"rankings_passages_stddev,omitempty" name:"rankings-passages-stddev" group:"Rankings" placeholder:"N" help:"Standard deviation of the passages per request."`
	RankingsPassagesPromptTokenMean   *int   `json:"rankings_passages_prompt_token_mean,omitempty" name:"rankings-passages-prompt-token-mean" group:"Rankings" placeholder:"TOKENS" help:"Mean tokens per passage (default 550)."`
	RankingsPassagesPromptTokenStddev *int   `json:"rankings_passages_prompt_token_stddev,omitempty" name:"rankings-passages-prompt-token-stddev" group:"Rankings" placeholder:"TOKENS" help:"Standard deviation of the tokens per passage."`
	RankingsQueryPromptTokenMean      *int   `json:"rankings_query_prompt_token_mean,omitempty" name:"rankings-query-prompt-token-mean" group:"Rankings" placeholder:"TOKENS" help:"Mean tokens per query (default 550)."`
	RankingsQueryPromptTokenStddev    *int   `json:"rankings_query_prompt_token_stddev,omitempty" name:"rankings-query-prompt-token-stddev" group:"Rankings" placeholder:"TOKENS" help:"Standard deviation of the tokens per query."`

	// Image input (media.go).
	ImageWidthMean      float64 `json:"image_width_mean,omitempty" name:"image-width-mean" group:"Image input" placeholder:"PIXELS" help:"Mean width of the synthetic images sent with each chat request (with --image-height-mean; 0: no images)."`
	ImageWidthStddev    float64 `json:"image_width_stddev,omitempty" name:"image-width-stddev" group:"Image input" placeholder:"PIXELS" help:"Standard deviation of the image width."`
	ImageHeightMean     float64 `json:"image_height_mean,omitempty" name:"image-height-mean" group:"Image input" placeholder:"PIXELS" help:"Mean height of the synthetic images (with --image-width-mean)."`
	ImageHeightStddev   float64 `json:"image_height_stddev,omitempty" name:"image-height-stddev" group:"Image input" placeholder:"PIXELS" help:"Standard deviation of the image height."`
	ImageBatchSize      *int    `json:"image_batch_size,omitempty" name:"image-batch-size" aliases:"batch-size-image" group:"Image input" placeholder:"N" help:"Images per request (default 1; 0: none)."`
	ImageFormat         string  `json:"image_format,omitempty" name:"image-format" enum:",png,jpeg,random" default:"" group:"Image input" placeholder:"FORMAT" help:"png (default), jpeg, or random (each image either)."`
	ImageSource         string  `json:"image_source,omitempty" name:"image-source" group:"Image input" placeholder:"noise|DIR" help:"noise (default: random pixels, no two images alike) or a directory of PNG/JPEG/GIF images, sampled and resized."`
	ImageSourceSampling string  `json:"image_source_sampling,omitempty" name:"image-source-sampling" enum:",random-with-replacement,shuffle-cycle,sequential-cycle" default:"" group:"Image input" placeholder:"STRATEGY" help:"How a directory source's images are drawn: random-with-replacement (default), shuffle-cycle or sequential-cycle."`

	// Audio input (media.go).
	AudioLengthMean   float64   `json:"audio_length_mean,omitempty" name:"audio-length-mean" group:"Audio input" placeholder:"SECONDS" help:"Mean duration of the synthetic audios (Gaussian noise) sent with each chat request as input_audio (0: none)."`
	AudioLengthStddev float64   `json:"audio_length_stddev,omitempty" name:"audio-length-stddev" group:"Audio input" placeholder:"SECONDS" help:"Standard deviation of the audio duration."`
	AudioBatchSize    *int      `json:"audio_batch_size,omitempty" name:"audio-batch-size" aliases:"batch-size-audio" group:"Audio input" placeholder:"N" help:"Audios per request (default 1; 0: none)."`
	AudioFormat       string    `json:"audio_format,omitempty" name:"audio-format" enum:",wav,mp3" default:"" group:"Audio input" placeholder:"FORMAT" help:"wav (default) or mp3 (needs ffmpeg with libmp3lame)."`
	AudioDepths       []int     `json:"audio_depths,omitempty" name:"audio-depths" sep:"," group:"Audio input" placeholder:"BITS" help:"Bit depths drawn from for each audio: 8, 16, 24, 32 (default 16; comma-separated or repeated)."`
	AudioSampleRates  []float64 `json:"audio_sample_rates,omitempty" name:"audio-sample-rates" sep:"," group:"Audio input" placeholder:"KHZ" help:"Sample rates in kHz drawn from for each audio (default 16; comma-separated or repeated)."`
	AudioNumChannels  int       `json:"audio_num_channels,omitempty" name:"audio-num-channels" group:"Audio input" placeholder:"N" help:"1 (mono, default) or 2 (stereo)."`

	// Video input (media.go).
	VideoWidth            int      `json:"video_width,omitempty" name:"video-width" group:"Video input" placeholder:"PIXELS" help:"Width of the synthetic videos sent with each chat request (with --video-height; needs ffmpeg)."`
	VideoHeight           int      `json:"video_height,omitempty" name:"video-height" group:"Video input" placeholder:"PIXELS" help:"Height of the synthetic videos (with --video-width)."`
	VideoBatchSize        *int     `json:"video_batch_size,omitempty" name:"video-batch-size" aliases:"batch-size-video" group:"Video input" placeholder:"N" help:"Videos per request (default 1; 0: none)."`
	VideoDuration         *float64 `json:"video_duration,omitempty" name:"video-duration" group:"Video input" placeholder:"SECONDS" help:"Duration of each video (default 5)."`
	VideoFPS              *int     `json:"video_fps,omitempty" name:"video-fps" group:"Video input" placeholder:"FPS" help:"Frames per second (default 4)."`
	VideoSynthType        string   `json:"video_synth_type,omitempty" name:"video-synth-type" enum:",moving_shapes,grid_clock,noise" default:"" group:"Video input" placeholder:"TYPE" help:"moving_shapes (default), grid_clock or noise."`
	VideoFormat           string   `json:"video_format,omitempty" name:"video-format" enum:",webm,mp4" default:"" group:"Video input" placeholder:"FORMAT" help:"webm (default) or mp4."`
	VideoCodec            string   `json:"video_codec,omitempty" name:"video-codec" group:"Video input" placeholder:"CODEC" help:"ffmpeg video encoder (default libvpx-vp9)."`
	VideoAudioSampleRate  *float64 `json:"video_audio_sample_rate,omitempty" name:"video-audio-sample-rate" group:"Video input" placeholder:"HZ|KHZ" help:"Sample rate of the embedded audio track, in Hz or (96 and below) kHz (default 44100)."`
	VideoAudioNumChannels int      `json:"video_audio_num_channels,omitempty" name:"video-audio-num-channels" group:"Video input" placeholder:"N" help:"Embedded audio track: 0 (none, default), 1 or 2 channels."`
	VideoAudioCodec       string   `json:"video_audio_codec,omitempty" name:"video-audio-codec" enum:",aac,libvorbis,libopus" default:"" group:"Video input" placeholder:"CODEC" help:"Audio encoder (default libvorbis for webm, libopus for mp4)."`
	VideoAudioDepth       int      `json:"video_audio_depth,omitempty" name:"video-audio-depth" group:"Video input" placeholder:"BITS" help:"Bit depth of the embedded audio: 8, 16 (default), 24 or 32."`
	DownloadVideoContent  bool     `json:"download_video_content,omitempty" name:"download-video-content" group:"Video input" help:"video_generation: also download each finished video (GET /v1/videos/{id}/content), inside the request's latency."`
	UUIDAndStrip          bool     `json:"uuid_and_strip,omitempty" name:"uuid-and-strip" group:"Image input" help:"vLLM's multimodal cache: within a single_turn session, send an image whose image_uuids entry an earlier row sent as its uuid only (needs --input-file, chat)."`

	// Input files and traces.
	InputFile string `json:"input_file,omitempty" name:"input-file" group:"Input" placeholder:"PATH" help:"Dataset file (JSONL) or directory of files to send instead of synthetic prompts."`
	// InputRecords are a config file's inline dataset records, as JSONL;
	// InputFile is then InlineRecords until the command writes them to a
	// file (never exported or stored: the file is).
	InputRecords             string   `json:"-" kong:"-"`
	CustomDatasetType        string   `json:"custom_dataset_type,omitempty" name:"custom-dataset-type" default:"" group:"Input" placeholder:"TYPE" help:"Format of --input-file: single_turn, multi_turn, random_pool, mooncake_trace, bailian_trace, burst_gpt_trace, inputs_json, raw_payload, sagemaker_data_capture, baseten_trace (Parquet), weka_trace (a JSON file or directory), tracelab (JSONL, optionally gzipped) or speed_bench_<config>: qualitative, coding, humanities, math, multilingual, qa, rag, reasoning, roleplay, stem, summarization, writing, throughput_{1k,2k,8k,16k,32k}[_{low_entropy,mixed,high_entropy}] (default: detected from the file)."`
	PublicDataset            string   `json:"public_dataset,omitempty" name:"public-dataset" enum:",sharegpt,aimo,aimo_aime,aimo_numina_cot,aimo_numina_1_5,instruct_coder" default:"" group:"Input" placeholder:"NAME" help:"Read --input-file (JSON, JSON Lines or Parquet; nothing is downloaded) as a public dataset: sharegpt, aimo, aimo_aime, aimo_numina_cot, aimo_numina_1_5 or instruct_coder."`
	DatasetSamplingStrategy  string   `json:"dataset_sampling_strategy,omitempty" name:"dataset-sampling-strategy" enum:",sequential,random,shuffle" default:"" group:"Input" placeholder:"STRATEGY" help:"Order conversations are drawn in: sequential, random or shuffle (default: AIPerf's for the data: shuffle for synthetic and random_pool, sequential for files)."`
	FixedSchedule            bool     `json:"fixed_schedule,omitempty" name:"fixed-schedule" group:"Input" help:"Send each conversation's first turn at its timestamp (automatic for a trace whose records carry timestamps)."`
	NoFixedSchedule          bool     `json:"no_fixed_schedule,omitempty" name:"no-fixed-schedule" group:"Input" help:"Ignore a trace's timestamps and use --concurrency or --request-rate."`
	FixedScheduleAutoOffset  bool     `json:"fixed_schedule_auto_offset,omitempty" name:"fixed-schedule-auto-offset" group:"Input" help:"Shift the schedule so its first timestamp is sent at once."`
	FixedScheduleStartOffset *int     `json:"fixed_schedule_start_offset,omitempty" name:"fixed-schedule-start-offset" group:"Input" placeholder:"MS" help:"Replay only records at or after this timestamp (ms); it becomes the schedule's zero."`
	FixedScheduleEndOffset   *int     `json:"fixed_schedule_end_offset,omitempty" name:"fixed-schedule-end-offset" group:"Input" placeholder:"MS" help:"Replay only records at or before this timestamp (ms)."`
	ReplaySpeedup            *float64 `json:"replay_speedup,omitempty" name:"replay-speedup" group:"Input" placeholder:"X" help:"Replay a fixed schedule X times faster (timestamps and turn delays divided by X)."`
	IgnoreTraceDelays        bool     `json:"ignore_trace_delays,omitempty" name:"ignore-trace-delays" group:"Input" help:"Drop the timestamps and delays of a file's turns at load, so that --concurrency or --request-rate sends them back to back instead of replaying the recorded gaps; no effect on a fixed schedule (add --no-fixed-schedule to a timestamped trace)."`
	InterTurnDelayCapSeconds *float64 `json:"inter_turn_delay_cap_seconds,omitempty" name:"inter-turn-delay-cap-seconds" group:"Input" placeholder:"SECONDS" help:"Clamp each delay of a file's turns to at most this many seconds of replay time (after --replay-speedup)."`
	// Trace-replay controls (replay.go).
	TraceReplay

	// Conversations (multi-turn sessions).
	ConversationNum             *int     `json:"conversation_num,omitempty" name:"conversation-num" aliases:"num-conversations,num-sessions" group:"Conversation input" placeholder:"N" help:"Sessions to run: no new session starts after N, started ones finish (aliases --num-conversations, --num-sessions)."`
	ConversationTurnMean        int      `json:"conversation_turn_mean,omitempty" name:"conversation-turn-mean" aliases:"session-turns-mean" group:"Conversation input" placeholder:"N" help:"Mean turns per synthetic conversation (default 1: single-turn)."`
	ConversationTurnStddev      int      `json:"conversation_turn_stddev,omitempty" name:"conversation-turn-stddev" aliases:"session-turns-stddev" group:"Conversation input" placeholder:"N" help:"Standard deviation of the turns per synthetic conversation."`
	ConversationTurnDelayMean   float64  `json:"conversation_turn_delay_mean,omitempty" name:"conversation-turn-delay-mean" aliases:"session-turn-delay-mean" group:"Conversation input" placeholder:"MS" help:"Mean think time before each later turn, after the previous reply (ms)."`
	ConversationTurnDelayStddev float64  `json:"conversation_turn_delay_stddev,omitempty" name:"conversation-turn-delay-stddev" aliases:"session-turn-delay-stddev" group:"Conversation input" placeholder:"MS" help:"Standard deviation of the think time (ms)."`
	ConversationTurnDelayRatio  *float64 `json:"conversation_turn_delay_ratio,omitempty" name:"conversation-turn-delay-ratio" aliases:"session-delay-ratio" group:"Conversation input" placeholder:"X" help:"Scale every think time by X (default 1)."`

	// Trace synthesis (synthesis.go).
	TraceSynthesis

	// Prefix prompts.
	PromptInputTokensBlockSize int    `json:"prompt_input_tokens_block_size,omitempty" name:"prompt-input-tokens-block-size" aliases:"synthetic-input-tokens-block-size,isl-block-size" group:"Prefix prompt" placeholder:"TOKENS" help:"Tokens per trace hash id block (default 512)."`
	PromptPrefixPoolSize       int    `json:"prompt_prefix_pool_size,omitempty" name:"prompt-prefix-pool-size" aliases:"prefix-prompt-pool-size,num-prefix-prompts" group:"Prefix prompt" placeholder:"N" help:"Distinct prefixes, one drawn for each conversation's first turn."`
	PromptPrefixLength         int    `json:"prompt_prefix_length,omitempty" name:"prompt-prefix-length" aliases:"prefix-prompt-length" group:"Prefix prompt" placeholder:"TOKENS" help:"Tokens of each prefix."`
	SharedSystemPromptLength   *int   `json:"shared_system_prompt_length,omitempty" name:"shared-system-prompt-length" group:"Prefix prompt" placeholder:"TOKENS" help:"One system prompt of this many tokens, sent first in every request of every session."`
	SystemPrompt               string `json:"system_prompt,omitempty" name:"system-prompt" group:"Prefix prompt" placeholder:"TEXT" help:"A verbatim system prompt sent first in every request of every conversation, before a dataset's own system message (joined by a blank line); --isl still sizes the user prompt only (chat, responses, messages and chat_embeddings)."`
	SystemPromptFile           string `json:"system_prompt_file,omitempty" name:"system-prompt-file" group:"Prefix prompt" placeholder:"PATH" help:"--system-prompt read from this UTF-8 file, as it is."`
	UserContextPromptLength    *int   `json:"user_context_prompt_length,omitempty" name:"user-context-prompt-length" group:"Prefix prompt" placeholder:"TOKENS" help:"A user context of this many tokens per conversation, sent after the system prompt in each of its requests."`

	// Cache bust (AIPerf's --cache-bust targets; bench/cachebust.go).
	CacheBust string `json:"cache_bust,omitempty" name:"cache-bust" enum:",none,system_prefix,system_suffix,first_turn_prefix,first_turn_suffix,warmup_isolation_system,warmup_isolation_first_turn" default:"" group:"Prefix prompt" placeholder:"TARGET" help:"Defeat the server's prefix cache without a reset, AIPerf's targets: system_prefix, system_suffix, first_turn_prefix, first_turn_suffix put a marker [rid:<12 hex>] unique to each session at the start or end of its system message (else its first user turn) or first user turn; warmup_isolation_system, warmup_isolation_first_turn put [warmup] there in warmup requests only, so profiling reuses none of the warmup's work (default none)."`

	// Output.
	ProfileExportPrefix string `json:"profile_export_prefix,omitempty" name:"profile-export-prefix" aliases:"profile-export-file" group:"Output" placeholder:"NAME" help:"Base name of every export file in the artifact directory: NAME.json, NAME.csv, NAME.jsonl, NAME_server_metrics.json, ... (a known suffix such as .json is dropped first)."`
	// SummaryFormats is the YAML's artifacts.summary (AIPerf): the summary
	// exports to write, json and csv (default both); JSON is always written.
	SummaryFormats    []string `json:"summary_formats,omitempty" kong:"-"`
	ExportOutputsJSON *bool    `json:"export_outputs_json,omitempty" name:"export-outputs-json" negatable:"" group:"Output" help:"Write outputs.json: every request's generated text with its ids, times and lengths (default: with --export-level raw)."`
	ExportLevel       string   `json:"export_level,omitempty" name:"export-level" aliases:"profile-export-level" enum:",summary,records,raw" default:"" group:"Output" placeholder:"LEVEL" help:"summary: only the JSON and CSV summaries; records (default): also the per-request JSONL; raw: also profile_export_raw.jsonl, every request's payload and responses (secrets redacted; headers not written)."`

	ExportHTTPTrace bool `json:"export_http_trace,omitempty" name:"export-http-trace" group:"Output" help:"Trace every request's HTTP exchange (Go's net/http/httptrace) and write it to profile_export.jsonl as AIPerf's trace_data: timestamps, each read and write, the connection's addresses (with --export-level records or raw); the http_req_* metrics are exported too."`
	ShowTraceTiming bool `json:"show_trace_timing,omitempty" name:"show-trace-timing" group:"Output" help:"Trace every request's HTTP exchange and show AIPerf's HTTP Trace Timing table (http_req_blocked, dns_lookup, connecting, sending, waiting, receiving, ...) after the metrics table; the http_req_* metrics go to every export."`

	// Server metrics and GPU telemetry.
	ServerMetrics         []string `json:"server_metrics,omitempty" name:"server-metrics" type:"list" group:"Server metrics" placeholder:"URL" help:"Also scrape these Prometheus endpoints, space-separated or the flag repeated (every --url origin's /metrics is scraped by default)."`
	NoServerMetrics       bool     `json:"no_server_metrics,omitempty" name:"no-server-metrics" group:"Server metrics" help:"Do not scrape the server's /metrics."`
	ServerMetricsFormats  []string `json:"server_metrics_formats,omitempty" name:"server-metrics-formats" enum:"json,csv,jsonl,parquet" sep:"," group:"Server metrics" placeholder:"FORMAT" help:"Server metrics exports: json, csv, jsonl (the time series), parquet (the profiling span's time series, AIPerf's columns) (default json,csv)."`
	ServerMetricsInterval *float64 `json:"server_metrics_interval,omitempty" name:"server-metrics-interval" group:"Server metrics" placeholder:"SECONDS" help:"Seconds between scrapes (default 0.333)."`
	SliceDuration         *float64 `json:"slice_duration,omitempty" name:"slice-duration" group:"Server metrics" placeholder:"SECONDS" help:"Cut the run into windows of this many seconds: the client metrics of the requests that started in each go to profile_export_aiperf_timeslices.{json,csv}, and the server-metrics exports get statistics per window."`
	GPUTelemetry          []string `json:"gpu_telemetry,omitempty" name:"gpu-telemetry" type:"optionallist" group:"Server metrics" placeholder:"URL" help:"Also scrape these DCGM exporters for GPU telemetry, space-separated or the flag repeated; bare, only the default ones: http://localhost:9400/metrics and http://localhost:9401/metrics are scraped whenever they serve DCGM metrics, unless --no-gpu-telemetry ($AIPERF_GPU_DEFAULT_DCGM_ENDPOINTS replaces them). The keyword dashboard is accepted and changes nothing."`
	NoGPUTelemetry        bool     `json:"no_gpu_telemetry,omitempty" name:"no-gpu-telemetry" group:"Server metrics" help:"Do not collect GPU telemetry."`
	// ServerMetricsMaxSeries is an extension: AIPerf keeps every series.
	ServerMetricsMaxSeries *int `json:"server_metrics_max_series,omitempty" name:"server-metrics-max-series" group:"Server metrics" placeholder:"N" help:"Keep at most N series of each scraped endpoint, counted as Prometheus does (a histogram's bucket is one); the first of a larger scrape are kept and one warning says what was dropped (default 20000)."`

	// Network latency calibration.
	NetworkLatencyAutomatic    bool     `json:"network_latency_automatic,omitempty" name:"network-latency-automatic" group:"Network latency" help:"Measure the network round trip to each --url host:port while the load runs (a TCP handshake every --network-latency-ping-interval, no TLS; profile_export_network_latency.jsonl) and add network_rtt (their mean) and the network_adjusted_ TTFT, TTFO and request latency (each statistic less it, at least 0)."`
	NetworkLatencyMean         *float64 `json:"network_latency_mean,omitempty" name:"network-latency-mean" group:"Network latency" placeholder:"MS" help:"Take this round trip (ms) for network_rtt and the network_adjusted_ metrics instead of measuring it."`
	NetworkLatencyPingInterval *float64 `json:"network_latency_ping_interval,omitempty" name:"network-latency-ping-interval" group:"Network latency" placeholder:"SECONDS" help:"Seconds between the probes of --network-latency-automatic (default 1)."`

	// Control hooks.
	ResetKVCache                 bool     `json:"reset_kv_cache,omitempty" name:"reset-kv-cache" group:"Control hooks" help:"POST the KV/prefix-cache reset route of every server origin once, before any load."`
	ResetKVCachePath             []string `json:"reset_kv_cache_path,omitempty" name:"reset-kv-cache-path" sep:"none" group:"Control hooks" placeholder:"PATH" help:"Reset route (default /reset_prefix_cache; implies --reset-kv-cache); repeat it for several, POSTed in order to each origin."`
	ResetKVCacheTimeoutSeconds   *float64 `json:"reset_kv_cache_timeout_seconds,omitempty" name:"reset-kv-cache-timeout-seconds" group:"Control hooks" placeholder:"SECONDS" help:"Timeout per reset attempt (default 30; implies --reset-kv-cache)."`
	ResetKVCacheMaxRetrySeconds  *float64 `json:"reset_kv_cache_max_retry_seconds,omitempty" name:"reset-kv-cache-max-retry-seconds" group:"Control hooks" placeholder:"SECONDS" help:"Retry budget for transport errors and 409/423/429/503 (default 60; 0 = one attempt; implies --reset-kv-cache)."`
	ServerProfiler               bool     `json:"server_profiler,omitempty" name:"server-profiler" group:"Control hooks" help:"POST start/stop profile routes around each profiling phase (never warmup)."`
	ServerProfilerStartPath      string   `json:"server_profiler_start_path,omitempty" name:"server-profiler-start-path" group:"Control hooks" placeholder:"PATH" help:"Profiler start route (default /start_profile; implies --server-profiler)."`
	ServerProfilerStopPath       string   `json:"server_profiler_stop_path,omitempty" name:"server-profiler-stop-path" group:"Control hooks" placeholder:"PATH" help:"Profiler stop route (default /stop_profile; implies --server-profiler)."`
	ServerProfilerTimeoutSeconds *float64 `json:"server_profiler_timeout_seconds,omitempty" name:"server-profiler-timeout-seconds" group:"Control hooks" placeholder:"SECONDS" help:"Timeout per profiler call (default 30; implies --server-profiler)."`
	Server                       string   `json:"server,omitempty" enum:",vllm,sglang,trtllm,llamacpp" default:"" group:"Control hooks" placeholder:"NAME" help:"Apply a server's control-hook routes: vllm, sglang, trtllm or llamacpp (the reset erases every llama-server slot)."`

	// Integrations: where the run is streamed and exported (integrations.go).
	OtelURL                string   `json:"otel_url,omitempty" name:"otel-url" group:"Telemetry" placeholder:"URL" help:"Stream GenAI-convention metrics to this OpenTelemetry collector over OTLP/HTTP while the run goes: host[:port] or a URL; /v1/metrics is appended to a URL without it. An unreachable collector is one warning, never a failed run."`
	Stream                 []string `json:"stream,omitempty" name:"stream" sep:"," group:"Telemetry" placeholder:"DOMAIN" help:"What --otel-url streams: metrics (the gen_ai.client.* histograms), timing (aiperf.timing.* counters of sends, completions and errors) or default (both, the default; repeatable or comma-separated)."`
	OtelResourceAttributes []string `json:"otel_resource_attributes,omitempty" name:"otel-resource-attributes" sep:"none" group:"Telemetry" placeholder:"K=V" help:"Extra OpenTelemetry resource attributes as key=value pairs, comma-separated or repeated (team=inference,env=prod)."`
	GenAIProviderName      string   `json:"gen_ai_provider,omitempty" name:"gen-ai-provider" group:"Telemetry" placeholder:"NAME" help:"The gen_ai.provider.name attribute of the OpenTelemetry metrics and MLflow tag (default: inferred from the --url host, _OTHER when unknown)."`
	MLflowTrackingURI      string   `json:"mlflow_tracking_uri,omitempty" name:"mlflow-tracking-uri" group:"MLflow" placeholder:"URL" help:"Log the run to this MLflow tracking server through its REST API: live.* scalars while it goes, then summary metrics, parameters, tags and the export files (credentials: $MLFLOW_TRACKING_TOKEN or $MLFLOW_TRACKING_USERNAME/$MLFLOW_TRACKING_PASSWORD)."`
	MLflowExperiment       string   `json:"mlflow_experiment,omitempty" name:"mlflow-experiment" group:"MLflow" placeholder:"NAME" help:"MLflow experiment, created when it does not exist (default aiperf)."`
	MLflowRunName          string   `json:"mlflow_run_name,omitempty" name:"mlflow-run-name" group:"MLflow" placeholder:"NAME" help:"MLflow run name (default aiperf-<first 8 of the benchmark id>; a sweep's trials are named by their cell)."`
	MLflowTag              []string `json:"mlflow_tag,omitempty" name:"mlflow-tag" sep:"none" group:"MLflow" placeholder:"K:V" help:"MLflow run tag as key:value (repeatable, or comma-separated)."`
	MLflowArtifactGlob     []string `json:"mlflow_artifact_glob,omitempty" name:"mlflow-artifact-glob" sep:"none" group:"MLflow" placeholder:"GLOB" help:"Upload the artifact-directory files matching this glob instead of AIPerf's defaults (*.json, *.csv, *.jsonl, *.parquet, *_timeslices.*, **/*.png, ...; repeatable)."`
	MLflowParentRunID      string   `json:"mlflow_parent_run_id,omitempty" name:"mlflow-parent-run-id" group:"MLflow" placeholder:"ID" help:"Create the MLflow run as a child of this run (a sweep sets it to its own parent run)."`
	MetricsListen          string   `json:"metrics_listen,omitempty" name:"metrics-listen" group:"Telemetry" placeholder:"ADDR" help:"Serve the run's live client metrics in Prometheus format at http://ADDR/metrics (in flight, completed, errors by type, TTFT/ITL/latency histograms, achieved and target rate, phase), labelled by run, cell and phase."`
	MetricsLinger          *float64 `json:"metrics_linger,omitempty" name:"metrics-linger" group:"Telemetry" placeholder:"SECONDS" help:"After the run, keep --metrics-listen serving until it was scraped once more, for at most this many seconds, so the final counts reach Prometheus (default 60; 0: stop at once)."`
}

// Phase is one load phase. The CLI flags describe at most a warmup and a
// profiling phase; YAML may list several.
type Phase struct {
	Name        string  `json:"name"`
	Kind        string  `json:"kind"`                  // KindWarmup or KindProfiling
	Concurrency int     `json:"concurrency,omitempty"` // slots (concurrency mode) or in-flight cap (rate mode); 0 = no cap
	Rate        float64 `json:"rate,omitempty"`        // requests/s; 0 = concurrency mode
	// Users > 0 is user-centric mode: Users users at Rate requests/s in
	// total, each sending its turns Users/Rate seconds apart.
	Users int `json:"users,omitempty"`
	// CapPolicy is what a rate phase does with a new session whose send
	// comes due while the in-flight cap is full: CapSkip (AIPerf's, the
	// default when empty) drops that send, CapDelay waits for a slot.
	CapPolicy  string  `json:"cap_policy,omitempty"`
	RateMode   string  `json:"rate_mode,omitempty"`  // RateConstant, RatePoisson or RateGamma
	Smoothness float64 `json:"smoothness,omitempty"` // gamma shape (RateGamma); 0 = 1
	// ConcurrencyRamp raises the concurrency (or the rate mode's cap) from
	// 1 to Concurrency over this many seconds, one slot at a time; RateRamp
	// raises the rate linearly to Rate over this many seconds. 0: no ramp.
	ConcurrencyRamp float64 `json:"concurrency_ramp_duration,omitempty"`
	// PrefillConcurrency caps the requests sent and still waiting for
	// their first token (0: no cap).
	PrefillConcurrency int `json:"prefill_concurrency,omitempty"`
	// PrefillRamp raises the prefill cap from 1 to PrefillConcurrency over
	// this many seconds, one slot at a time (0: no ramp).
	PrefillRamp float64 `json:"prefill_concurrency_ramp_duration,omitempty"`
	RateRamp    float64 `json:"request_rate_ramp_duration,omitempty"`
	// RateSeries, when set, makes the rate follow its points (linear
	// between them, the last held): Rate is then their mean.
	RateSeries  []RatePoint `json:"rate_series,omitempty"`
	Requests    int         `json:"requests,omitempty"`     // stop after this many sends; 0 = no count limit
	Duration    float64     `json:"duration,omitempty"`     // stop sending after this many seconds; 0 = no time limit
	GracePeriod float64     `json:"grace_period,omitempty"` // seconds to wait for in-flight requests after Duration; <0 = forever
	Seamless    bool        `json:"seamless,omitempty"`     // start as soon as the previous phase stops sending
	// Sessions stops the phase from starting new sessions (conversations)
	// after this many; started sessions finish every turn. 0 = no limit.
	Sessions int `json:"sessions,omitempty"`
	// Fixed replays the dataset's fixed schedule: every conversation's
	// first turn at its timestamp (divided by Speedup when > 0).
	Fixed   bool    `json:"fixed_schedule,omitempty"`
	Speedup float64 `json:"speedup,omitempty"`
	// Cancellation, when set, aborts a share of this phase's requests
	// (AIPerf's per-phase cancellation in YAML) instead of
	// --request-cancellation-rate's share of the profiling requests.
	Cancellation *Cancellation `json:"cancellation,omitempty"`
	// Offset delays a constant rate's schedule by this many seconds: a
	// sharded cell's worker i of w runs at rate/w offset by i/rate, so the
	// workers' schedules merge into the constant one (never set by a user).
	Offset float64 `json:"schedule_offset,omitempty"`
}

// Undriven says why a concurrency phase cannot hold the requests in flight
// it names: it sends fewer requests than its concurrency (no more than it
// sends can ever be in flight; under a concurrency ramp, fewer if they end
// before the ramp opens that many slots). "" when it can, or when it is not
// bounded by a request count alone.
func (ph Phase) Undriven() string {
	if ph.Rate > 0 || ph.Users > 0 || ph.Duration > 0 || ph.Sessions > 0 || ph.Fixed || ph.Requests <= 0 || ph.Concurrency <= ph.Requests {
		return ""
	}
	why := fmt.Sprintf("its concurrency %d is more than the %d requests it sends: at most %d are ever in flight",
		ph.Concurrency, ph.Requests, ph.Requests)
	if ph.ConcurrencyRamp > 0 && ph.Requests > 1 {
		why += fmt.Sprintf(", fewer if they end before its %g s concurrency ramp opens %d slots (one every %.3g s)",
			ph.ConcurrencyRamp, ph.Requests, ph.ConcurrencyRamp/float64(ph.Concurrency-1))
	}
	return why
}

// RampShort says why a phase's ramp cannot reach its target before the
// phase stops sending, and the load it reaches: a concurrency ramp whose
// last slot opens at or after the end of the duration (the in-flight cap's
// ramp of a rate phase is a cap, not a load), a rate ramp still rising when
// the duration ends or when the requests of its count have come due (on
// the schedule of its arrival pattern's mean). "" when it can, or it has
// no ramp.
func (ph Phase) RampShort() string {
	if ph.Users > 0 || ph.Fixed {
		return ""
	}
	n, ramp, dur := ph.Concurrency, ph.ConcurrencyRamp, ph.Duration
	if ph.Rate == 0 && n > 1 && ramp > 0 && dur > 0 {
		if k := slotsBefore(n, ramp, dur); k < n {
			return fmt.Sprintf("its %g s concurrency ramp opens one more of its %d slots every %.3g s, so only %d are open "+
				"before its %g s duration ends: at most %d are ever in flight, never %d", ramp, n, ramp/float64(n-1), k, dur, k, n)
		}
	}
	if ph.Rate <= 0 || ph.RateRamp <= 0 {
		return ""
	}
	at, until := 0.0, ""
	if dur > 0 && dur < ph.RateRamp {
		at, until = dur, fmt.Sprintf("its %g s duration ends", dur)
	}
	if ph.Requests > 0 && ph.Sessions == 0 {
		if t := RampWarp(float64(ph.Requests)/ph.Rate, ph.RateRamp); t < ph.RateRamp && (at == 0 || t < at) {
			at, until = t, fmt.Sprintf("its %d requests have come due (about %.3g s in)", ph.Requests, t)
		}
	}
	if at == 0 {
		return ""
	}
	return fmt.Sprintf("its %g s rate ramp has reached only %.3g req/s of its %g req/s when %s: it never sends at its rate",
		ph.RateRamp, rampedRate(ph.Rate, ph.RateRamp, at), ph.Rate, until)
}

// Undriven is the first profiling phase of phases that cannot drive its
// load (Phase.Undriven, Phase.RampShort), its name and why, with what to
// change; "" and "" when none.
func Undriven(phases []Phase) (name, why string) {
	for _, ph := range phases {
		if ph.Kind != KindProfiling {
			continue
		}
		if why := ph.Undriven(); why != "" {
			return ph.Name, why + " (raise --request-count, or lower --concurrency)"
		}
		if why := ph.RampShort(); why != "" {
			return ph.Name, why + " (shorten the ramp, or send for longer)"
		}
	}
	return "", ""
}

// InlineRecords is InputFile while a config file's inline records are not
// yet written to a file.
const InlineRecords = "(inline records)"

// Cancellation aborts a share of a phase's requests, each picked by a hash
// of its index and the seed, Delay seconds after it was fully sent.
type Cancellation struct {
	Rate  float64 `json:"rate"`  // percent of the phase's requests in [0, 100]; 0: none
	Delay float64 `json:"delay"` // seconds after the request was sent
}

// NewProfile returns a Profile holding every default of its `default` tags,
// exactly what `aiperf profile` starts from when no flag is given.
func NewProfile() Profile {
	var p Profile
	v := reflect.ValueOf(&p).Elem()
	for _, f := range fields(v.Type()) {
		def, ok := f.Tag.Lookup("default")
		if !ok || def == "" {
			continue
		}
		if err := setFromString(v.FieldByIndex(f.Index), def); err != nil {
			panic(fmt.Sprintf("plan: bad default tag on %s: %v", f.Name, err))
		}
	}
	return p
}
