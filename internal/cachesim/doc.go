// Package cachesim predicts the prefix-cache hit ratio a trace gets on a
// server whose KV cache holds a given number of tokens, before the server
// is rented: it replays a mooncake trace's requests, on the trace's
// schedule, through the prefix-cache model the mock server runs
// (internal/kvcache), so that its prediction is what the mock measures when
// the same trace is sent to a mock of that capacity and block size.
//
// Each request's prompt is input_length tokens whose content the trace
// describes by its hash ids: block k of hash_block_size tokens is the same
// wherever hash id k appears after the same earlier ids, and tokens past
// the hash ids are the request's own (as aiperf writes a trace's prompts).
// The prompt is cut into cache blocks of cache_block_size tokens, each
// named by what its tokens are (the hash ids covering them, and where in
// those blocks they sit), chained to the blocks before it (kvcache.Sequence).
// A later turn of a session sends the conversation so far, as replay
// does: each earlier turn's prompt and its reply (output_length tokens,
// the same words whatever the prompt, as the mock answers), then its own
// prompt, one token stream whose blocks may straddle a reply and a prompt.
// A request arrives at its timestamp; a later turn of a session without
// one its delay after the previous turn ends, and never before (the reply
// time the mock takes is not modelled beyond ttft and itl); another row
// without one with the previous row, plus its delay. Its prompt's blocks
// are looked up, the longest cached prefix is its hit (at most the blocks
// of its first n−1 tokens, as vLLM and the mock), and they are cached
// (kvcache.Cache.Serve). It completes ttft + (output_length-1) × itl later
// (at once by default, like the mock under --fast), when its prompt's and
// its reply's blocks are cached again (Cache.Store). The rows are kept
// (memory linear in the trace; a request's block names, 8 bytes a block,
// while it runs) and replayed in arrival order, file order
// at equal times, with the completions in time order, a completion first
// at equal times; the cache evicts the least recently used blocks beyond its
// capacity, whole blocks only, and does not pin the blocks of a running
// request (the mock does not either).
package cachesim
