package dataset

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOpenRangeRatio: a synthetic dataset's conversations (every turn)
// draw their ISLs and max tokens from the windows of --random-range-ratio,
// and a single-turn one is still Synthetic's; under sglang with the random
// corpus each prompt keeps its exact ISL.
func TestOpenRangeRatio(t *testing.T) {
	tok := o200k(t)
	o := Options{ISLMean: 40, OSLMean: 20, RangeRatio: &RangeRatio{0.5, 0.5}, Entries: 10, TurnMean: 4, Seed: 4}
	isls, osls := map[int]bool{}, map[int]bool{}
	for _, c := range conversations(t, o) {
		for _, turn := range c.Turns {
			assert.Equal(t, turn.InputTokens, tok.Count(turn.Text))
			assert.True(t, turn.InputTokens >= 20 && turn.InputTokens <= 60, "ISL %d in [20, 60]", turn.InputTokens)
			assert.True(t, turn.MaxTokens >= 10 && turn.MaxTokens <= 30, "OSL %d in [10, 30]", turn.MaxTokens)
			isls[turn.InputTokens], osls[turn.MaxTokens] = true, true
		}
	}
	assert.Greater(t, len(isls), 15)
	assert.Greater(t, len(osls), 8)

	o = Options{ISLMean: 48, OSLMean: 16, RangeRatio: &RangeRatio{0.5, 0.5}, CorpusStyle: CorpusStyleSGLang,
		Corpus: CorpusRandom, Entries: 30, Seed: 5}
	for _, c := range conversations(t, o) {
		require.Len(t, c.Turns, 1)
		turn := c.Turns[0]
		assert.Equal(t, turn.InputTokens, tok.Count(turn.Text))
		assert.True(t, turn.InputTokens >= 24 && turn.InputTokens <= 48, "ISL %d in [24, 48]", turn.InputTokens)
		assert.True(t, turn.MaxTokens >= 8 && turn.MaxTokens <= 16, "OSL %d in [8, 16]", turn.MaxTokens)
	}
}
