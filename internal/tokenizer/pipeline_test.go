package tokenizer

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The pipeline's stages where the reference corpus does not reach: Split
// behaviors that real tokenizers use rarely, Metaspace's split and prepend
// schemes, and the BPE model's options. Expected values follow Hugging
// Face's tokenizers (Rust).

func TestSplitBehaviors(t *testing.T) {
	dash := "-"
	cases := []struct {
		behavior string
		invert   bool
		want     []string
	}{
		{"Removed", false, []string{"a", "b"}},
		{"Isolated", false, []string{"a", "-", "-", "b", "-"}},
		{"MergedWithPrevious", false, []string{"a-", "-", "b-"}},
		{"MergedWithNext", false, []string{"a", "-", "-b", "-"}},
		{"Contiguous", false, []string{"a", "--", "b", "-"}},
		{"Removed", true, []string{"-", "-", "-"}},
		{"MergedWithPrevious", true, []string{"a", "-", "-b", "-"}},
	}
	for _, c := range cases {
		s, err := newSplitStep(&hfPreTokenizer{Pattern: hfPattern{String: &dash}, Behavior: c.behavior, Invert: c.invert})
		require.NoError(t, err)
		assert.Equal(t, c.want, s.apply([]string{"a--b-"}, true, nil), "%s invert=%v", c.behavior, c.invert)
	}
	re := `\d+`
	s, err := newSplitStep(&hfPreTokenizer{Pattern: hfPattern{Regex: &re}, Behavior: "Isolated"})
	require.NoError(t, err)
	assert.Equal(t, []string{"x", "12", "é", "3"}, s.apply([]string{"x12é3"}, true, nil))
	assert.Equal(t, []string{"ab", "1"}, s.apply([]string{"ab", "1"}, true, nil), "each piece on its own")
}

func TestMetaspace(t *testing.T) {
	no, yes := false, true
	cases := []struct {
		p       hfPreTokenizer
		in      []string
		atStart bool
		want    []string
	}{
		{hfPreTokenizer{PrependScheme: "always"}, []string{"hello  world"}, false, []string{"▁hello", "▁", "▁world"}},
		{hfPreTokenizer{PrependScheme: "always", Split: &no}, []string{"hello  world", "x"}, false, []string{"▁hello▁▁world", "▁x"}},
		{hfPreTokenizer{PrependScheme: "first", Split: &no}, []string{"a b", "c"}, true, []string{"▁a▁b", "c"}},
		{hfPreTokenizer{PrependScheme: "first", Split: &no}, []string{"a b"}, false, []string{"a▁b"}},
		{hfPreTokenizer{PrependScheme: "first", Split: &no}, []string{" a"}, true, []string{"▁a"}},
		{hfPreTokenizer{PrependScheme: "never"}, []string{"a b c"}, true, []string{"a", "▁b", "▁c"}},
		{hfPreTokenizer{AddPrefixSpace: &no}, []string{"a b"}, true, []string{"a", "▁b"}},
		{hfPreTokenizer{AddPrefixSpace: &yes, Replacement: "_"}, []string{"a b"}, true, []string{"_a", "_b"}},
	}
	for _, c := range cases {
		m, err := newMetaspace(&c.p)
		require.NoError(t, err)
		assert.Equal(t, c.want, m.apply(c.in, c.atStart, nil), "%+v on %q", c.p, c.in)
	}
}

// writeTokenizer writes a tokenizer.json made of the given parts and
// loads it.
func writeTokenizer(t *testing.T, file map[string]any) Tokenizer {
	t.Helper()
	data, err := json.Marshal(file)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "tokenizer.json")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	tok, err := Load(path)
	require.NoError(t, err)
	return tok
}

// TestMergesByPair checks that the BPE model merges the pairs its merges
// list names, in its order, and no others: "abc" is a token, but no listed
// merge makes it from "ab" and "c".
func TestMergesByPair(t *testing.T) {
	vocab := map[string]int{"<unk>": 0, "a": 1, "b": 2, "c": 3, "ab": 4, "bc": 5, "abc": 6, "<0x41>": 7}
	file := func(model map[string]any) map[string]any {
		m := map[string]any{"type": "BPE", "vocab": vocab, "merges": []string{"b c", "a b"}, "unk_token": "<unk>"}
		for k, v := range model {
			m[k] = v
		}
		return map[string]any{"model": m}
	}
	tok := writeTokenizer(t, file(nil))
	assert.Equal(t, []int{1, 5}, tok.Encode("abc"), "b c ranks first")
	assert.Equal(t, []int{4, 4}, tok.Encode("abab"))
	assert.Equal(t, []int{0, 0, 1}, tok.Encode("xya"), "one unknown token per character")
	assert.Equal(t, "abc", tok.Decode(tok.Encode("abc")))

	tok = writeTokenizer(t, file(map[string]any{"merges": [][]string{{"a", "b"}, {"b", "c"}}}))
	assert.Equal(t, []int{4, 3}, tok.Encode("abc"), "a b ranks first, and ab c is no merge")

	tok = writeTokenizer(t, file(map[string]any{"ignore_merges": true}))
	assert.Equal(t, []int{6}, tok.Encode("abc"), "a whole piece in the vocabulary")

	tok = writeTokenizer(t, file(map[string]any{"fuse_unk": true}))
	assert.Equal(t, []int{0, 1, 0}, tok.Encode("xyaz"), "unknown characters fused")

	tok = writeTokenizer(t, file(map[string]any{"byte_fallback": true}))
	assert.Equal(t, []int{7, 0}, tok.Encode("Aé"), "A falls back to its byte; é has no byte tokens")
	assert.Equal(t, "A", tok.Decode([]int{7}))

	// A long piece goes through the O(n log n) merge and gives the same.
	long := strings.Repeat("abc", 100)
	tok = writeTokenizer(t, file(nil))
	want := []int{}
	for range 100 {
		want = append(want, 1, 5)
	}
	assert.Equal(t, want, tok.Encode(long))
}

// TestMergeAlgorithmsAgree runs both merges of the BPE model on the same
// symbols, with Llama 2's merges.
func TestMergeAlgorithmsAgree(t *testing.T) {
	m := loadFamily(t, "llama2").(*pipeline).model.(*mergesModel)
	rng := rand.New(rand.NewPCG(11, 12))
	for range 3000 {
		piece := "▁" + randomText(rng, fuzzAlphabet, 1+rng.IntN(smallPiece))
		syms := m.symbols(strings.ToValidUTF8(piece, "\ufffd"), nil)
		if len(syms) > smallPiece {
			syms = syms[:smallPiece]
		}
		small := m.mergeSmall(syms, nil)
		require.Equal(t, small, mergeSymbols(m, append([]int32(nil), syms...), nil), "%q", piece)
	}
}

func TestWordPiece(t *testing.T) {
	tok, err := Load("testdata/wordpiece.tokenizer.json")
	require.NoError(t, err)
	assert.Equal(t, []int{3, 4, 5, 0, 0, 0, 3, 5}, tok.Encode("Hello WORLDS [CLS] hellos"), "punctuation isolated, unknown words [UNK]")
	assert.Equal(t, []int{3, 4}, tok.Encode("  héllo\t\x00world\u200d "), "accents stripped, controls dropped")
	assert.Equal(t, []int{0}, tok.Encode(strings.Repeat("s", 101)), "longer than max_input_chars_per_word")
	assert.Equal(t, "hello worlds", tok.Decode([]int{3, 4, 5}))
	assert.Equal(t, "WordPiece", tok.(*pipeline).kind)
}

func TestBertNormalizer(t *testing.T) {
	no := false
	n := bertNormalizer(&hfNormalizer{})
	assert.Equal(t, " 中  文 abcistanbul σσ", n("中文ÀBC\u200bİstanbul ΣΣ"), "zero-width space dropped, İ's dot stripped")
	assert.Equal(t, "i\u0307stanbul σσ", lowercase("İstanbul ΣΣ"), "rune by rune, as Rust lowercases")
	n = bertNormalizer(&hfNormalizer{Lowercase: &no})
	assert.Equal(t, "ÀBC", n("ÀBC"), "accents kept when not lowercasing, by default")
}

// TestDecodeRoundTrips decodes what the families encode: SentencePiece
// BPE gives back the text (the prepended space dropped), WordPiece its
// normalized words.
func TestDecodeRoundTrips(t *testing.T) {
	text := "Hello world, naïve 日本語 🙂 <s> x  y\n"
	for _, name := range []string{"llama2-metaspace", "deepseek_v3"} {
		tok := loadFamily(t, name)
		assert.Equal(t, text, tok.Decode(tok.Encode(text)), name)
	}
	// Llama 2's legacy normalizer prepends ▁ after an added token too.
	llama2 := loadFamily(t, "llama2")
	assert.Equal(t, strings.Replace(text, "<s> ", "<s>  ", 1), llama2.Decode(llama2.Encode(text)))
	bert := loadFamily(t, "bert-base-uncased")
	assert.Equal(t, "hello world , naive 日 本 語 [UNK] < s > x y", bert.Decode(bert.Encode(text)))
}
