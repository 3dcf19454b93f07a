package plan

// --prompt-corpus values (AIPerf's PromptCorpus).
const (
	PromptCorpusSonnet = "sonnet"
	PromptCorpusCoding = "coding"
	PromptCorpusRandom = "random"
)

// promptCorpus checks --prompt-corpus: the random corpus shapes synthetic
// prompts only.
func (v *validator) promptCorpus(p *Profile) {
	v.rangeRatio(p) // --random-range-ratio, --random-corpus-style (rangeratio.go)
	v.oneOf("prompt_corpus", p.PromptCorpus, "", PromptCorpusSonnet, PromptCorpusCoding, PromptCorpusRandom)
	v.check(p.PromptCorpus != PromptCorpusRandom || p.InputFile == "", "prompt_corpus",
		"random shapes synthetic prompts only: a file's prompts are its own, and a trace's hash-id blocks are built from "+
			"one-token words so that no block merges with the next; remove --prompt-corpus or --input-file")
}
