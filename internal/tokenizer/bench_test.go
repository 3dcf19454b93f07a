package tokenizer

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"
	"github.com/stretchr/testify/require"
	"golang.org/x/text/unicode/norm"
)

// benchTexts are the texts BenchmarkCount counts, each cut to size bytes:
// one character repeated (a hostile reply), Chinese without spaces (one
// piece as long as the text) and English prose (the dataset corpus).
func benchTexts(tb testing.TB, size int) map[string]string {
	corpus, err := os.ReadFile("../dataset/corpus/opticks.txt")
	require.NoError(tb, err)
	rng := rand.New(rand.NewPCG(7, 8))
	var cjk strings.Builder
	for cjk.Len() < size {
		cjk.WriteRune(rune(0x4e00 + rng.IntN(0x9fa5-0x4e00)))
	}
	prose := strings.Repeat(string(corpus), size/len(corpus)+1)
	return map[string]string{
		"single-char": strings.Repeat("a", size),
		"cjk":         cjk.String(),
		"prose":       strings.ToValidUTF8(prose[:size], ""),
	}
}

// BenchmarkCount counts 1 MB texts with the engine, and 32 KB ones with the
// engine and the reference (tiktoken-go's CoreBPE, quadratic on long pieces,
// which does not finish on a megabyte of one character), for the ratio.
//
//	go test -run '^$' -bench Count -benchtime 3x ./internal/tokenizer
func BenchmarkCount(b *testing.B) {
	for _, p := range refPairs(b) {
		if p.name != Default && p.name != qwen3Path {
			continue
		}
		tok, err := Load(p.name)
		if p.name == qwen3Path {
			tok, err = loadQwen3()
		}
		require.NoError(b, err)
		// The reference path of Count: normalize, then encode (the texts
		// hold no added tokens).
		old := func(text string) int { return len(p.ref(text)) }
		if p.name == qwen3Path {
			old = func(text string) int { return len(p.ref(norm.NFC.String(text))) }
		}
		for _, size := range []int{32 << 10, 1 << 20} {
			texts := benchTexts(b, size)
			for _, kind := range []string{"single-char", "cjk", "prose"} {
				text := texts[kind]
				name := fmt.Sprintf("%s/%s/%dKB", strings.TrimSuffix(p.name[strings.LastIndex(p.name, "/")+1:], ".tokenizer.json.gz"), kind, size>>10)
				b.Run(name+"/new", func(b *testing.B) { benchCount(b, text, tok.Count) })
				if size < 1<<20 || kind == "prose" {
					b.Run(name+"/old", func(b *testing.B) { benchCount(b, text, old) })
				}
			}
		}
	}
}

func benchCount(b *testing.B, text string, count func(string) int) {
	n := count(text)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		count(text)
	}
	b.ReportMetric(float64(n), "tokens")
}

// BenchmarkLoad builds the default built-in encoding from its embedded rank
// file, with the engine and with the reference, and the Qwen3 tokenizer from
// its 11 MB tokenizer.json.
func BenchmarkLoad(b *testing.B) {
	b.Run("o200k_base/new", func(b *testing.B) {
		for b.Loop() {
			_, err := newBuiltin(Default)
			require.NoError(b, err)
		}
	})
	b.Run("o200k_base/old", func(b *testing.B) {
		for b.Loop() {
			ranks, err := loader.NewOfflineLoader().LoadTiktokenBpe("o200k_base.tiktoken")
			require.NoError(b, err)
			_, err = tiktoken.NewCoreBPE(ranks, builtinEncodings[Default].specials, o200kPattern)
			require.NoError(b, err)
		}
	})
	b.Run("qwen3", func(b *testing.B) {
		for b.Loop() {
			_, err := Load(qwen3Path)
			require.NoError(b, err)
		}
	})
}

// BenchmarkCountFamilies counts the 1 MiB reference corpus (as one text)
// and the 1 MiB texts of BenchmarkCount with each family's tokenizer; the
// tokens/s metric is what counting must keep above 0.5 M.
//
//	go test -run '^$' -bench CountFamilies -benchtime 3x ./internal/tokenizer
func BenchmarkCountFamilies(b *testing.B) {
	corpus := strings.Join(corpusSegments(b), "\n")
	texts := benchTexts(b, 1<<20)
	texts["corpus"] = corpus
	for _, name := range families {
		tok := loadFamily(b, name)
		for _, kind := range []string{"corpus", "prose", "cjk", "single-char"} {
			text := texts[kind]
			b.Run(name+"/"+kind, func(b *testing.B) {
				n := tok.Count(text)
				b.SetBytes(int64(len(text)))
				for b.Loop() {
					tok.Count(text)
				}
				b.ReportMetric(float64(n), "tokens")
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
			})
		}
	}
}

// BenchmarkCountLongPiece counts texts that are one piece however long:
// one character repeated and random letters without a space, at growing
// sizes (a record may hold 256 MiB): time per byte must stay flat.
//
//	go test -run '^$' -bench CountLongPiece -benchtime 2x ./internal/tokenizer
func BenchmarkCountLongPiece(b *testing.B) {
	tok, err := Load(Default)
	require.NoError(b, err)
	rng := rand.New(rand.NewPCG(9, 10))
	for _, size := range []int{1 << 20, 4 << 20, 16 << 20} {
		letters := make([]byte, size)
		for i := range letters {
			letters[i] = byte('a' + rng.IntN(26))
		}
		for kind, text := range map[string]string{"single-char": strings.Repeat("a", size), "letters": string(letters)} {
			b.Run(fmt.Sprintf("%s/%dMB", kind, size>>20), func(b *testing.B) { benchCount(b, text, tok.Count) })
		}
	}
}
