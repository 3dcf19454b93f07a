package tokenizer

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCountLongRuns counts texts that are one piece each, as a hostile
// server reply can be. tiktoken-go's quadratic merge never finished two
// megabytes of one character; bench_test.go measures how fast they now are.
func TestCountLongRuns(t *testing.T) {
	o200k, err := Load("o200k_base")
	require.NoError(t, err)
	// o200k_base has a token of eight a's and merges a run into those.
	assert.Equal(t, 2<<20/8, o200k.Count(strings.Repeat("a", 2<<20)))

	const size = 128 << 10
	cjk := []rune("中文字的一是不了人我在有他这")
	var sb strings.Builder
	for i := 0; sb.Len() < size; i++ {
		sb.WriteRune(cjk[(i*7+i/5)%len(cjk)])
	}
	texts := map[string]string{
		"a":             strings.Repeat("a", size),
		"spaces":        strings.Repeat(" ", size),
		"newlines":      strings.Repeat("\n", size),
		"one CJK rune":  strings.Repeat("中", size/3),
		"CJK, no space": sb.String(),
		"dashes":        strings.Repeat("-", size),
	}
	cl100k, err := Load("cl100k_base")
	require.NoError(t, err)
	for _, tok := range []Tokenizer{o200k, cl100k, qwen3(t)} {
		for name, text := range texts {
			t.Run(tok.Name()+"/"+name, func(t *testing.T) {
				ids := tok.Encode(text)
				assert.Equal(t, len(ids), tok.Count(text))
				assert.Less(t, len(ids), len(text)/2, "long runs merge")
				assert.True(t, tok.Decode(ids) == text, "decode round-trips")
			})
		}
	}
}

// TestEncodeInvalidUTF8 pins the reading of invalid UTF-8 that the reference
// had: each bad byte is U+FFFD.
func TestEncodeInvalidUTF8(t *testing.T) {
	tok, err := Load("o200k_base")
	require.NoError(t, err)
	for text, valid := range map[string]string{
		"a\xffb":     "a\ufffdb",
		"\xe4\xb8":   "\ufffd\ufffd",
		"\x80\x80 x": "\ufffd\ufffd x",
		"中\xe4":      "中\ufffd",
	} {
		t.Run(fmt.Sprintf("%q", text), func(t *testing.T) {
			assert.Equal(t, tok.Encode(valid), tok.Encode(text))
		})
	}
}

// TestUncrossableNeverInsideAToken checks that no boundary inside an
// occurrence of a token counts as one no merge can cross, for a sample of
// every vocabulary's tokens with bytes on either side.
func TestUncrossableNeverInsideAToken(t *testing.T) {
	for _, p := range refPairs(t) {
		n := 0
		for b := range p.enc.ranks.all() {
			tok := string(b)
			if n++; n%7 != 0 || len(tok) < 2 {
				continue
			}
			for _, s := range []string{tok, "ab" + tok + "cd", "\xe4\xb8" + tok + "\xad"} {
				start := strings.Index(s, tok)
				for c := start + 1; c < start+len(tok); c++ {
					if p.enc.uncrossable(s, c) {
						t.Fatalf("%s: %q: boundary %d inside token %q deemed uncrossable", p.name, s, c, tok)
					}
				}
			}
		}
	}
}

// TestCountKeepsNoIDs: counting a long prompt allocates a small part of
// what encoding it does (the ids of 100 MB of text are hundreds of MB).
func TestCountKeepsNoIDs(t *testing.T) {
	o200k, err := Load("o200k_base")
	require.NoError(t, err)
	text := strings.Repeat("lorem ipsum dolor ", 1<<16) // 1.2 MB, 196,608 tokens
	allocated := func(f func()) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	var n int
	encoded := allocated(func() { n = len(o200k.Encode(text)) })
	counted := allocated(func() { assert.Equal(t, n, o200k.Count(text)) })
	t.Logf("Encode allocated %d bytes, Count %d", encoded, counted)
	assert.Less(t, counted, encoded/10)
}
