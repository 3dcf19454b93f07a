package tokenizer

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBareModelIDInHubCache: a Hugging Face model id without an org
// ("gpt2", "bert-base-uncased") is looked up as models--NAME in the local
// cache, as Hugging Face resolves it; built-in names and existing paths
// still come first, and a miss lists the paths searched.
func TestBareModelIDInHubCache(t *testing.T) {
	root := t.TempDir()
	t.Setenv("HF_HUB_CACHE", root)
	copyFile(t, "testdata/gpt2-tiny.tokenizer.json", filepath.Join(root, "models--gpt2", "snapshots", "abc", "tokenizer.json"))
	copyFile(t, "testdata/wordpiece.tokenizer.json",
		filepath.Join(root, "models--bert-base-uncased", "snapshots", "def", "tokenizer.json"))

	tok, err := Load("gpt2")
	require.NoError(t, err)
	assert.Equal(t, "gpt2", tok.Name())
	ref, err := Load("testdata/gpt2-tiny.tokenizer.json")
	require.NoError(t, err)
	assert.Equal(t, ref.Encode(" the hello world"), tok.Encode(" the hello world"))

	tok, err = Load("bert-base-uncased")
	require.NoError(t, err)
	assert.Equal(t, "bert-base-uncased", tok.Name())

	t.Run("built-in first", func(t *testing.T) {
		copyFile(t, "testdata/gpt2-tiny.tokenizer.json", filepath.Join(root, "models--cl100k_base", "snapshots", "x", "tokenizer.json"))
		tok, err := Load("cl100k_base")
		require.NoError(t, err)
		assert.Equal(t, "cl100k_base", tok.Name())
	})
	t.Run("existing path first", func(t *testing.T) {
		dir := t.TempDir()
		copyFile(t, "testdata/wordpiece.tokenizer.json", filepath.Join(dir, "gpt2", "tokenizer.json"))
		t.Chdir(dir)
		got, err := Locate("gpt2", "")
		require.NoError(t, err)
		assert.Equal(t, filepath.Join("gpt2", "tokenizer.json"), got)
	})
	t.Run("miss lists the paths searched", func(t *testing.T) {
		_, err := Load("gpt3")
		require.Error(t, err)
		for _, want := range []string{`unknown tokenizer "gpt3"`, "o200k_base, cl100k_base",
			filepath.Join(root, "models--gpt3", "refs", "main") + ": missing",
			filepath.Join(root, "models--gpt3", "snapshots") + ": missing",
			"huggingface-cli download gpt3 tokenizer.json"} {
			assert.Contains(t, err.Error(), want)
		}
	})
	t.Run("not an id", func(t *testing.T) {
		_, err := Load("two words")
		require.Error(t, err)
		assert.Contains(t, err.Error(), `unknown tokenizer "two words"`)
		assert.NotContains(t, err.Error(), "models--")
	})
}
