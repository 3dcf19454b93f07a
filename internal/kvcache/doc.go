// Package kvcache is the model of a server's prefix (KV) cache that the
// mock server runs and the trace simulator (internal/cachesim) replays: one
// implementation, so that what the simulator predicts for a trace is what
// the mock measures when the trace is sent to it.
//
// A request's token sequence is cut into blocks of a fixed number of
// tokens, and each full block is named by a hash of its content chained to
// the previous block's name, as vLLM names its blocks: equal names mean
// equal prefixes (Sequence). A partial trailing block has no name and is
// never cached. The cache (Cache) holds a capacity of block names with
// least-recently-used eviction. A request's life in it has two steps:
// when it is admitted, its prompt's blocks are looked up (the longest
// cached prefix is its hit) and cached (Serve); when it completes, its
// prompt's and its reply's blocks are cached again, most recently used
// (Store), so that the next turn of a conversation, which resends the
// reply, finds it. Blocks of a running request are not pinned: like the
// mock, the model evicts by recency alone.
package kvcache
