// Package mock is an OpenAI-compatible fake inference server for tests,
// demos and the client's ceiling benchmark (`aiperf-mock-server` and
// `aiperf mock-server`).
//
// It serves /v1/chat/completions and /v1/completions, streaming (SSE, one
// token per chunk, like vLLM) and not, with a configurable time to first
// token and inter-token latency scheduled against absolute targets from the
// request's arrival (token k at arrival + TTFT + k×ITL; from the moment it
// got a generation slot if it waited for one), so lateness does not
// accumulate. The process's timing thread releases tokens when due: a
// min-heap of deadlines served by one goroutine locked to an OS thread with
// a timer slack of 1 ns, sleeping in futex waits with absolute deadlines
// and spinning the last microseconds within a CPU budget (Go's own timers
// fire up to a millisecond late on Linux). Under --fast it is never
// started. Every emitted
// piece is a common English word with a leading space that is exactly one
// token under o200k_base, so the client's tokenizer count of the output equals
// the number of chunks; token k is always the same word, so a reply is a
// function of its length alone. With max_tokens (or max_completion_tokens) the output
// has exactly that many tokens; without it, a seeded count between 0.8× and
// 1.2× the prompt's token count. Models whose name contains "qwen" or
// "gpt-oss" answer the first quarter of their chat tokens as
// reasoning_content.
//
// It models a server's prefix (KV) cache the way vLLM does, with the
// model of internal/kvcache that the trace simulator (aiperf analyze-trace
// --kv-cache-tokens) replays too: a request's
// token ids (chat: every message's content in order, each message marked
// with its role without adding tokens, as a chat template delimits them;
// completions: the prompt, text or token ids) are cut into blocks of
// --block-size tokens named by chained hashes, and the longest prefix of
// blocks already cached is the hit, reported as
// usage.prompt_tokens_details.cached_tokens (whole blocks only; a partial
// trailing block is never cached; as in vLLM, a hit never covers the
// prompt's last token, recomputed for its logits, so at most
// ⌊(n−1)/block⌋ blocks of an n-token prompt; --no-cache-report leaves the
// field out).
// When a reply is complete its blocks are cached with the prompt's, so the
// next turn of a conversation, which resends the reply as the assistant
// message, hits on both. The cache holds --kv-cache-tokens (in blocks;
// least recently used evicted first, a prompt's head outliving its tail)
// and keeps only 64-bit block hashes, never text. Token ids come from
// Config.EncodeTokens (o200k_base in both CLIs); without it they are
// synthetic and replies are not cached. With --prefill-us-per-token the
// time to first token grows with the uncached prompt tokens, so cold and
// warm runs differ. With --max-num-seqs at most that many requests generate
// at once and the others wait in arrival order, their time to first token
// including the wait.
//
// Load has the shape it has on vLLM's continuous batching, by a latency
// model with an exact formula (docs/mock.md; Config.Steady computes its
// steady state): each output token after the first costs an engine step
// of --itl plus --itl-concurrency-lin-ms per request generating when the
// step begins plus --itl-per-osl-token-ms per output token of the request;
// a prompt whose uncached tokens exceed --max-num-batched-tokens is
// prefilled in chunks, each chunk after the first one engine step more.
// --trial-jitter-cv scales every latency by a seeded lognormal draw of
// mean 1, drawn again at every prefix-cache reset (one per trial), for
// trial-to-trial noise.
//
// GET /metrics serves vLLM's Prometheus metrics (running and waiting
// requests, KV-cache usage, prefix-cache queries and hits in tokens, prompt
// and generation token counters, finished requests by reason, and time to
// first token, inter-token latency, end-to-end and queue time histograms
// with vLLM's bucket edges) from what the mock actually did; with
// --gpu-metrics, GET /dcgm/metrics serves dcgm-exporter's default GPU
// gauges for --gpus synthetic GPUs loaded by the running requests.
//
// It also serves the control-hook admin routes of real servers
// (POST /reset_prefix_cache, /flush_cache, /start_profile, /stop_profile),
// with fault knobs. A reset that answers normally empties the prefix cache
// (a fault-knob answer, --reset-success-false or --reset-noop does not);
// an admin call runs to its end even if its client leaves during
// --admin-latency-ms, so a counted reset has always emptied the cache.
// It records every admin call and every inference request's start and end
// in an ordered event log readable at GET /mock/control, with counters
// (cache hits and entries included), so tests can verify hook ordering and
// that a reset really cleared the cache.
//
// The mock times itself: GET /mock/timing reports, since the server
// started or since POST /mock/timing/clear, what the latency model
// scheduled for every request (its first token's due time after its
// arrival, each step between due times, its queue wait, and the batch
// each batch-priced step saw: the mock's own exact durations, not
// measurements), the trial's latency scale, and for the streaming replies
// each reply's first token chunk flush after its arrival, the gaps between
// consecutive token chunk flushes (its inter-token latency as written),
// and each token chunk's lateness against its schedule at the flush and at
// its release to the handler, as count, sum, mean, min, max and estimated
// p50/p90/p99 in microseconds, with the configured latencies. The
// histograms behind them have fixed log-spaced buckets (100 per decade from
// 1 µs to 10 s) updated with atomics.
package mock
