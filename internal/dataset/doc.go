// Package dataset builds the prompts a benchmark sends.
//
// Synthetic draws input and output lengths from seeded normal distributions
// and cuts each prompt from an embedded public-domain text (Newton's Opticks)
// so that it has exactly the drawn number of tokens under the run's tokenizer,
// verified by re-encoding, as AIPerf's synthetic prompt generator does.
// Sampler hands out entry indices in AIPerf's "shuffle" order: a fresh
// permutation of all entries on every pass.
package dataset
