// Package tracesynth is `aiperf synthesize-trace` and profile's
// --synthesis-* flags: a mooncake trace rewritten with AIPerf's
// parameters, keeping its prefix structure.
//
// As AIPerf's Synthesizer does, a hash id is shared when it occurs more
// than once in the trace; each request's leading run of shared ids is its
// context (its place in the prefix tree, kept), the rest of its input its
// unique prompt (given fresh ids). --prefix-len-multiplier stretches every
// context block into that many blocks (h → h×m … h×m+m-1, so requests that
// shared a prefix still share its stretch; a fractional part adds fresh
// blocks) or keeps a share of the context's blocks; --prompt-len-multiplier
// scales the unique prompt's tokens; --max-isl caps the input length
// (dropping the hash ids past it); --speedup-ratio divides the timestamps
// (whole milliseconds, as AIPerf writes them). Every other field of a row
// is kept, in its place.
//
// --prefix-root-multiplier N replicates the prefix tree N times: every row
// is written N times, copy c with every hash id h as h×N+c (and its
// session_id suffixed #c), at the same time, so the synthetic trace has N
// disjoint trees with the original's statistics each, N times the unique
// prefixes at the same per-request hit structure, and N times the requests.
// (AIPerf 0.x assigns each request to one of N copies at random, which
// splits the original's sharing N ways instead: on the public Mooncake
// slice it leaves the unique prefixes within 2% and cuts the shared ones by
// two thirds.)
//
// The input is read twice, streamed (dataset.ScanTrace, every problem
// listed); memory is a slot per distinct hash id.
//
// Its output is written by package outputfile, as its input is read by
// package inputfile.
package tracesynth
