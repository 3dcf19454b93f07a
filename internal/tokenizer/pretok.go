package tokenizer

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// A preTokenizer is one step of a Hugging Face pre-tokenizer: it cuts each
// piece of in (in order) into pieces, appended to out. atStart tells whether
// in[0] starts the whole text (Metaspace's prepend_scheme "first").
type preTokenizer interface {
	apply(in []string, atStart bool, out []string) []string
}

// preTokenizers parses a pre_tokenizer object into its steps. byteLevel
// reports whether one is ByteLevel, whose pieces the model reads as bytes.
func preTokenizers(p *hfPreTokenizer) (steps []preTokenizer, byteLevel bool, err error) {
	if p == nil {
		return nil, false, nil
	}
	if p.Type == "Sequence" {
		for i := range p.Pretokenizers {
			s, bl, err := preTokenizers(&p.Pretokenizers[i])
			if err != nil {
				return nil, false, err
			}
			steps, byteLevel = append(steps, s...), byteLevel || bl
		}
		return steps, byteLevel, nil
	}
	switch p.Type {
	case "ByteLevel":
		return []preTokenizer{byteLevelStep{p.AddPrefixSpace != nil && *p.AddPrefixSpace, p.UseRegex == nil || *p.UseRegex}}, true, nil
	case "Split":
		s, err := newSplitStep(p)
		return []preTokenizer{s}, false, err
	case "Metaspace":
		m, err := newMetaspace(p)
		return []preTokenizer{m}, false, err
	case "BertPreTokenizer":
		return []preTokenizer{bertPreTokenizer{}}, false, nil
	case "WhitespaceSplit":
		return []preTokenizer{whitespaceSplit{}}, false, nil
	}
	return nil, false, fmt.Errorf("%w: pre-tokenizer type %s (supported: ByteLevel, Split, Metaspace, BertPreTokenizer, WhitespaceSplit, Sequence)",
		ErrUnsupported, brief(p.Type))
}

// byteLevelStep is the ByteLevel pre-tokenizer: the byte-to-rune mapping is
// the model's (its vocabulary is read back into bytes), so what is left is
// the optional space before each piece and GPT-2's split.
type byteLevelStep struct{ addPrefixSpace, useRegex bool }

func (b byteLevelStep) apply(in []string, _ bool, out []string) []string {
	for _, p := range in {
		if b.addPrefixSpace && !strings.HasPrefix(p, " ") {
			p = " " + p
		}
		if !b.useRegex {
			out = append(out, p)
			continue
		}
		scanner(gpt2Piece).split(p, func(s string) { out = append(out, s) })
	}
	return out
}

// splitBehavior is what a Split pre-tokenizer does with the delimiters it
// matches (Hugging Face's SplitDelimiterBehavior).
type splitBehavior int

const (
	removed splitBehavior = iota
	isolated
	mergedWithPrevious
	mergedWithNext
	contiguous
)

var splitBehaviors = map[string]splitBehavior{
	"Removed": removed, "Isolated": isolated, "MergedWithPrevious": mergedWithPrevious,
	"MergedWithNext": mergedWithNext, "Contiguous": contiguous,
}

// splitStep is the Split pre-tokenizer: find returns the delimiters of a
// piece as byte ranges, in order; invert makes the matches the kept parts.
type splitStep struct {
	find     func(text string, yield func(start, end int))
	behavior splitBehavior
	invert   bool
	// scan, when set, is a scanner giving exactly the pieces of an Isolated
	// split, much faster than the regexp.
	scan scanner
}

func newSplitStep(p *hfPreTokenizer) (*splitStep, error) {
	behavior, ok := splitBehaviors[p.Behavior]
	if !ok {
		return nil, fmt.Errorf("%w: Split pre-tokenizer behavior %s", ErrUnsupported, brief(p.Behavior))
	}
	s := &splitStep{behavior: behavior, invert: p.Invert}
	switch {
	case p.Pattern.String != nil:
		lit := *p.Pattern.String
		if lit == "" {
			return nil, fmt.Errorf("%w: Split pre-tokenizer with an empty string pattern", ErrUnsupported)
		}
		s.find = func(text string, yield func(int, int)) {
			for off := 0; ; {
				i := strings.Index(text[off:], lit)
				if i < 0 {
					return
				}
				yield(off+i, off+i+len(lit))
				off += i + len(lit)
			}
		}
	case p.Pattern.Regex != nil:
		pattern := *p.Pattern.Regex
		re, err := compileRegexp2(pattern)
		if err != nil {
			return nil, err
		}
		s.find = func(text string, yield func(int, int)) { regexMatches(re, text, yield) }
		if sc, known := scanners[pattern]; known && behavior == isolated && !p.Invert {
			s.scan = sc
		}
	default:
		return nil, fmt.Errorf("%w: Split pre-tokenizer without a pattern", ErrUnsupported)
	}
	return s, nil
}

func (s *splitStep) apply(in []string, _ bool, out []string) []string {
	for _, p := range in {
		if s.scan != nil {
			s.scan.split(p, func(piece string) { out = append(out, piece) })
			continue
		}
		out = s.cut(p, out)
	}
	return out
}

// cut splits one piece as Hugging Face does: the text is tiled by the
// delimiters and the stretches between them, then the behavior joins or
// drops parts, and empty parts are dropped.
func (s *splitStep) cut(text string, out []string) []string {
	type part struct {
		start, end int
		match      bool
	}
	var parts []part
	prev := 0
	s.find(text, func(start, end int) {
		if start > prev {
			parts = append(parts, part{prev, start, false})
		}
		parts = append(parts, part{start, end, true})
		prev = end
	})
	if prev < len(text) {
		parts = append(parts, part{prev, len(text), false})
	}
	if s.invert {
		for i := range parts {
			parts[i].match = !parts[i].match
		}
	}
	var kept []part
	switch s.behavior {
	case removed:
		for _, p := range parts {
			if !p.match {
				kept = append(kept, p)
			}
		}
	case isolated:
		kept = parts
	case mergedWithPrevious, contiguous:
		prevMatch := false
		for _, p := range parts {
			join := p.match && !prevMatch
			if s.behavior == contiguous {
				join = p.match == prevMatch
			}
			if join && len(kept) > 0 {
				kept[len(kept)-1].end = p.end
			} else {
				kept = append(kept, p)
			}
			prevMatch = p.match
		}
	case mergedWithNext:
		prevMatch := false
		for i := len(parts) - 1; i >= 0; i-- {
			p := parts[i]
			if p.match && !prevMatch && len(kept) > 0 {
				kept[len(kept)-1].start = p.start
			} else {
				kept = append(kept, p)
			}
			prevMatch = p.match
		}
		for i, j := 0, len(kept)-1; i < j; i, j = i+1, j-1 {
			kept[i], kept[j] = kept[j], kept[i]
		}
	}
	for _, p := range kept {
		if p.end > p.start {
			out = append(out, text[p.start:p.end])
		}
	}
	return out
}

// regexMatches yields the byte ranges of the matches of re in text.
func regexMatches(re *regexp2.Regexp, text string, yield func(start, end int)) {
	runes, off := 0, 0 // off is the byte offset of rune index runes
	offset := func(idx int) int {
		for ; runes < idx; runes++ {
			_, n := utf8.DecodeRuneInString(text[off:])
			off += n
		}
		return off
	}
	m, _ := re.FindStringMatch(text)
	for m != nil {
		start := offset(m.Index)
		yield(start, offset(m.Index+m.Length))
		m, _ = re.FindNextMatch(m)
	}
}

// metaspace is the Metaspace pre-tokenizer of SentencePiece-style
// tokenizers: spaces become the replacement (▁), which is prepended to the
// first piece of the text ("first") or to every piece ("always"), unless it
// starts with one already; split cuts before each replacement.
type metaspace struct {
	replacement string
	prepend     string // "always", "first" or "never"
	split       bool
}

func newMetaspace(p *hfPreTokenizer) (metaspace, error) {
	m := metaspace{replacement: p.Replacement, prepend: p.PrependScheme, split: p.Split == nil || *p.Split}
	if m.replacement == "" {
		m.replacement = "▁"
	}
	switch {
	case m.prepend == "" && p.AddPrefixSpace != nil && !*p.AddPrefixSpace:
		m.prepend = "never" // the format before prepend_scheme
	case m.prepend == "":
		m.prepend = "always"
	case m.prepend != "always" && m.prepend != "first" && m.prepend != "never":
		return m, fmt.Errorf("%w: Metaspace prepend_scheme %s", ErrUnsupported, brief(m.prepend))
	}
	return m, nil
}

func (m metaspace) apply(in []string, atStart bool, out []string) []string {
	for i, p := range in {
		p = strings.ReplaceAll(p, " ", m.replacement)
		if (m.prepend == "always" || m.prepend == "first" && atStart && i == 0) && !strings.HasPrefix(p, m.replacement) {
			p = m.replacement + p
		}
		if !m.split {
			out = append(out, p)
			continue
		}
		for p != "" {
			from := 0
			if strings.HasPrefix(p, m.replacement) {
				from = len(m.replacement)
			}
			i := strings.Index(p[from:], m.replacement)
			if i < 0 {
				out = append(out, p)
				break
			}
			out = append(out, p[:from+i])
			p = p[from+i:]
		}
	}
	return out
}

// bertPreTokenizer splits on whitespace, dropped, and isolates each
// punctuation character (ASCII punctuation and Unicode's P categories).
type bertPreTokenizer struct{}

func (bertPreTokenizer) apply(in []string, _ bool, out []string) []string {
	for _, p := range in {
		start := -1
		for i, r := range p {
			switch {
			case unicode.IsSpace(r):
				if start >= 0 {
					out = append(out, p[start:i])
					start = -1
				}
			case isBertPunct(r):
				if start >= 0 {
					out = append(out, p[start:i])
					start = -1
				}
				out = append(out, p[i:i+utf8.RuneLen(r)])
			default:
				if start < 0 {
					start = i
				}
			}
		}
		if start >= 0 {
			out = append(out, p[start:])
		}
	}
	return out
}

func isBertPunct(r rune) bool {
	return r < 0x80 && unicode.IsPunct(r) || r < 0x80 && unicode.IsSymbol(r) || unicode.In(r, unicode.P)
}

// whitespaceSplit splits on whitespace, dropped.
type whitespaceSplit struct{}

func (whitespaceSplit) apply(in []string, _ bool, out []string) []string {
	for _, p := range in {
		out = append(out, strings.Fields(p)...)
	}
	return out
}
