package metrics

// Record is one request as measured: a flat, serialisable row (vegeta's
// Result). Times are nanosecond offsets from the run's single monotonic start;
// WallStartNs anchors SentNs to wall-clock time for exports.
type Record struct {
	Index     int    `json:"index"`            // issue order within the run, from 0
	Phase     string `json:"phase"`            // phase name, e.g. "warmup", "profiling"
	PhaseKind string `json:"phase_kind"`       // plan.KindWarmup or plan.KindProfiling
	RequestID string `json:"request_id"`       // X-Request-ID sent
	URL       int    `json:"url"`              // index of the --url used
	Worker    int    `json:"worker,omitempty"` // the worker process that sent it (--workers), from 0
	Prompt    int    `json:"prompt"`           // index of the dataset conversation sent
	Model     string `json:"model"`
	Streaming bool   `json:"streaming"`
	// NoTokens marks a request to an endpoint that generates no tokens
	// (embeddings, rankings): it has no output metrics (OSL, TTFT, ITL,
	// output throughput), as in AIPerf.
	NoTokens bool `json:"no_tokens,omitempty"`

	// Session numbers the session (one replay of a conversation) within
	// the run, from 0; Turn is the request's turn within it, from 0.
	Session int `json:"session"`
	Turn    int `json:"turn,omitempty"`
	// Conversation is the dataset's id of the conversation (session_id);
	// CorrelationID the session's X-Correlation-ID.
	Conversation  string `json:"conversation,omitempty"`
	CorrelationID string `json:"correlation_id,omitempty"`
	// DAG marks a request of a dag_jsonl conversation; AgentDepth is its
	// session's depth in the tree (0 for a root) and ParentCorrelationID the
	// correlation id of the session that started it ("" for a root and a
	// pre-session spawn), AIPerf's agent_depth and parent_correlation_id.
	DAG                 bool   `json:"dag,omitempty"`
	AgentDepth          int    `json:"agent_depth,omitempty"`
	ParentCorrelationID string `json:"parent_correlation_id,omitempty"`
	// History reports that the request re-sent its session's history: its
	// InputTokens gain the replies' tokens once they are counted (the
	// bench's finisher adds them).
	History bool `json:"history,omitempty"`

	// RequestNum is the request's issue order within its phase, from 0
	// (AIPerf's request_num). IssuedNs is when the load engine issued its
	// credit (its time come), ReceivedNs when the sender took it up, before
	// any prefill-cap wait; 0: not known (a record read back from the store).
	RequestNum int   `json:"request_num"`
	IssuedNs   int64 `json:"issued_ns,omitempty"`
	ReceivedNs int64 `json:"received_ns,omitempty"`

	ScheduledNs int64 `json:"scheduled_ns"` // when the schedule wanted it sent
	SentNs      int64 `json:"sent_ns"`      // taken just before the request is written
	EndNs       int64 `json:"end_ns"`       // last byte read, or the failure
	WallStartNs int64 `json:"wall_start_ns"`
	// Raw is the request's wire exchange under --export-level raw (nil
	// otherwise); only the raw export reads it.
	Raw *Raw `json:"-"`
	// ResponseText is the generated text, reasoning then content, under
	// --export-outputs-json (nil otherwise, or when the reply had none);
	// only outputs.json reads it.
	ResponseText *string `json:"-"`

	// ResponseNs holds the arrival stamp of every response that carried
	// generated text (content or reasoning), in order; a non-streaming
	// response has one. Stamps are taken when the SSE event is read, before
	// JSON decoding.
	ResponseNs Stamps `json:"response_ns,omitzero"`
	// NotStreamed marks a reply to a streaming request (Streaming) that
	// arrived as one whole body, not as a stream: the payload did not ask
	// for one (an inputs_json payload without "stream": true, --extra-inputs
	// stream:false). Its one stamp is the body's end, which times no first
	// token: it has no streaming-only metric (Times), as in AIPerf.
	NotStreamed bool `json:"not_streamed,omitempty"`
	// FirstOutputNs is the first response with non-reasoning content (0: none).
	FirstOutputNs int64 `json:"first_output_ns,omitempty"`

	InputTokens           int    `json:"input_tokens"`               // client tokenizer count of the prompt (ISL)
	OutputTokens          int    `json:"output_tokens"`              // client count of non-reasoning output text
	ReasoningTokens       int    `json:"reasoning_tokens,omitempty"` // client count of reasoning text
	RequestedOutputTokens int    `json:"requested_output_tokens,omitempty"`
	Usage                 *Usage `json:"usage,omitempty"` // server-reported usage, when present
	// Uncounted marks a reply whose text the client did not count (the run
	// was interrupted while the replies were being counted): its
	// OutputTokens and ReasoningTokens are not counts. Its OSL is the
	// server's trusted usage when it has one, else unknown (OSLKnown): it
	// then has no OSL, output throughput, ITL or OSL mismatch, and adds
	// nothing to the output totals, rather than a made-up 0.
	Uncounted bool `json:"uncounted,omitempty"`
	// Client holds the client's own counts once the server's usage has
	// replaced InputTokens, OutputTokens, ReasoningTokens and Uncounted
	// (--use-server-token-count); nil when those are the client's. The
	// usage audits (CheckUsage, the usage_*_diff_pct metrics,
	// usage_discrepancy_count) compare the server's usage with the
	// client's counts (ClientCounted), never with itself.
	Client *ClientCounts `json:"client_counts,omitempty"`
	// SpecDecode is the server's speculative-decoding acceptance for the
	// request, when it reported one (vLLM --per-request-spec-decode-metrics).
	SpecDecode *SpecDecode `json:"spec_decode,omitempty"`
	// HTTP is the request's HTTP exchange, traced with --show-trace-timing
	// or --export-http-trace (nil otherwise).
	HTTP *HTTPTrace `json:"http_trace,omitempty"`

	Status    int    `json:"status,omitempty"`    // HTTP status; 0 when no response arrived
	Error     *Error `json:"error,omitempty"`     // nil on success
	Retried   bool   `json:"retried,omitempty"`   // failed on a reused connection before any byte; retried once on a fresh one
	Cancelled bool   `json:"cancelled,omitempty"` // cut before it ended (excluded from metrics); CutBy says why
	CutBy     string `json:"cut_by,omitempty"`    // CutGracePeriod, CutInterrupt, CutOnPurpose, CutWorkerFailed or CutHookFailed ("" unknown)
	// NotSent marks a request that reached the transport at or after its
	// credit's SendBy, so was not sent: the engine counts it as not sent
	// and hands no record on.
	NotSent bool `json:"-"`
	// MalformedChunks counts the stream's data lines that were not a
	// response chunk (unparseable, or JSON of another shape); they were
	// skipped.
	MalformedChunks int `json:"malformed_chunks,omitempty"`
	// Media is what a request with media carried and what the server
	// reported of them (media.go); nil for a request without.
	Media *MediaStats `json:"media,omitempty"`
}

// ClientCounts are a request's token counts as the client's tokenizer
// made them (Record's fields of the same names).
type ClientCounts struct {
	InputTokens     int  `json:"input_tokens"`
	OutputTokens    int  `json:"output_tokens"`
	ReasoningTokens int  `json:"reasoning_tokens,omitempty"`
	Uncounted       bool `json:"uncounted,omitempty"`
}

// output is the client's count of generated tokens, reasoning included.
func (c *ClientCounts) output() int { return c.OutputTokens + c.ReasoningTokens }

// ClientCounted returns the client's own counts of r: those kept when the
// server's replaced them (Client), else the record's.
func (r *Record) ClientCounted() ClientCounts {
	if r.Client != nil {
		return *r.Client
	}
	return ClientCounts{InputTokens: r.InputTokens, OutputTokens: r.OutputTokens, ReasoningTokens: r.ReasoningTokens,
		Uncounted: r.Uncounted}
}

// TakeServerCounts replaces r's ISL and output counts with its server
// usage's (--use-server-token-count), keeping the client's in Client for
// the audits, and reports whether it had trusted usage to take them from
// (CheckUsage has judged it against the client's counts). A request
// without, or with untrusted usage, keeps the client's counts.
func TakeServerCounts(r *Record) bool {
	u := r.Usage
	if !u.Trusted() {
		return false
	}
	c := r.ClientCounted()
	r.Client = &c
	r.InputTokens = u.PromptTokens
	r.OutputTokens, r.ReasoningTokens = u.outputParts()
	r.Uncounted = false // the server's counts are the record's
	return true
}

// outputParts are the server's completion tokens as output and reasoning
// tokens (a reasoning count above the completion count is cut to it).
func (u *Usage) outputParts() (output, reasoning int) {
	reasoning = min(u.ReasoningTokens, u.CompletionTokens)
	return u.CompletionTokens - reasoning, reasoning
}

// RestoreClientCounts puts the client's counts back on r where the
// server's replaced them (TakeServerCounts): its usage was judged
// untrusted after all (a merged worker's record).
func RestoreClientCounts(r *Record) {
	c := r.Client
	if c == nil {
		return
	}
	r.InputTokens, r.OutputTokens, r.ReasoningTokens, r.Uncounted = c.InputTokens, c.OutputTokens, c.ReasoningTokens, c.Uncounted
	r.Client = nil
}

// Usage is the server's token accounting (OpenAI `usage`), its vendor
// synonyms read into one shape as AIPerf's Usage: PromptTokens is every
// prompt token the server processed, cached or not (Anthropic's
// input_tokens plus its cache reads and writes).
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// TotalTokens is total_tokens, nil when not reported or when it is not
	// PromptTokens + CompletionTokens (a total that does not add up is not
	// a count of anything).
	TotalTokens *int `json:"total_tokens,omitempty"`
	// ReasoningTokens is completion_tokens_details.reasoning_tokens;
	// ReasoningReported says the field was there (a 0 that was reported).
	ReasoningTokens   int  `json:"reasoning_tokens,omitempty"`
	ReasoningReported bool `json:"reasoning_reported,omitempty"`
	// CachedTokens are the prompt tokens read from the prefix cache:
	// prompt_tokens_details.cached_tokens (OpenAI, vLLM, SGLang),
	// input_tokens_details.cached_tokens (Responses), cache_read_input_tokens
	// (Anthropic) or prompt_cache_hit_tokens (DeepSeek); nil when not
	// reported. CacheWriteTokens are Anthropic's cache_creation_input_tokens,
	// CacheMissTokens DeepSeek's prompt_cache_miss_tokens.
	CachedTokens     *int `json:"cached_tokens,omitempty"`
	CacheWriteTokens *int `json:"cache_write_tokens,omitempty"`
	CacheMissTokens  *int `json:"cache_miss_tokens,omitempty"`
	// CacheDropped says why the cache reads the server reported are not
	// in CachedTokens (a count above the prompt tokens, or a value that
	// is not a count), "" when it reported none or a valid one. The reads
	// are dropped as if not reported; profile_export.jsonl's
	// usage_cache_dropped, the console's Usage note and aiperf chat's
	// Usage line name it (a worker's record carries it).
	CacheDropped string `json:"cache_dropped,omitempty"`
	// AcceptedPredictionTokens and RejectedPredictionTokens are
	// completion_tokens_details' counts of a predicted output (OpenAI).
	AcceptedPredictionTokens *int `json:"accepted_prediction_tokens,omitempty"`
	RejectedPredictionTokens *int `json:"rejected_prediction_tokens,omitempty"`
	// FirstChunkTokens is, under --per-chunk-usage, the completion_tokens
	// of the first streamed response that carried both generated text and
	// usage: the tokens the first content chunk held (AIPerf's
	// first_content_chunk_tokens), which inter_token_latency subtracts
	// from the OSL instead of 1 (DecodeTokens). nil without the flag, or
	// when no response carried both.
	FirstChunkTokens *int `json:"first_content_chunk_tokens,omitempty"`
	// Untrusted says why the server's counts are not used (a count that is
	// missing, null, negative or not an integer, or implausible beside the
	// client's count); the client's counts stand in for them. Empty when
	// the usage is trusted.
	Untrusted string `json:"untrusted,omitempty"`
	// Names are the names the server gave its counts, which a usage
	// problem uses (PromptField, CompletionField).
	Names UsageNames `json:"names,omitempty"`
}

// UsageNames says which names a server's usage object gives its prompt
// and completion counts.
type UsageNames uint8

const (
	// ChatNames are prompt_tokens and completion_tokens (chat, completions
	// and the other OpenAI-shaped APIs).
	ChatNames UsageNames = iota
	// InputOutputNames are input_tokens and output_tokens (the Responses
	// API, OpenAI's Images API).
	InputOutputNames
	// MessagesNames are the Messages API's input_tokens and output_tokens,
	// its prompt count input_tokens with the cache's reads and writes.
	MessagesNames
)

// PromptField is the name of the prompt count in the server's usage.
func (u *Usage) PromptField() string {
	if u.Names == InputOutputNames || u.Names == MessagesNames {
		return "input_tokens"
	}
	return "prompt_tokens"
}

// CompletionField is the name of the completion count in the server's
// usage.
func (u *Usage) CompletionField() string {
	if u.Names == InputOutputNames || u.Names == MessagesNames {
		return "output_tokens"
	}
	return "completion_tokens"
}

// Trusted reports whether the server's counts can be used.
func (u *Usage) Trusted() bool { return u != nil && u.Untrusted == "" }

// Error describes a failed request. Code is the HTTP status when the server
// answered, else 0 (CancelledCode for a cancelled request); Type is a short
// class ("HTTPError", "StreamError", "IncompleteStream", "Timeout",
// "ConnectionError", CancelledType, ...).
type Error struct {
	Code    int    `json:"code"`
	Type    string `json:"type"`
	Message string `json:"message"`
}

// A cancelled request's error code and type are AIPerf's, whatever the HTTP
// status of a reply it cut: 499 (a client that closed the request) and
// RequestCancellationError.
const (
	CancelledCode = 499
	CancelledType = "RequestCancellationError"
)

// Why a request was cut (Record.CutBy).
const (
	CutGracePeriod  = "grace_period"      // still in flight when its phase's grace period ended
	CutInterrupt    = "interrupt"         // in flight when the run was interrupted (Ctrl-C)
	CutOnPurpose    = "cancellation_rate" // aborted on purpose (--request-cancellation-rate)
	CutWorkerFailed = "worker_failed"     // in flight on a worker stopped because another worker failed (--workers)
	CutHookFailed   = "hook_failed"       // in flight on a worker stopped because a control hook failed (--workers)
)

// OK reports whether the request succeeded and counts toward metrics.
func (r *Record) OK() bool { return r.Error == nil && !r.Cancelled }

// Shift moves every clock stamp of the record by d ns, onto another
// clock's timebase (a sharded cell's worker records onto the
// coordinator's); WallStartNs is left to whoever owns the new clock.
func (r *Record) Shift(d int64) {
	if r.IssuedNs != 0 {
		r.IssuedNs += d
	}
	if r.ReceivedNs != 0 {
		r.ReceivedNs += d
	}
	r.ScheduledNs += d
	r.SentNs += d
	r.EndNs += d
	r.ResponseNs = r.ResponseNs.Shift(d)
	if r.FirstOutputNs != 0 {
		r.FirstOutputNs += d
	}
	if r.HTTP != nil {
		r.HTTP.Shift(d)
	}
}

// Raw is a request's wire exchange, kept for --export-level raw only: the
// body sent and every response as read (each SSE event, or the whole body).
type Raw struct {
	Payload   []byte
	Responses []RawResponse
}

// RawResponse is one response read: an SSE event (its name and data) or a
// whole body (Event empty, Whole set), stamped when read.
type RawResponse struct {
	At    int64
	Event string
	Data  []byte
	Whole bool
}
