// Package mock is an OpenAI-compatible fake inference server for tests,
// demos and the client's ceiling benchmark (`aiperf-mock-server` and
// `aiperf mock-server`).
//
// It serves /v1/chat/completions and /v1/completions, streaming (SSE, one
// token per chunk, like vLLM) and not, with a configurable time to first
// token and inter-token latency scheduled against absolute targets from the
// request's arrival, so timer lateness does not accumulate. Every emitted
// piece is a common English word with a leading space that is exactly one
// token under o200k_base, so the client's tokenizer count of the output equals
// the number of chunks. With max_tokens (or max_completion_tokens) the output
// has exactly that many tokens; without it, a seeded count between 0.8× and
// 1.2× the prompt's token count. Models whose name contains "qwen" or
// "gpt-oss" answer the first quarter of their chat tokens as
// reasoning_content.
//
// It models the server's prefix cache at whole-prompt grain: a prompt (chat:
// the message contents; completions: the prompt) served before since the
// last reset is a hit, and usage reports it as
// prompt_tokens_details.cached_tokens (all its prompt tokens, else 0), as
// vLLM and SGLang do when asked to (--no-cache-report leaves the field
// out). Only a 64-bit hash of each prompt is kept, in a bounded set that
// is emptied when full. With --prefill-us-per-token the time to first
// token grows with the uncached prompt tokens, so cold and warm runs
// differ.
//
// It also serves the control-hook admin routes of real servers
// (POST /reset_prefix_cache, /flush_cache, /start_profile, /stop_profile),
// with fault knobs. A reset that answers normally empties the prefix cache
// (a fault-knob answer, --reset-success-false or --reset-noop does not).
// It records every admin call and every inference request's start and end
// in an ordered event log readable at GET /mock/control, with counters
// (cache hits and entries included), so tests can verify hook ordering and
// that a reset really cleared the cache.
package mock
