package dataset

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/seqdist"
)

// --seq-dist: each conversation draws one bucket and keeps it for every
// turn (AIPerf's sticky buckets); its OSL is the max_tokens even without
// --osl; the buckets' shares follow the weights.
func TestSyntheticSequenceDistribution(t *testing.T) {
	tok := o200k(t)
	mix, err := seqdist.Parse("20,5:70;300|10,90:30")
	require.NoError(t, err)
	const n = 400
	o := Options{ISLMean: 550, Entries: n, Seed: 3, TurnMean: 2, SeqDist: mix}
	convs := conversations(t, o)
	require.Len(t, convs, n)
	small := 0
	for i, c := range convs {
		require.Len(t, c.Turns, 2)
		first := c.Turns[0].MaxTokens
		for k, turn := range c.Turns {
			assert.Equal(t, turn.InputTokens, tok.Count(turn.Text), "conversation %d turn %d: the prompt has its drawn length", i, k)
			assert.Equal(t, first, turn.MaxTokens, "conversation %d: one bucket for all its turns", i)
			switch turn.MaxTokens {
			case 5:
				assert.Equal(t, 20, turn.InputTokens)
			case 90:
				assert.InDelta(t, 300, turn.InputTokens, 80, "ISL ~ N(300, 10)")
			default:
				t.Fatalf("conversation %d turn %d: max_tokens %d is no bucket's OSL", i, k, turn.MaxTokens)
			}
		}
		if first == 5 {
			small++
		}
	}
	bound := 4 * math.Sqrt(n*0.7*0.3)
	assert.InDelta(t, 0.7*n, small, bound, "70%% of the conversations in the first bucket, within 4σ of the binomial")

	again := conversations(t, o)
	assert.Equal(t, convs, again, "the same seed draws the same conversations")
	o.Seed = 4
	assert.NotEqual(t, convs, conversations(t, o), "another seed draws others")
}
