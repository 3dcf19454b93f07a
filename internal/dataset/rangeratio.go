package dataset

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// The corpus styles of --random-corpus-style (AIPerf's RandomCorpusStyle):
// the windows of RangeRatio and the token pool of CorpusRandom.
const (
	// CorpusStyleVLLM mirrors `vllm bench serve`: symmetric windows, a pool
	// without special tokens. It is the default ("" too).
	CorpusStyleVLLM = "vllm"
	// CorpusStyleSGLang mirrors sglang.bench_serving's random-ids:
	// windows bounded by the mean, the whole vocabulary as the pool.
	CorpusStyleSGLang = "sglang"
)

// RangeRatio is --random-range-ratio: each synthetic ISL is drawn uniformly
// from an integer window around Options.ISLMean set by Input, and each OSL
// from one around Options.OSLMean set by Output (CorpusStyleVLLM: each in
// [0, 1); CorpusStyleSGLang: in [0, 1] and equal).
type RangeRatio struct{ Input, Output float64 }

// span is an inclusive window of lengths, drawn from uniformly; hi 0 is no
// window (the normal draw of drawLength).
type span struct{ lo, hi int }

func (s span) draw(r *rand.Rand) int { return s.lo + r.IntN(s.hi-s.lo+1) }

// islSpan is AIPerf's ISL window of ratio x around mean: vllm
// [max(0, floor(mean*(1-x))), ceil(mean*(1+x))], sglang
// [max(1, int(mean*x)), mean]. (No special tokens are taken off the mean
// first: the tokenizer does not say how many the server adds.)
func islSpan(style string, mean int, x float64) span {
	m := float64(mean)
	if style == CorpusStyleSGLang {
		return span{max(1, int(m*x)), mean}
	}
	return span{max(0, int(math.Floor(m*(1-x)))), int(math.Ceil(m * (1 + x)))}
}

// oslSpan is AIPerf's OSL window of ratio x around mean: vllm
// [max(1, floor(mean*(1-x))), max(1, ceil(mean*(1+x)))], sglang
// [max(1, int(mean*x)), mean].
func oslSpan(style string, mean int, x float64) span {
	m := float64(mean)
	if style == CorpusStyleSGLang {
		return span{max(1, int(m*x)), mean}
	}
	return span{max(1, int(math.Floor(m*(1-x)))), max(1, int(math.Ceil(m*(1+x))))}
}

// drawISL draws a turn's ISL: uniformly from the window when there is one,
// at least 1 token (AIPerf's vllm window may reach 0; a prompt here has a
// token at least), else round(normal(isl, islSD)) ≥ 1.
func (l mixLengths) drawISL(r *rand.Rand) int {
	if l.islWin.hi > 0 {
		return max(1, l.islWin.draw(r))
	}
	return drawLength(r, l.isl, l.islSD)
}

// drawOSL draws a turn's max_tokens: uniformly from the window when there
// is one, else round(normal(osl, oslSD)) ≥ 1. Call it only when osl > 0.
func (l mixLengths) drawOSL(r *rand.Rand) int {
	if l.oslWin.hi > 0 {
		return l.oslWin.draw(r)
	}
	return drawLength(r, l.osl, l.oslSD)
}

// checkRange checks RangeRatio and CorpusStyle.
func (o Options) checkRange() error {
	if o.CorpusStyle != "" && o.CorpusStyle != CorpusStyleVLLM && o.CorpusStyle != CorpusStyleSGLang {
		return fmt.Errorf("corpus style must be %s or %s, got %q", CorpusStyleVLLM, CorpusStyleSGLang, o.CorpusStyle)
	}
	r := o.RangeRatio
	if r == nil {
		return nil
	}
	sglang := o.CorpusStyle == CorpusStyleSGLang
	for _, x := range []float64{r.Input, r.Output} {
		if !(x >= 0 && (x < 1 || sglang && x == 1)) {
			return fmt.Errorf("range ratio must be in [0, 1) (sglang style: [0, 1]), got %v", x)
		}
	}
	if sglang && r.Input != r.Output {
		return fmt.Errorf("the sglang corpus style takes one range ratio for ISL and OSL, got %v and %v", r.Input, r.Output)
	}
	return nil
}
