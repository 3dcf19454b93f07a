package dataset

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// TestRangeRatioWindows: AIPerf's windows (its tests' examples first).
func TestRangeRatioWindows(t *testing.T) {
	for _, c := range []struct {
		style    string
		mean     int
		x        float64
		isl, osl span
	}{
		{CorpusStyleVLLM, 512, 0, span{512, 512}, span{512, 512}},
		{"", 100, 0.3, span{70, 130}, span{70, 130}},
		{CorpusStyleVLLM, 2, 0.9, span{0, 4}, span{1, 4}}, // floor(0.2) = 0: an ISL of 0 (drawn as 1), an OSL of 1
		{CorpusStyleVLLM, 1, 0.5, span{0, 2}, span{1, 2}},
		{CorpusStyleSGLang, 1024, 0.5, span{512, 1024}, span{512, 1024}},
		{CorpusStyleSGLang, 128, 0.5, span{64, 128}, span{64, 128}},
		{CorpusStyleSGLang, 300, 1, span{300, 300}, span{300, 300}},
		{CorpusStyleSGLang, 300, 0, span{1, 300}, span{1, 300}},
		{CorpusStyleSGLang, 7, 0.1, span{1, 7}, span{1, 7}}, // int(0.7) = 0, at least 1
	} {
		assert.Equal(t, c.isl, islSpan(c.style, c.mean, c.x), "ISL %s %d %g", c.style, c.mean, c.x)
		assert.Equal(t, c.osl, oslSpan(c.style, c.mean, c.x), "OSL %s %d %g", c.style, c.mean, c.x)
	}
}

// drawn draws n ISLs and OSLs of o as a synthetic conversation does: its
// lengths, then each turn's ISL and OSL from one stream.
func drawn(o Options, n int) (isls, osls []int) {
	r := rand.New(rand.NewPCG(uint64(o.Seed), streamLengths))
	l := o.lengthsOf(nil)
	for range n {
		isls = append(isls, l.drawISL(r))
		osls = append(osls, l.drawOSL(r))
	}
	return isls, osls
}

// TestRangeRatioDraws: every draw within its window, both ends reached
// over many draws, and a window of one length gives that length.
func TestRangeRatioDraws(t *testing.T) {
	o := Options{ISLMean: 1024, OSLMean: 128, RangeRatio: &RangeRatio{0.5, 0.5}, CorpusStyle: CorpusStyleSGLang, Seed: 5}
	isls, osls := drawn(o, 20000)
	assert.Equal(t, []int{512, 1024}, []int{slices.Min(isls), slices.Max(isls)})
	assert.Equal(t, []int{64, 128}, []int{slices.Min(osls), slices.Max(osls)})

	o = Options{ISLMean: 100, OSLMean: 20, RangeRatio: &RangeRatio{0.3, 0.5}, Seed: 6}
	isls, osls = drawn(o, 5000)
	assert.Equal(t, []int{70, 130}, []int{slices.Min(isls), slices.Max(isls)}, "vllm: the input ratio")
	assert.Equal(t, []int{10, 30}, []int{slices.Min(osls), slices.Max(osls)}, "vllm: the output ratio")

	for _, o := range []Options{
		{ISLMean: 512, OSLMean: 64, RangeRatio: &RangeRatio{}, Seed: 7},
		{ISLMean: 512, OSLMean: 64, RangeRatio: &RangeRatio{1, 1}, CorpusStyle: CorpusStyleSGLang, Seed: 7},
	} {
		isls, osls = drawn(o, 200)
		assert.Equal(t, []int{512, 512}, []int{slices.Min(isls), slices.Max(isls)}, o.CorpusStyle)
		assert.Equal(t, []int{64, 64}, []int{slices.Min(osls), slices.Max(osls)}, o.CorpusStyle)
	}

	// vllm's window of --isl 1 reaches 0: such draws give 1 token.
	isls, _ = drawn(Options{ISLMean: 1, OSLMean: 1, RangeRatio: &RangeRatio{0.5, 0.5}, Seed: 8}, 300)
	assert.Equal(t, []int{1, 2}, []int{slices.Min(isls), slices.Max(isls)})
}

// TestSyntheticRangeRatio: synthetic prompts take the drawn lengths, each
// exactly that many tokens, and max_tokens the drawn OSLs.
func TestSyntheticRangeRatio(t *testing.T) {
	tok, err := tokenizer.Load("o200k_base")
	require.NoError(t, err)
	o := Options{ISLMean: 40, OSLMean: 20, RangeRatio: &RangeRatio{0.5, 0.5}, Entries: 80, Seed: 3}
	entries, err := Synthetic(context.Background(), tok, o)
	require.NoError(t, err)
	isls, osls := map[int]bool{}, map[int]bool{}
	for _, e := range entries {
		assert.Equal(t, e.InputTokens, tok.Count(e.Prompt))
		assert.True(t, e.InputTokens >= 20 && e.InputTokens <= 60, "ISL %d in [20, 60]", e.InputTokens)
		assert.True(t, e.MaxTokens >= 10 && e.MaxTokens <= 30, "OSL %d in [10, 30]", e.MaxTokens)
		isls[e.InputTokens], osls[e.MaxTokens] = true, true
	}
	assert.Greater(t, len(isls), 20, "the ISLs vary")
	assert.Greater(t, len(osls), 10, "the OSLs vary")
}

// TestRandomCorpusStyles: --prompt-corpus random's pool is the vocabulary
// less its special tokens under vllm, all of it under sglang, each built
// and cached apart; sglang prompts still have their exact ISL.
func TestRandomCorpusStyles(t *testing.T) {
	for name, tok := range tokenizers(t) {
		vllm, err := styledCorpus(tok, CorpusRandom, CorpusStyleVLLM)
		require.NoError(t, err)
		sglang, err := styledCorpus(tok, CorpusRandom, CorpusStyleSGLang)
		require.NoError(t, err)
		all, err := tokenizer.Vocabulary(tok)
		require.NoError(t, err)
		ordinary, err := tokenizer.Ordinary(tok)
		require.NoError(t, err)
		assert.Equal(t, ordinary, vllm.ids, name)
		assert.Equal(t, all, sglang.ids, name)
		assert.Greater(t, len(sglang.ids), len(vllm.ids), name)
		dflt, err := Options{Corpus: CorpusRandom}.corpus(tok)
		require.NoError(t, err)
		assert.Equal(t, vllm.ids, dflt.ids, "%s: vllm is the default", name)
		prose, err := styledCorpus(tok, CorpusSonnet, CorpusStyleSGLang)
		require.NoError(t, err)
		assert.Equal(t, tok.Encode(corpus), prose.ids, "%s: the style picks the random corpus's pool only", name)

		entries, err := Synthetic(context.Background(), tok,
			Options{ISLMean: 64, Entries: 4, Seed: 2, Corpus: CorpusRandom, CorpusStyle: CorpusStyleSGLang})
		require.NoError(t, err, name)
		for _, e := range entries {
			assert.Equal(t, 64, tok.Count(e.Prompt), name)
		}
	}
}

func TestRangeRatioOptionsChecked(t *testing.T) {
	tok, err := tokenizer.Load("o200k_base")
	require.NoError(t, err)
	for want, o := range map[string]Options{
		"range ratio must be in [0, 1) (sglang style: [0, 1]), got 1":                    {RangeRatio: &RangeRatio{1, 0}},
		"range ratio must be in [0, 1) (sglang style: [0, 1]), got -0.1":                 {RangeRatio: &RangeRatio{0.1, -0.1}, CorpusStyle: CorpusStyleSGLang},
		"the sglang corpus style takes one range ratio for ISL and OSL, got 0.1 and 0.2": {RangeRatio: &RangeRatio{0.1, 0.2}, CorpusStyle: CorpusStyleSGLang},
		`corpus style must be vllm or sglang, got "trtllm"`:                              {CorpusStyle: "trtllm"},
	} {
		o.ISLMean, o.OSLMean, o.Entries = 10, 5, 1
		_, err := Synthetic(context.Background(), tok, o)
		assert.ErrorContains(t, err, want)
	}
}
