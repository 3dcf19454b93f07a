package tokenizer

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// pipeline runs a tokenizer.json the way Hugging Face's tokenizers does,
// stage by stage: added tokens are matched first, the text between them is
// normalized, pre-tokenized into pieces and each piece encoded by the model
// (BPE by its merges list, or WordPiece). It serves the files the byte-level
// engine does not: SentencePiece-style BPE (Llama 2, Mistral, Gemma),
// several Split pre-tokenizers (DeepSeek V3) and WordPiece (BERT).
type pipeline struct {
	name  string
	kind  string // the model family, for Describe
	added addedTokens
	norm  []normalizer
	pre   []preTokenizer
	model pieceModel
	// addedText maps the ids of added tokens to their text, for Decode.
	addedText map[int]string
	// spaced tells whether Decode separates words with spaces (WordPiece).
	spaced bool
	// stripSpace is how many leading spaces Decode drops (SentencePiece
	// decoders drop the one the pre-tokenizer added).
	stripSpace int
}

// A pieceModel encodes pre-tokenized pieces.
type pieceModel interface {
	encode(piece string, ids []int) []int
	decode(ids []int, sb *strings.Builder)
}

// newPipeline adapts a parsed tokenizer.json.
func newPipeline(f *hfFile, name string) (*pipeline, error) {
	m := &f.Model
	p := &pipeline{name: name, addedText: map[int]string{}}
	var err error
	if p.norm, err = normalizers(f.Normalizer); err != nil {
		return nil, err
	}
	var byteLevel bool
	if p.pre, byteLevel, err = preTokenizers(f.PreTokenizer); err != nil {
		return nil, err
	}
	switch m.Type {
	case "BPE":
		if m.ContinuingSubwordPrefix != "" || m.EndOfWordSuffix != "" {
			return nil, fmt.Errorf("%w: BPE with a continuing_subword_prefix or end_of_word_suffix", ErrUnsupported)
		}
		if p.model, err = newMergesModel(m, byteLevel, addedIDs(f)); err != nil {
			return nil, err
		}
		p.kind = "byte-level BPE"
		if !byteLevel {
			p.kind = "SentencePiece BPE"
			if m.ByteFallback {
				p.kind += " with byte fallback"
			}
		}
	case "WordPiece":
		if byteLevel {
			return nil, fmt.Errorf("%w: WordPiece with a ByteLevel pre-tokenizer", ErrUnsupported)
		}
		if p.model, err = newWordPiece(m); err != nil {
			return nil, err
		}
		p.kind, p.spaced = "WordPiece", true
	default:
		return nil, fmt.Errorf("%w: model type %s (supported: BPE, WordPiece)", ErrUnsupported, brief(m.Type))
	}
	ids := addedIDs(f)
	p.added = newAddedTokens(ids)
	for text, id := range ids {
		p.addedText[id] = text
	}
	p.stripSpace = decoderStrip(f.Decoder)
	return p, nil
}

// decoderStrip returns how many leading spaces a decoder drops: a Strip
// step's start, or one for a Metaspace decoder that prepends.
func decoderStrip(d *hfDecoder) int {
	if d == nil {
		return 0
	}
	switch d.Type {
	case "Sequence":
		n := 0
		for i := range d.Decoders {
			n += decoderStrip(&d.Decoders[i])
		}
		return n
	case "Strip":
		if d.Content == " " {
			return d.Start
		}
	case "Metaspace":
		if d.PrependScheme != "never" && (d.AddPrefixSpace == nil || *d.AddPrefixSpace) {
			return 1
		}
	}
	return 0
}

func (p *pipeline) Name() string { return p.name }

// Describe names the tokenizer and its model family.
func (p *pipeline) Describe() string {
	return fmt.Sprintf("%s (tokenizer.json, %s)", p.name, p.kind)
}

func (p *pipeline) Encode(text string) []int {
	ids, _ := p.encodeUntil(text, nil)
	return ids
}

// encodeUntil is Encode that gives up, with done false, as soon as stop
// (nil: never) returns true; stop is called every checkBytes of text or
// so, within a long piece too when the model can stop there.
func (p *pipeline) encodeUntil(text string, stop func() bool) (ids []int, done bool) {
	if !utf8.ValidString(text) {
		text = string([]rune(text)) // each bad byte as U+FFFD, as the engine reads it
	}
	ids, done = make([]int, 0, len(text)/4+1), true
	var pieces, next []string
	since := 0
	p.added.split(text,
		func(s string, atStart bool) {
			for _, n := range p.norm {
				s = n(s)
			}
			if s == "" || !done {
				return
			}
			pieces = append(pieces[:0], s)
			for _, step := range p.pre {
				next = step.apply(pieces, atStart, next[:0])
				pieces, next = next, pieces
			}
			for _, piece := range pieces {
				if since += len(piece); stop != nil && since >= checkBytes {
					if since = 0; stop() {
						done = false
						return
					}
				}
				if ids, done = p.encodePiece(piece, ids, stop); !done {
					return
				}
			}
		},
		func(id int) { ids = append(ids, id) })
	return ids, done
}

// encodePiece appends the ids of one pre-tokenized piece, stopping as
// encodeUntil does when the model can.
func (p *pipeline) encodePiece(piece string, ids []int, stop func() bool) ([]int, bool) {
	if piece == "" {
		return ids, true
	}
	m, ok := p.model.(interface {
		encodeUntil(string, []int, func() bool) ([]int, bool)
	})
	if ok && stop != nil {
		return m.encodeUntil(piece, ids, stop)
	}
	return p.model.encode(piece, ids), true
}

func (p *pipeline) Count(text string) int { return len(p.Encode(text)) }

func (p *pipeline) Decode(ids []int) string {
	var sb strings.Builder
	start := 0
	for i, id := range ids {
		if text, ok := p.addedText[id]; ok {
			p.model.decode(ids[start:i], &sb)
			if p.spaced && sb.Len() > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(text)
			start = i + 1
		}
	}
	p.model.decode(ids[start:], &sb)
	s := sb.String()
	for range p.stripSpace {
		s = strings.TrimPrefix(s, " ")
	}
	return s
}
