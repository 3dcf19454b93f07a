package tokenizer

import (
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
