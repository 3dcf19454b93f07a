package dataset

import (
	"context"
	_ "embed"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"unicode/utf8"

	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// corpus is the text prompts are cut from: Isaac Newton's Opticks, Book I
// Part I, public domain (provenance in corpus/README.md).
//
//go:embed corpus/opticks.txt
var corpus string

// Entry is one synthetic request.
type Entry struct {
	// Prompt is the prompt text.
	Prompt string
	// InputTokens is the number of tokens of Prompt under the tokenizer,
	// verified by encoding it.
	InputTokens int
	// MaxTokens is the drawn output length, or 0 for none.
	MaxTokens int
}

// Random streams, one per purpose, so that the drawn lengths depend on the
// seed alone and not on the tokenizer.
const (
	streamLengths = iota + 1
	streamWindows
	streamSampler
)

// Prompt search limits: re-encodings of one corpus window, and windows drawn.
const (
	maxAdjustments = 10
	maxWindows     = 100
)

// Synthetic returns o.Entries prompts. Lengths are drawn from normal
// distributions, rounded and clamped to at least 1 token (from a bucket of
// o.SeqDist when set, uniformly from the windows of o.RangeRatio when set). Each prompt is a
// window of the corpus's tokens (wrapping around) decoded to text; the text is
// re-encoded and the window shortened or lengthened until the text has
// exactly the drawn length under tok, or another window is drawn. The same
// seed and tokenizer give the same entries. It stops with ctx's error when
// ctx ends.
func Synthetic(ctx context.Context, tok tokenizer.Tokenizer, o Options) ([]Entry, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	ids, err := o.corpus(tok)
	if err != nil {
		return nil, err
	}
	lengths := rand.New(rand.NewPCG(uint64(o.Seed), streamLengths))
	windows := rand.New(rand.NewPCG(uint64(o.Seed), streamWindows))
	mixture := rand.New(rand.NewPCG(uint64(o.Seed), streamMixture))
	entries := make([]Entry, o.Entries)
	for i := range entries {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("synthetic prompts: stopped after %d of %d: %w", i, o.Entries, err)
		}
		l := o.lengthsOf(mixture)
		isl, osl := l.drawISL(lengths), 0
		if l.osl > 0 {
			osl = l.drawOSL(lengths)
		}
		prompt, err := exactPrompt(tok, ids, isl, windows)
		if err != nil {
			return nil, fmt.Errorf("synthetic prompt %d: %w", i, err)
		}
		entries[i] = Entry{Prompt: prompt, InputTokens: isl, MaxTokens: osl}
	}
	return entries, nil
}

// drawLength draws round(normal(mean, stddev)), at least 1.
func drawLength(r *rand.Rand, mean int, stddev float64) int {
	if stddev == 0 {
		return mean
	}
	return max(1, int(math.Round(float64(mean)+stddev*r.NormFloat64())))
}

// exactPrompt returns text of corpus c that encodes to exactly n tokens under tok.
// Decoding n tokens and re-encoding the text need not give n tokens back
// (tokens merge or split at the window's edges), so the window is resized by
// the difference and re-checked, and after maxAdjustments another window is
// drawn. Windows whose text would cut a UTF-8 character are also redrawn.
func exactPrompt(tok tokenizer.Tokenizer, c promptCorpus, n int, r *rand.Rand) (string, error) {
	ids := c.ids
	for range maxWindows {
		start, size := r.IntN(len(ids)), n
		for range maxAdjustments {
			text := tok.Decode(window(ids, start, size))
			if !utf8.ValidString(text) {
				if !c.vocab {
					break
				}
				text = strings.ToValidUTF8(text, "\uFFFD") // as a Hugging Face decode does
			}
			got := tok.Count(text)
			if got == n {
				return text, nil
			}
			if size += n - got; size < 1 {
				break
			}
		}
	}
	return "", fmt.Errorf("no text of exactly %d tokens under tokenizer %s found in %d windows of the %s corpus", n, tok.Name(), maxWindows, c.name)
}

// window returns the n ids starting at start, wrapping around the end.
func window(ids []int, start, n int) []int {
	w := make([]int, n)
	for i := range w {
		w[i] = ids[(start+i)%len(ids)]
	}
	return w
}
