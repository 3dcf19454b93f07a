package mock

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSpecDecodeAcceptanceAddsUp: the mock's acceptance of a reply is
// consistent as vLLM's must be: the steps and their accepted drafts are
// the reply's tokens, the histogram counts every step and accepted draft,
// four drafts proposed per step.
func TestSpecDecodeAcceptanceAddsUp(t *testing.T) {
	for _, tokens := range []int{0, 1, 2, 5, 16, 97} {
		var sd specDecoding
		require.NoError(t, json.Unmarshal(newSpecDecoding(tokens).encode(), &sd))
		assert.Equal(t, tokens, sd.NumSpecSteps+sd.NumAcceptedDraftTokens, "tokens %d", tokens)
		steps, accepted := 0, 0
		for j, n := range sd.AcceptanceHistogram {
			steps, accepted = steps+n, accepted+j*n
		}
		assert.Equal(t, sd.NumSpecSteps, steps)
		assert.Equal(t, sd.NumAcceptedDraftTokens, accepted)
		assert.Equal(t, 4*sd.NumSpecSteps, sd.NumDraftTokens)
		assert.Len(t, sd.AcceptanceHistogram, sd.NumSpecTokens+1)
	}
	sd := *newSpecDecoding(16)
	// Steps accept 3, 1, 4, 0, 2, 3: 4+2+5+1+3 = 15 tokens, the sixth only 0.
	accepted, steps := 10.0, 6.0 // float64 arithmetic, as the mock's
	assert.Equal(t, specDecoding{MeanAcceptanceLength: 1 + accepted/steps, DraftAcceptanceRate: accepted / (4 * steps),
		AcceptanceHistogram: []int{2, 1, 1, 1, 1}, NumAcceptedDraftTokens: 10, NumDraftTokens: 24, NumSpecSteps: 6,
		NumSpecTokens: 4}, sd)
}

// TestSpecDecodeStatsOnTheWire: with --spec-decode-stats the acceptance is
// at the response root of a whole reply and on a stream's usage frame (only
// with include_usage), and nowhere without the flag.
func TestSpecDecodeStatsOnTheWire(t *testing.T) {
	_, base := start(t, Config{Fast: true, SpecDecodeStats: true})
	var whole wireChunk
	require.NoError(t, jsonUnmarshal(readAll(t, post(t, base+"/v1/chat/completions", chatBody("m", 16, false, false))), &whole))
	require.NotNil(t, whole.Metrics)
	assert.Equal(t, 6, whole.Metrics.SpeculativeDecoding.NumSpecSteps)

	resp := post(t, base+"/v1/chat/completions", chatBody("m", 16, true, true))
	chunks := readSSE(t, resp.Body)
	resp.Body.Close()
	last := chunks[len(chunks)-1]
	require.NotNil(t, last.Usage, "the usage frame")
	require.NotNil(t, last.Metrics)
	assert.Equal(t, 10, last.Metrics.SpeculativeDecoding.NumAcceptedDraftTokens)
	for _, c := range chunks[:len(chunks)-1] {
		assert.Nil(t, c.Metrics, "only on the usage frame")
	}

	resp = post(t, base+"/v1/chat/completions", chatBody("m", 16, true, false))
	for _, c := range readSSE(t, resp.Body) {
		assert.Nil(t, c.Metrics, "no usage frame, no acceptance")
	}
	resp.Body.Close()

	_, plain := start(t, Config{Fast: true})
	whole = wireChunk{}
	require.NoError(t, jsonUnmarshal(readAll(t, post(t, plain+"/v1/chat/completions", chatBody("m", 16, false, false))), &whole))
	assert.Nil(t, whole.Metrics)
}
