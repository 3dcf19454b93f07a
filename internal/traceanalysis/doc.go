// Package traceanalysis is `aiperf analyze-trace`: AIPerf's statistics of
// a mooncake trace's prefix structure (its PrefixAnalyzer: requests, unique
// prefixes, prefix groups, the hit rate an infinite cache would give, the
// prefix reuse ratio, and the distributions of input, context, unique
// prompt and output lengths and per-request hit rates, with numpy's
// linearly interpolated percentiles and population standard deviation),
// with its report layout and JSON keys; and, beyond AIPerf, the replay of
// the trace through a KV cache of a given size (internal/cachesim).
//
// The file is streamed twice, never held: the first pass collects the
// lengths, the hit rates and the prefix structure, the second the context
// lengths, which need to know which (position, hash id) pairs occur more
// than once in the whole trace. Memory is a few bytes per distinct block
// and per request, not the file's size.
package traceanalysis
