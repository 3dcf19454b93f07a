package tokenizer

import (
	"fmt"
	"strings"

	"github.com/dlclark/regexp2"
)

// The split patterns this package scans by hand. Each is matched the way
// tiktoken's regexp2 engine matches it (leftmost, first alternative that
// succeeds, greedy with backtracking), and every one of them matches at
// every position, so its pieces tile the text.
const (
	// o200kPattern is o200k_base's (and GPT-OSS's).
	o200kPattern = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// tekkenPattern is Mistral's Tekken (Mistral NeMo and later): o200k's
	// without contractions, with single digits.
	tekkenPattern = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+` +
		`|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*` +
		`|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// cl100kPattern is cl100k_base's (and Llama 3's).
	cl100kPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// qwen2Pattern is Qwen 2, 2.5 and 3's: cl100k's with single digits.
	qwen2Pattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// gpt2Pattern is the split pattern of a ByteLevel pre-tokenizer with
	// use_regex set (GPT-2's).
	gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
)

// scanners maps each hand-scanned pattern to its scanner.
var scanners = map[string]scanner{
	o200kPattern:  func(s string) int { return o200kPiece(s, false) },
	tekkenPattern: func(s string) int { return o200kPiece(s, true) },
	cl100kPattern: func(s string) int { return cl100kPiece(s, 3) },
	qwen2Pattern:  func(s string) int { return cl100kPiece(s, 1) },
	gpt2Pattern:   gpt2Piece,
}

// A splitter cuts valid UTF-8 text into the pieces that byte-pair merging
// encodes one at a time.
type splitter interface {
	split(text string, yield func(piece string))
}

// A scanner returns the length in bytes of the piece text starts with; text
// is valid UTF-8 and not empty. Scanners run in time linear in the text they
// look at, and look at no more than the piece and the rune after it.
type scanner func(text string) int

func (s scanner) split(text string, yield func(string)) {
	s.splitWhile(text, func(piece string) bool { yield(piece); return true })
}

// splitWhile is split that stops once yield returns false.
func (s scanner) splitWhile(text string, yield func(string) bool) {
	for text != "" {
		n := s(text)
		if n <= 0 { // cannot happen; a panic beats a hang
			panic("tokenizer: split pattern scanner made no progress")
		}
		if !yield(text[:n]) {
			return
		}
		text = text[n:]
	}
}

// splitWhile cuts text into pieces with sp until yield returns false: at
// once with a scanner, else (a regexp2 splitter) by skipping the rest.
func splitWhile(sp splitter, text string, yield func(string) bool) {
	if s, ok := sp.(scanner); ok {
		s.splitWhile(text, yield)
		return
	}
	going := true
	sp.split(text, func(piece string) { going = going && yield(piece) })
}

// regexSplitter splits with any regexp2 pattern: the pieces are its matches.
// Backtracking makes some patterns super-linear on some texts; the known
// patterns have scanners instead.
type regexSplitter struct{ re *regexp2.Regexp }

func (r regexSplitter) split(text string, yield func(string)) {
	regexMatches(r.re, text, func(start, end int) {
		if end > start {
			yield(text[start:end])
		}
	})
}

// newSplitter returns the splitter of a Hugging Face split pattern. An
// Isolated split also keeps the text between matches, so the regexp2
// fallback adds an alternative that turns such gaps into pieces of their
// own; the known patterns leave no gaps.
func newSplitter(pattern string) (splitter, error) {
	if s, ok := scanners[pattern]; ok {
		return s, nil
	}
	// Compiling the pattern alone first rejects one that would only be
	// valid wrapped, such as `a)|(b`.
	if _, err := compileRegexp2(pattern); err != nil {
		return nil, err
	}
	re, err := compileRegexp2(wrapGaps(pattern))
	if err != nil {
		return nil, err
	}
	return regexSplitter{re}, nil
}

// wrapGaps returns a pattern whose matches are those of pattern and the
// non-empty runs of text between them.
func wrapGaps(pattern string) string {
	return fmt.Sprintf(`(?:%s)|(?:(?!(?:%s))[\s\S])+`, pattern, pattern)
}

// compileRegexp2 compiles a pattern from a tokenizer file. regexp2 panics on
// some malformed patterns instead of returning an error, and its errors
// quote the whole pattern.
func compileRegexp2(pattern string) (re *regexp2.Regexp, err error) {
	defer func() {
		if r := recover(); r != nil {
			re, err = nil, fmt.Errorf("split pattern %s: %s", brief(pattern), clip(fmt.Sprint(r), 80))
		}
	}()
	if re, err = regexp2.Compile(pattern, regexp2.None); err != nil {
		msg, _, _ := strings.Cut(err.Error(), " in `")
		return nil, fmt.Errorf("split pattern %s: %s", brief(pattern), clip(strings.TrimPrefix(msg, "error parsing regexp: "), 80))
	}
	return re, nil
}
