package plan

import (
	"fmt"
	"strings"
)

// maxRootMultiplier bounds --synthesis-prefix-root-multiplier (every line
// is sent that many times).
const maxRootMultiplier = 1000

// TraceSynthesis holds the --synthesis-* options (aiperf synthesize-trace's
// parameters, applied to a mooncake trace before it is replayed). It is
// embedded in Profile.
type TraceSynthesis struct {
	SynthesisSpeedupRatio         *float64 `json:"synthesis_speedup_ratio,omitempty" name:"synthesis-speedup-ratio" group:"Synthesis" placeholder:"X" help:"Replay the mooncake trace synthesized as aiperf synthesize-trace does: timestamps divided by X (default 1)."`
	SynthesisPrefixLenMultiplier  *float64 `json:"synthesis_prefix_len_multiplier,omitempty" name:"synthesis-prefix-len-multiplier" group:"Synthesis" placeholder:"X" help:"Scale the trace's shared prefixes' lengths (default 1)."`
	SynthesisPrefixRootMultiplier *int     `json:"synthesis_prefix_root_multiplier,omitempty" name:"synthesis-prefix-root-multiplier" group:"Synthesis" placeholder:"N" help:"Replicate the trace's prefix tree N times: every line sent N times with disjoint prefixes (default 1)."`
	SynthesisPromptLenMultiplier  *float64 `json:"synthesis_prompt_len_multiplier,omitempty" name:"synthesis-prompt-len-multiplier" group:"Synthesis" placeholder:"X" help:"Scale the trace's unique (non-shared) prompt lengths (default 1)."`
	SynthesisOutputLenMultiplier  *float64 `json:"synthesis_output_len_multiplier,omitempty" name:"synthesis-output-len-multiplier" group:"Synthesis" placeholder:"X" help:"Scale the trace's output lengths (rounded; before --synthesis-max-osl) (default 1)."`
	SynthesisMaxISL               *int     `json:"synthesis_max_isl,omitempty" name:"synthesis-max-isl" group:"Synthesis" placeholder:"TOKENS" help:"Cap the trace's input lengths at TOKENS."`
	SynthesisMaxOSL               *int     `json:"synthesis_max_osl,omitempty" name:"synthesis-max-osl" group:"Synthesis" placeholder:"TOKENS" help:"Cap the trace's output lengths at TOKENS."`
	SynthesisBlockSize            *int     `json:"synthesis_block_size,omitempty" name:"synthesis-block-size" group:"Synthesis" placeholder:"TOKENS" help:"Tokens per hash id for the synthesis (default 512)."`
}

// Synthesizes reports whether a --synthesis-* flag is given: the trace is
// then rewritten (internal/tracesynth) before it is replayed.
func (p *Profile) Synthesizes() bool {
	return len(p.synthesisFlags()) > 0
}

// synthesisFlags are the --synthesis-* flags given.
func (p *Profile) synthesisFlags() []string {
	var out []string
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"synthesis-speedup-ratio", p.SynthesisSpeedupRatio != nil},
		{"synthesis-prefix-len-multiplier", p.SynthesisPrefixLenMultiplier != nil},
		{"synthesis-prefix-root-multiplier", p.SynthesisPrefixRootMultiplier != nil},
		{"synthesis-prompt-len-multiplier", p.SynthesisPromptLenMultiplier != nil},
		{"synthesis-output-len-multiplier", p.SynthesisOutputLenMultiplier != nil},
		{"synthesis-max-isl", p.SynthesisMaxISL != nil},
		{"synthesis-max-osl", p.SynthesisMaxOSL != nil},
		{"synthesis-block-size", p.SynthesisBlockSize != nil},
	} {
		if f.set {
			out = append(out, "--"+f.name)
		}
	}
	return out
}

// synthesis checks the --synthesis-* flags: AIPerf's ranges, and a
// mooncake trace to apply them to.
func (v *validator) synthesis(p *Profile) {
	for _, f := range []struct {
		name string
		x    *float64
	}{{"synthesis_speedup_ratio", p.SynthesisSpeedupRatio}, {"synthesis_prefix_len_multiplier", p.SynthesisPrefixLenMultiplier},
		{"synthesis_prompt_len_multiplier", p.SynthesisPromptLenMultiplier},
		{"synthesis_output_len_multiplier", p.SynthesisOutputLenMultiplier}} {
		if f.x != nil && !v.nonFinite[f.name] {
			v.check(*f.x >= 0 && *f.x <= 1e6, f.name, fmt.Sprintf("must be between 0 and 1e6, got %g", *f.x))
		}
	}
	v.intRange("synthesis_prefix_root_multiplier", p.SynthesisPrefixRootMultiplier, 1, maxRootMultiplier)
	v.intRange("synthesis_max_isl", p.SynthesisMaxISL, 1, MaxTokens)
	v.intRange("synthesis_max_osl", p.SynthesisMaxOSL, 1, MaxTokens)
	v.intRange("synthesis_block_size", p.SynthesisBlockSize, 1, MaxTokens)
	flags := p.synthesisFlags()
	if len(flags) == 0 || v.nonFinite["synthesis_speedup_ratio"] || v.nonFinite["synthesis_prefix_len_multiplier"] ||
		v.nonFinite["synthesis_prompt_len_multiplier"] || v.nonFinite["synthesis_output_len_multiplier"] {
		return
	}
	field := strings.ReplaceAll(strings.TrimPrefix(flags[0], "--"), "-", "_")
	switch {
	case p.InputFile == "" || p.PublicDataset != "":
		v.add(field, "rewrites a mooncake trace before it is replayed: give --input-file with one (--custom-dataset-type mooncake_trace)")
	case p.CustomDatasetType == "weka_trace" || p.CustomDatasetType == "baseten_trace" || p.CustomDatasetType == "tracelab":
		for _, f := range flags {
			if f != "--synthesis-max-isl" && f != "--synthesis-max-osl" {
				v.add(strings.ReplaceAll(strings.TrimPrefix(f, "--"), "-", "_"), "a "+p.CustomDatasetType+
					" takes only --synthesis-max-isl and --synthesis-max-osl (its filters); the others rewrite a mooncake trace")
			}
		}
	case p.CustomDatasetType != "" && p.CustomDatasetType != "mooncake_trace":
		v.add(field, fmt.Sprintf("requires --custom-dataset-type mooncake_trace (it rewrites a trace's hash ids and lengths), got %s", p.CustomDatasetType))
	}
}
