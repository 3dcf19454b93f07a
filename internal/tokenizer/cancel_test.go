package tokenizer

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/ctxtest"
)

// cancelTexts are long texts of one piece (one character repeated, which a
// 256 MiB record can be) and of many (prose).
func cancelTexts(tb testing.TB) map[string]string {
	texts := benchTexts(tb, 2<<20)
	return map[string]string{"single-char": strings.Repeat("a", 4<<20), "prose": texts["prose"], "cjk": texts["cjk"]}
}

// cancelTokenizers are the built-in engine and each pipeline family.
func cancelTokenizers(t *testing.T) []Tokenizer {
	o200k, err := Load(Default)
	require.NoError(t, err)
	toks := []Tokenizer{o200k, qwen3(t)}
	for _, name := range families {
		toks = append(toks, loadFamily(t, name))
	}
	return toks
}

// TestCountContextLooksOften: counting a long text looks at ctx every
// checkBytes or so, inside one long piece too, so that an interrupt stops
// it within milliseconds whatever the text's length; counted through,
// it gives Count's result.
func TestCountContextLooksOften(t *testing.T) {
	for _, tok := range cancelTokenizers(t) {
		for kind, text := range cancelTexts(t) {
			if strings.Contains(tok.Name(), "bert-base") && kind == "single-char" {
				continue // WordPiece gives a word longer than 100 characters [UNK] at once
			}
			t.Run(tok.Name()+"/"+kind, func(t *testing.T) {
				ctx := ctxtest.NewDoneAfter(1 << 40)
				n, err := CountContext(ctx, tok, text)
				require.NoError(t, err)
				assert.Equal(t, tok.Count(text), n)
				assert.GreaterOrEqual(t, ctx.Looks(), int64(len(text)/checkBytes/2),
					"ctx looked at fewer than once every 2×%d bytes", checkBytes)
			})
		}
	}
}

// TestCountContextStops: once ctx is done the count stops at once with
// ctx's error, without reading on (nor looking at ctx again).
func TestCountContextStops(t *testing.T) {
	for _, tok := range cancelTokenizers(t) {
		for kind, text := range cancelTexts(t) {
			if strings.Contains(tok.Name(), "bert-base") && kind == "single-char" {
				continue
			}
			t.Run(tok.Name()+"/"+kind, func(t *testing.T) {
				ctx := ctxtest.NewDoneAfter(3)
				_, err := CountContext(ctx, tok, text)
				require.Error(t, err)
				assert.True(t, errors.Is(err, context.Canceled), "%v", err)
				assert.Equal(t, int64(3), ctx.Looks(), "looked at ctx again after it was done")
			})
		}
	}
}
