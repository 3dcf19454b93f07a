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
// It also serves the control-hook admin routes of real servers
// (POST /reset_prefix_cache, /flush_cache, /start_profile, /stop_profile),
// with fault knobs, and records every admin call and every inference
// request's start and end in an ordered event log readable at
// GET /mock/control, so tests can verify hook ordering.
package mock
