// Package seqdist reads AIPerf's sequence-length distributions
// (--seq-dist, --sequence-distribution): a mixture of (ISL, OSL) pairs,
// each with optional standard deviations and a relative weight, written
// in one of AIPerf's three forms:
//
//	64|10,32|8:70;256|40,128|20:20;1024,512:10        semicolon form
//	[(256|10,128|5):60,(512,256):40]                    bracket form
//	{"pairs": [{"isl": 256, "isl_stddev": 10, "osl": 128, "prob": 60}, ...]}
//
// Weights are relative (normalized when drawing; each must be positive).
// A draw picks a bucket by weight, then its ISL and OSL from normal
// distributions rounded and clamped to at least 1 token. Parse errors name
// the character where the text went wrong and what was expected there.
package seqdist
