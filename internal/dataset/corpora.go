package dataset

import (
	"fmt"
	"sync"

	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// The prompt corpora of --prompt-corpus (AIPerf's names).
const (
	// CorpusSonnet is AIPerf's default prose corpus (Shakespeare's sonnets
	// there); here the built-in prose, Newton's Opticks (corpus/README.md).
	CorpusSonnet = "sonnet"
	// CorpusCoding is AIPerf's procedural coding and tool-use content:
	// here generated from a fixed seed (codingText).
	CorpusCoding = "coding"
	// CorpusRandom is `vllm bench serve`'s random prompts: windows of
	// consecutive ids of the tokenizer's vocabulary (less its special
	// tokens; all of it under CorpusStyleSGLang), decoded.
	CorpusRandom = "random"
)

// Corpora lists the accepted --prompt-corpus values.
var Corpora = []string{CorpusSonnet, CorpusCoding, CorpusRandom}

// promptCorpus is the token sequence synthetic prompts are windows of.
type promptCorpus struct {
	name string
	ids  []int
	// vocab marks windows of consecutive vocabulary ids, whose text may
	// cut a UTF-8 character: those bytes become U+FFFD, as a Hugging Face
	// decode (vLLM's) makes them.
	vocab bool
}

var (
	corpusMu    sync.Mutex
	corpusCache = map[string]promptCorpus{} // corpus, style and tokenizer name → tokens
)

// corpusFor returns corpus name ("" for the default) as tokens of tok under
// the vllm corpus style, building it once per tokenizer.
func corpusFor(tok tokenizer.Tokenizer, name string) (promptCorpus, error) {
	return styledCorpus(tok, name, CorpusStyleVLLM)
}

// corpus returns the corpus of o's prompts: Corpus under CorpusStyle.
func (o Options) corpus(tok tokenizer.Tokenizer) (promptCorpus, error) {
	return styledCorpus(tok, o.Corpus, o.CorpusStyle)
}

// styledCorpus returns corpus name ("" for the default) as tokens of tok,
// building it once per tokenizer and, for CorpusRandom, per style: vllm's
// pool is the vocabulary less its special and added tokens, sglang's the
// whole of it.
func styledCorpus(tok tokenizer.Tokenizer, name, style string) (promptCorpus, error) {
	switch name {
	case "", CorpusSonnet:
		name = CorpusSonnet
	case CorpusRandom, CorpusCoding:
	default:
		return promptCorpus{}, fmt.Errorf("prompt corpus %q is not available here: use %s (prose, the default), %s (code and tool calls) or %s (vLLM's random token prompts)", name, CorpusSonnet, CorpusCoding, CorpusRandom)
	}
	if name != CorpusRandom || style != CorpusStyleSGLang {
		style = CorpusStyleVLLM // the style picks the random corpus's pool only
	}
	corpusMu.Lock()
	defer corpusMu.Unlock()
	key := name + "\x00" + style + "\x00" + tok.Name()
	if c, ok := corpusCache[key]; ok {
		return c, nil
	}
	c := promptCorpus{name: name}
	switch {
	case name == CorpusRandom:
		pool := tokenizer.Ordinary
		if style == CorpusStyleSGLang {
			pool = tokenizer.Vocabulary
		}
		ids, err := pool(tok)
		if err != nil {
			return promptCorpus{}, fmt.Errorf("prompt corpus random: %w", err)
		}
		c.ids, c.vocab = ids, true
	case name == CorpusCoding:
		c.ids = tok.Encode(codingText())
	default:
		c.ids = tok.Encode(corpus)
	}
	corpusCache[key] = c
	return c, nil
}
