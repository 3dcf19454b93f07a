package tokenizer

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOrdinary(t *testing.T) {
	tok, err := Load("o200k_base")
	require.NoError(t, err)
	ids, err := Ordinary(tok)
	require.NoError(t, err)
	assert.Greater(t, len(ids), 199_000)
	assert.IsIncreasing(t, ids)
	assert.NotContains(t, ids, 199999, "<|endoftext|> is special")
	assert.Equal(t, "!", tok.Decode(ids[:1]))
}

// TestOrdinaryFamilies: every family lists its vocabulary without its
// added tokens, and each ordinary token decodes to text.
func TestOrdinaryFamilies(t *testing.T) {
	for _, c := range []struct{ file, added string }{
		{"qwen3.tokenizer.json.gz", "<|im_start|>"},
		{"llama2.tokenizer.json.gz", "<s>"},
		{"bert-base-uncased.tokenizer.json.gz", "[CLS]"},
	} {
		tok, err := Load("testdata/" + c.file)
		require.NoError(t, err, c.file)
		ids, err := Ordinary(tok)
		require.NoError(t, err, c.file)
		assert.IsIncreasing(t, ids, c.file)
		special := tok.Encode(c.added)
		require.Len(t, special, 1, c.file)
		assert.NotContains(t, ids, special[0], "%s: %s is added", c.file, c.added)
		assert.NotEmpty(t, tok.Decode(ids[len(ids)/2:len(ids)/2+1]), c.file)
	}
}

// TestVocabulary: every family lists its whole vocabulary, its special and
// added tokens included, ascending and each id once; it holds every
// ordinary token.
func TestVocabulary(t *testing.T) {
	for _, c := range []struct{ spec, special string }{
		{"o200k_base", "<|endoftext|>"},
		{"testdata/qwen3.tokenizer.json.gz", "<|im_start|>"},
		{"testdata/llama2.tokenizer.json.gz", "<s>"},
		{"testdata/bert-base-uncased.tokenizer.json.gz", "[CLS]"},
	} {
		tok, err := Load(c.spec)
		require.NoError(t, err, c.spec)
		all, err := Vocabulary(tok)
		require.NoError(t, err, c.spec)
		ordinary, err := Ordinary(tok)
		require.NoError(t, err, c.spec)
		assert.IsIncreasing(t, all, c.spec)
		assert.Greater(t, len(all), len(ordinary), c.spec)
		for _, id := range ordinary {
			if _, ok := slices.BinarySearch(all, id); !ok {
				t.Fatalf("%s: ordinary id %d is not in the vocabulary", c.spec, id)
			}
		}
		id := 199999 // o200k_base's <|endoftext|>, which its Encode spells out as ordinary text
		if c.spec != "o200k_base" {
			special := tok.Encode(c.special)
			require.Len(t, special, 1, c.spec)
			id = special[0]
		}
		_, ok := slices.BinarySearch(all, id)
		assert.True(t, ok, "%s: %s is in the vocabulary", c.spec, c.special)
		assert.Equal(t, c.special, tok.Decode([]int{id}), c.spec)
	}
}
