package tokenizer

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// benchText is about 64 KiB of the gold fixtures (prose, code, unicode,
// whitespace, numbers) repeated.
func benchText(b *testing.B) string {
	var sb strings.Builder
	fs := readGold(b, "testdata/qwen3.gold.json")
	for sb.Len() < 64<<10 {
		for _, f := range fs {
			sb.WriteString(f.Text)
			sb.WriteString("\n\n")
		}
	}
	return sb.String()
}

func benchEncode(b *testing.B, tok Tokenizer) {
	text := benchText(b)
	n := tok.Count(text)
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for b.Loop() {
		tok.Encode(text)
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}

func BenchmarkEncodeO200k(b *testing.B) {
	tok, err := Load("o200k_base")
	require.NoError(b, err)
	benchEncode(b, tok)
}

func BenchmarkEncodeQwen3(b *testing.B) {
	benchEncode(b, qwen3(b))
}

// BenchmarkLoadQwen3 measures reading, gunzipping and adapting the 11 MB
// Qwen3 tokenizer.json.
func BenchmarkLoadQwen3(b *testing.B) {
	for b.Loop() {
		_, err := Load(qwen3Path)
		require.NoError(b, err)
	}
}
