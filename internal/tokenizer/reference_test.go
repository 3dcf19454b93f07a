package tokenizer

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dlclark/regexp2"
	"github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The reference is the engine this package used before its own:
// github.com/pkoukk/tiktoken-go's CoreBPE, with its regexp2 split and
// quadratic merge, which gave the ids of the gold files. Every test here
// checks that the engine gives exactly its ids.

// tinySplitPath is gpt2-tiny with an Isolated `\d+` split, whose pattern no
// scanner knows: it goes through regexSplitter and keeps gaps.
const tinySplitPath = "testdata/gpt2-tiny-split.tokenizer.json"

// refPair is a tokenizer under test and the reference encoder of its text
// between added tokens (after normalization).
type refPair struct {
	name string
	enc  *engine
	ref  func(string) []int
}

var loadRefPairs = sync.OnceValues(func() ([]refPair, error) {
	tiktoken.SetBpeLoader(loader.NewOfflineLoader())
	var pairs []refPair
	for _, name := range builtinNames {
		tok, err := Load(name)
		if err != nil {
			return nil, err
		}
		ref, err := tiktoken.GetEncoding(name)
		if err != nil {
			return nil, err
		}
		pairs = append(pairs, refPair{name, tok.(*bpe).enc, ref.EncodeOrdinary})
	}
	for _, path := range []string{qwen3Path, "testdata/gpt2-tiny.tokenizer.json", tinySplitPath} {
		p, err := hfRefPair(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		pairs = append(pairs, p)
	}
	return pairs, nil
})

func refPairs(tb testing.TB) []refPair {
	tb.Helper()
	pairs, err := loadRefPairs()
	require.NoError(tb, err)
	return pairs
}

// hfRefPair builds the reference the way this package did: tiktoken's
// CoreBPE on the byte-level ranks, with the split pattern wrapped to keep
// gaps.
func hfRefPair(path string) (refPair, error) {
	load := func() (Tokenizer, error) { return Load(path) }
	if path == qwen3Path {
		load = loadQwen3
	}
	tok, err := load()
	if err != nil {
		return refPair{}, err
	}
	data, err := readMaybeGzip(path)
	if err != nil {
		return refPair{}, err
	}
	var f struct {
		PreTokenizer *hfPreTokenizer `json:"pre_tokenizer"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return refPair{}, err
	}
	pattern, err := splitPattern(f.PreTokenizer)
	if err != nil {
		return refPair{}, err
	}
	enc := tok.(*bpe).enc
	ranks := make(map[string]int, enc.ranks.len())
	for k, v := range enc.ranks.all() {
		ranks[string(k)] = int(v)
	}
	core, err := tiktoken.NewCoreBPE(ranks, nil, wrapGaps(pattern))
	if err != nil {
		return refPair{}, err
	}
	return refPair{path, enc, tiktoken.NewTiktoken(core, nil, nil).EncodeOrdinary}, nil
}

// checkSame fails unless enc and the reference give the same ids for text.
func (p refPair) checkSame(tb testing.TB, text string) {
	tb.Helper()
	got, want := p.enc.encode(text), p.ref(text)
	if !slices.Equal(got, want) {
		tb.Fatalf("%s: %.80q (%d bytes): ids differ from the reference:\n got %d ids %.200v\nwant %d ids %.200v",
			p.name, text, len(text), len(got), got, len(want), want)
	}
}

func TestEngineMatchesReferenceOnCorpus(t *testing.T) {
	corpus, err := os.ReadFile("../dataset/corpus/opticks.txt")
	require.NoError(t, err)
	texts := []string{string(corpus)}
	for _, gold := range []string{"testdata/o200k_base.gold.json", "testdata/qwen3.gold.json"} {
		for _, f := range readGold(t, gold) {
			texts = append(texts, f.Text)
		}
	}
	for _, p := range refPairs(t) {
		t.Run(p.name, func(t *testing.T) {
			texts := texts
			if p.name == tinySplitPath { // regexp2 on both sides: slow, and no different
				texts = texts[1:]
			}
			for _, text := range texts {
				p.checkSame(t, text)
			}
		})
	}
}

// TestEngineMatchesReferenceOnLongPieces covers the pieces that took the old
// merge quadratic time, at sizes it still finishes quickly.
func TestEngineMatchesReferenceOnLongPieces(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	texts := map[string]string{}
	for _, unit := range []string{"a", "A", " ", "\n", "\t", "!", "-", "=", "0", "中", "ab", "aB", "é", "\u0301", " \n", "\r\n", "🙂", "'s"} {
		for _, n := range []int{65, 100, 333, 1500} {
			texts[fmt.Sprintf("%q×%d", unit, n)] = strings.Repeat(unit, n)
		}
	}
	for i := range 20 {
		texts[fmt.Sprintf("cjk-%d", i)] = randomText(rng, []string{"中", "文", "字", "的", "一", "是", "不", "了", "人", "我", "在", "有", "他", "这"}, 200+rng.IntN(1000))
		texts[fmt.Sprintf("alpha-%d", i)] = randomText(rng, []string{"a", "b", "c", "e", "t", "h", "A", "Z", "é", "ß"}, 200+rng.IntN(1000))
		texts[fmt.Sprintf("punct-%d", i)] = randomText(rng, []string{"!", "-", ".", "/", "=", "*", "#", "(", ")", "{", "}", "\"", "'"}, 200+rng.IntN(1000))
		texts[fmt.Sprintf("mixed-%d", i)] = randomText(rng, fuzzAlphabet, 200+rng.IntN(1000))
		b := make([]byte, 200+rng.IntN(1000))
		for j := range b {
			b[j] = byte(rng.IntN(256))
		}
		texts[fmt.Sprintf("bytes-%d", i)] = string(b)
	}
	for _, p := range refPairs(t) {
		t.Run(p.name, func(t *testing.T) {
			for _, text := range texts {
				p.checkSame(t, text)
			}
		})
	}
}

// fuzzAlphabet holds runes at the edges of the split patterns' classes.
var fuzzAlphabet = []string{
	"a", "z", "A", "Z", "s", "S", "t", "T", "r", "R", "e", "E", "v", "V", "m", "M", "l", "L", "d", "D", "'", "’",
	"ſ", "K", "İ", "ǅ", "ʰ", "ー", "中", "한", "\u0301", "\u0903", "\u20dd", "é", "ß",
	"0", "9", "٣", "Ⅻ", "½", "²",
	" ", "  ", "\t", "\n", "\r", "\r\n", "\v", "\f", "\u0085", "\u00a0", "\u1680", "\u2028", "\u3000", "\u180e", "\u200b",
	"!", ".", ",", "/", "-", "_", "$", "€", "🙂", "\ufffd", "<|endoftext|>", "\x00", "\x80", "\xff",
}

func randomText(rng *rand.Rand, alphabet []string, n int) string {
	var sb strings.Builder
	for sb.Len() < n {
		sb.WriteString(alphabet[rng.IntN(len(alphabet))])
	}
	return sb.String()
}

// TestScannersMatchRegexp2 checks each scanner against regexp2 on its
// pattern, as tiktoken uses it and wrapped to keep gaps as Hugging Face
// does.
func TestScannersMatchRegexp2(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	texts := []string{""}
	for range 2000 {
		texts = append(texts, randomText(rng, fuzzAlphabet, rng.IntN(40)))
	}
	for pattern := range scanners {
		for _, text := range texts {
			checkScanner(t, pattern, text)
		}
	}
}

var regexp2Splitters sync.Map // pattern → splitter

// checkScanner fails unless the scanner of pattern cuts text into the
// pieces that regexp2 finds, with the pattern alone and wrapped.
func checkScanner(tb testing.TB, pattern, text string) {
	tb.Helper()
	text = string([]rune(text))
	got := pieces(scanners[pattern], text)
	patterns := []string{pattern, wrapGaps(pattern)}
	if _, gaps := gapScanners[pattern]; gaps { // its matches alone do not tile the text
		patterns = patterns[1:]
	}
	for _, p := range patterns {
		s, ok := regexp2Splitters.Load(p)
		if !ok {
			s, _ = regexp2Splitters.LoadOrStore(p, regexSplitter{regexp2.MustCompile(p, regexp2.None)})
		}
		if want := pieces(s.(splitter), text); fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
			tb.Fatalf("pattern %.40s… on %q:\n got %q\nwant %q", p, text, got, want)
		}
	}
}

func pieces(s splitter, text string) []string {
	var out []string
	s.split(text, func(p string) { out = append(out, p) })
	return out
}

// TestMergesAgree runs both merge algorithms, and both index types of the
// heap one, on the same pieces.
func TestMergesAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, p := range refPairs(t) {
		for range 3000 {
			piece := randomText(rng, fuzzAlphabet, 1+rng.IntN(smallPiece))
			if len(piece) > smallPiece {
				piece = piece[:smallPiece]
			}
			small := p.enc.mergeSmall(piece, nil)
			require.Equal(t, small, mergeHeap[int32](p.enc, piece, nil), "%s: %q", p.name, piece)
			require.Equal(t, small, mergeHeap[int](p.enc, piece, nil), "%s: %q", p.name, piece)
		}
	}
}

// TestKnownPatternsAreScanned checks that the test tokenizers whose split
// pattern is a known one get its scanner, not regexp2.
func TestKnownPatternsAreScanned(t *testing.T) {
	for _, p := range refPairs(t) {
		_, scanned := p.enc.split.(scanner)
		assert.Equal(t, p.name != tinySplitPath, scanned, p.name)
	}
}
