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
	// tokens), decoded.
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
	corpusCache = map[string]promptCorpus{} // corpus and tokenizer name → tokens
)

// corpusFor returns corpus name ("" for the default) as tokens of tok,
// building it once per tokenizer.
func corpusFor(tok tokenizer.Tokenizer, name string) (promptCorpus, error) {
	switch name {
	case "", CorpusSonnet:
		name = CorpusSonnet
	case CorpusRandom, CorpusCoding:
	default:
		return promptCorpus{}, fmt.Errorf("prompt corpus %q is not available here: use %s (prose, the default), %s (code and tool calls) or %s (vLLM's random token prompts)", name, CorpusSonnet, CorpusCoding, CorpusRandom)
	}
	corpusMu.Lock()
	defer corpusMu.Unlock()
	key := name + "\x00" + tok.Name()
	if c, ok := corpusCache[key]; ok {
		return c, nil
	}
	c := promptCorpus{name: name}
	if name == CorpusRandom {
		ids, err := tokenizer.Ordinary(tok)
		if err != nil {
			return promptCorpus{}, fmt.Errorf("prompt corpus random: %w", err)
		}
		c.ids, c.vocab = ids, true
	} else if name == CorpusCoding {
		c.ids = tok.Encode(codingText())
	} else {
		c.ids = tok.Encode(corpus)
	}
	corpusCache[key] = c
	return c, nil
}
