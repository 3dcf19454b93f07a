package dataset

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// TestRandomCorpusExactLengths: --prompt-corpus random builds vLLM's
// random prompts (a window of consecutive vocabulary ids, decoded) that
// re-tokenize to exactly the requested ISL, under each tokenizer family.
func TestRandomCorpusExactLengths(t *testing.T) {
	toks := tokenizers(t)
	for _, name := range []string{"cl100k_base"} {
		tok, err := tokenizer.Load(name)
		require.NoError(t, err)
		toks[name] = tok
	}
	llama2, err := tokenizer.Load("../tokenizer/testdata/llama2.tokenizer.json.gz")
	require.NoError(t, err)
	toks["llama2"] = llama2
	for name, tok := range toks {
		vocab, err := tokenizer.Ordinary(tok)
		require.NoError(t, err)
		pos := make(map[int]int, len(vocab))
		for i, id := range vocab {
			pos[id] = i
		}
		for _, isl := range []int{1, 7, 128, 550, 3000} {
			t.Run(fmt.Sprintf("%s/isl=%d", name, isl), func(t *testing.T) {
				entries, err := Synthetic(context.Background(), tok, Options{ISLMean: isl, Entries: 3, Seed: 3, Corpus: CorpusRandom})
				require.NoError(t, err)
				consecutive, pairs := 0, 0
				for _, e := range entries {
					require.True(t, utf8.ValidString(e.Prompt))
					ids := tok.Encode(e.Prompt)
					require.Len(t, ids, isl, "the prompt re-tokenizes to the ISL: %q", e.Prompt)
					assert.Equal(t, isl, e.InputTokens)
					for k := 1; k < len(ids); k++ {
						a, okA := pos[ids[k-1]]
						b, okB := pos[ids[k]]
						pairs++
						if okA && okB && b == (a+1)%len(vocab) {
							consecutive++
						}
					}
				}
				if pairs >= 100 {
					assert.Greater(t, consecutive*2, pairs, "mostly consecutive vocabulary ids, as vLLM's prompts are")
				}
			})
		}
	}
}

// TestCorpusChoice: the default and sonnet are the prose corpus; random and
// coding differ from it, each the same for a seed; coding's prompts are code
// and tool calls, each exactly its ISL; a corpus not built is refused naming
// those that are.
func TestCorpusChoice(t *testing.T) {
	tok := o200k(t)
	draw := func(corpus string) []Entry {
		e, err := Synthetic(context.Background(), tok, Options{ISLMean: 64, Entries: 3, Seed: 9, Corpus: corpus})
		require.NoError(t, err)
		return e
	}
	assert.Equal(t, draw(""), draw(CorpusSonnet))
	random := draw(CorpusRandom)
	assert.NotEqual(t, draw(""), random)
	assert.Equal(t, random, draw(CorpusRandom), "the same seed gives the same random prompts")
	assert.False(t, slices.ContainsFunc(random, func(e Entry) bool { return e.Prompt == "" }))

	coding, prose := draw(CorpusCoding), draw("")
	assert.Equal(t, coding, draw(CorpusCoding), "the same seed gives the same coding prompts")
	for i, e := range coding {
		assert.Equal(t, 64, tok.Count(e.Prompt), "exactly the ISL: %q", e.Prompt)
		assert.Contains(t, codingText(), e.Prompt, "cut from the coding corpus")
		assert.NotEqual(t, prose[i].Prompt, e.Prompt)
	}

	_, err := Synthetic(context.Background(), tok, Options{ISLMean: 64, Entries: 1, Corpus: "shakespeare"})
	require.ErrorContains(t, err, `prompt corpus "shakespeare" is not available here: use sonnet (prose, the default), coding (code and tool calls) or random (vLLM's random token prompts)`)
}

// TestCodingCorpus: the coding corpus is one text for every run (built from
// a fixed seed), of the size it promises, holding each kind of piece.
func TestCodingCorpus(t *testing.T) {
	text := codingText()
	assert.GreaterOrEqual(t, len(text), codingCorpusBytes)
	assert.Less(t, len(text), codingCorpusBytes+4<<10)
	for _, piece := range []string{"def ", "func (s *", "export async function ", "$ git diff --stat", "--- a/", `"tool_calls": [{"id": "call_`, `"role": "tool"`} {
		assert.Contains(t, text, piece)
	}
	assert.True(t, utf8.ValidString(text))
}
