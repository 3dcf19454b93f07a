package tokenizer

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLongRunCutEveryMaxRun: a stretch of a piece with no boundary that no
// token spans is merged maxRun bytes at a time, so counting a hostile
// reply of one repeated character costs linear time and bounded memory
// (merged whole, 10 MB of one character took 500 MB and 7 s). "y" then
// x's has no such boundary, and the x's merge from offset 1: merged whole
// it gives other tokens at the cuts than merged in maxRun stretches.
func TestLongRunCutEveryMaxRun(t *testing.T) {
	o200k, err := Load("o200k_base")
	require.NoError(t, err)
	cl100k, err := Load("cl100k_base")
	require.NoError(t, err)
	text := "y" + strings.Repeat("x", 3*maxRun)
	for _, tok := range []Tokenizer{o200k, cl100k, qwen3(t)} {
		t.Run(tok.Name(), func(t *testing.T) {
			var parts []int
			for rest := text; rest != ""; {
				n := min(maxRun, len(rest))
				parts = append(parts, tok.Encode(rest[:n])...)
				rest = rest[n:]
			}
			ids := tok.Encode(text)
			assert.Equal(t, parts, ids, "merged maxRun bytes at a time")
			assert.Equal(t, len(ids), tok.Count(text))
			assert.Equal(t, text, tok.Decode(ids))
		})
	}
}

// TestForcedCutKeepsCharacters: a forced cut never splits a UTF-8
// sequence; bytes that are not UTF-8 are cut where they fall.
func TestForcedCutKeepsCharacters(t *testing.T) {
	for _, p := range []string{
		strings.Repeat("中", maxRun),
		"ab" + strings.Repeat("🙂", maxRun),
		strings.Repeat("x", 2*maxRun),
		strings.Repeat("\x80", 2*maxRun),
	} {
		for start := range 5 {
			c := forcedCut(p, start)
			assert.LessOrEqual(t, c, start+maxRun)
			assert.Greater(t, c, start+maxRun-utf8.UTFMax)
			if utf8.ValidString(p) {
				assert.True(t, utf8.RuneStart(p[c]), "cut inside a character at %d", c)
			} else {
				assert.Equal(t, start+maxRun, c)
			}
		}
	}
}
