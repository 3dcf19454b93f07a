package dataset

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

const qwen3Path = "../tokenizer/testdata/qwen3.tokenizer.json.gz"

var loadQwen3 = sync.OnceValues(func() (tokenizer.Tokenizer, error) { return tokenizer.Load(qwen3Path) })

// tokenizers returns the tokenizers the tests run against, by short name.
func tokenizers(tb testing.TB) map[string]tokenizer.Tokenizer {
	tb.Helper()
	o200k, err := tokenizer.Load("o200k_base")
	require.NoError(tb, err)
	qwen3, err := loadQwen3()
	require.NoError(tb, err)
	return map[string]tokenizer.Tokenizer{"o200k_base": o200k, "qwen3": qwen3}
}

func TestCorpusMatchesReference(t *testing.T) {
	data, err := os.ReadFile("testdata/opticks.gold.json")
	require.NoError(t, err)
	var gold map[string]struct {
		Tokens int    `json:"tokens"`
		SHA256 string `json:"sha256_of_comma_joined_ids"`
	}
	require.NoError(t, json.Unmarshal(data, &gold))
	for name, tok := range tokenizers(t) {
		t.Run(name, func(t *testing.T) {
			c, err := corpusFor(tok, "")
			require.NoError(t, err)
			ids := c.ids
			require.Len(t, ids, gold[name].Tokens)
			parts := make([]string, len(ids))
			for i, id := range ids {
				parts[i] = strconv.Itoa(id)
			}
			sum := sha256.Sum256([]byte(strings.Join(parts, ",")))
			assert.Equal(t, gold[name].SHA256, hex.EncodeToString(sum[:]))
		})
	}
}

func TestSyntheticExactLengths(t *testing.T) {
	for name, tok := range tokenizers(t) {
		for _, isl := range []int{1, 7, 128, 1024, 4096} {
			t.Run(fmt.Sprintf("%s/isl=%d", name, isl), func(t *testing.T) {
				n := 20
				if isl > 1024 {
					n = 8 // slow under -race
				}
				entries, err := Synthetic(context.Background(), tok, Options{ISLMean: isl, Entries: n, Seed: int64(isl)})
				require.NoError(t, err)
				require.Len(t, entries, n)
				for _, e := range entries {
					assert.Equal(t, isl, e.InputTokens)
					assert.Equal(t, isl, tok.Count(e.Prompt), "prompt %q", e.Prompt)
					assert.True(t, utf8.ValidString(e.Prompt))
					assert.Zero(t, e.MaxTokens)
				}
			})
		}
		t.Run(name+"/stddev", func(t *testing.T) {
			entries, err := Synthetic(context.Background(), tok, Options{ISLMean: 300, ISLStddev: 150, Entries: 60, Seed: 7})
			require.NoError(t, err)
			seen := map[int]bool{}
			for _, e := range entries {
				assert.GreaterOrEqual(t, e.InputTokens, 1)
				assert.Equal(t, e.InputTokens, tok.Count(e.Prompt))
				seen[e.InputTokens] = true
			}
			assert.Greater(t, len(seen), 30, "lengths are drawn, not constant")
		})
	}
}

func TestSyntheticDeterministic(t *testing.T) {
	toks := tokenizers(t)
	o := Options{ISLMean: 64, ISLStddev: 20, OSLMean: 100, OSLStddev: 30, Entries: 25, Seed: 42}
	a, err := Synthetic(context.Background(), toks["qwen3"], o)
	require.NoError(t, err)
	b, err := Synthetic(context.Background(), toks["qwen3"], o)
	require.NoError(t, err)
	assert.Equal(t, a, b, "same seed, same entries")

	o.Seed = 43
	c, err := Synthetic(context.Background(), toks["qwen3"], o)
	require.NoError(t, err)
	assert.NotEqual(t, prompts(a), prompts(c), "another seed, other prompts")
	assert.NotEqual(t, lengths(a), lengths(c), "another seed, other lengths")

	o.Seed = 42
	d, err := Synthetic(context.Background(), toks["o200k_base"], o)
	require.NoError(t, err)
	assert.Equal(t, lengths(a), lengths(d), "the drawn lengths depend on the seed alone")
	assert.NotEqual(t, prompts(a), prompts(d))
}

func prompts(es []Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Prompt
	}
	return out
}

func lengths(es []Entry) [][2]int {
	out := make([][2]int, len(es))
	for i, e := range es {
		out[i] = [2]int{e.InputTokens, e.MaxTokens}
	}
	return out
}

func TestSyntheticMaxTokens(t *testing.T) {
	tok := tokenizers(t)["o200k_base"]
	t.Run("normal", func(t *testing.T) {
		entries, err := Synthetic(context.Background(), tok, Options{ISLMean: 1, OSLMean: 200, OSLStddev: 40, Entries: 4000, Seed: 1})
		require.NoError(t, err)
		var sum, sumSq float64
		for _, e := range entries {
			sum += float64(e.MaxTokens)
			sumSq += float64(e.MaxTokens) * float64(e.MaxTokens)
		}
		mean := sum / float64(len(entries))
		std := math.Sqrt(sumSq/float64(len(entries)) - mean*mean)
		assert.InDelta(t, 200, mean, 4) // standard error 0.6
		assert.InDelta(t, 40, std, 4)
	})
	t.Run("clamped to 1", func(t *testing.T) {
		entries, err := Synthetic(context.Background(), tok, Options{ISLMean: 1, OSLMean: 2, OSLStddev: 50, Entries: 500, Seed: 1})
		require.NoError(t, err)
		ones := 0
		for _, e := range entries {
			require.GreaterOrEqual(t, e.MaxTokens, 1)
			if e.MaxTokens == 1 {
				ones++
			}
		}
		assert.Greater(t, ones, 150, "about half the draws fall below 1")
	})
	t.Run("no stddev", func(t *testing.T) {
		entries, err := Synthetic(context.Background(), tok, Options{ISLMean: 5, OSLMean: 77, Entries: 50, Seed: 1})
		require.NoError(t, err)
		for _, e := range entries {
			assert.Equal(t, 77, e.MaxTokens)
			assert.Equal(t, 5, e.InputTokens)
		}
	})
	t.Run("no max tokens", func(t *testing.T) {
		entries, err := Synthetic(context.Background(), tok, Options{ISLMean: 5, OSLStddev: 10, Entries: 50, Seed: 1})
		require.NoError(t, err)
		for _, e := range entries {
			assert.Zero(t, e.MaxTokens)
		}
	})
}

func TestSyntheticInvalidOptions(t *testing.T) {
	tok := tokenizers(t)["o200k_base"]
	valid := Options{ISLMean: 10, Entries: 1}
	cases := []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"isl 0", func(o *Options) { o.ISLMean = 0 }, "input tokens mean must be at least 1, got 0"},
		{"negative osl", func(o *Options) { o.OSLMean = -1 }, "output tokens mean must not be negative"},
		{"negative isl stddev", func(o *Options) { o.ISLStddev = -1 }, "input tokens stddev"},
		{"NaN osl stddev", func(o *Options) { o.OSLStddev = math.NaN() }, "output tokens stddev"},
		{"no entries", func(o *Options) { o.Entries = 0 }, "number of dataset entries must be at least 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := valid
			c.edit(&o)
			_, err := Synthetic(context.Background(), tok, o)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// lossy decodes like its tokenizer but drops the first token's text whenever
// that token id is divisible by 3, so many windows come back one token
// short and must be lengthened.
type lossy struct{ tokenizer.Tokenizer }

func (l lossy) Name() string { return "lossy-" + l.Tokenizer.Name() }

func (l lossy) Decode(ids []int) string {
	if len(ids) > 1 && ids[0]%3 == 0 {
		ids = ids[1:]
	}
	return l.Tokenizer.Decode(ids)
}

// innumerate counts every text as zero tokens: no window can ever fit.
type innumerate struct{ tokenizer.Tokenizer }

func (innumerate) Name() string          { return "innumerate" }
func (innumerate) Count(text string) int { return 0 }

func TestSyntheticAdjustsWindows(t *testing.T) {
	base := tokenizers(t)["o200k_base"]
	tok := lossy{base}
	entries, err := Synthetic(context.Background(), tok, Options{ISLMean: 50, Entries: 100, Seed: 3})
	require.NoError(t, err)
	for _, e := range entries {
		assert.Equal(t, 50, base.Count(e.Prompt))
	}

	_, err = Synthetic(context.Background(), innumerate{base}, Options{ISLMean: 5, Entries: 1})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no text of exactly 5 tokens under tokenizer innumerate found in 100 windows")
}
