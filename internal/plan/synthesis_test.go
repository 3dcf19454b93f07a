package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSynthesisFlags(t *testing.T) {
	t.Parallel()
	trace := func() Profile {
		p := withPhases()
		p.InputFile = "trace.jsonl"
		return p
	}
	p := trace()
	p.SynthesisSpeedupRatio, p.SynthesisPrefixRootMultiplier = Ptr(2.0), Ptr(3)
	assert.NoError(t, p.Check())
	assert.True(t, p.Synthesizes())

	for _, c := range []struct {
		set   func(*Profile)
		field string
		msg   string
	}{
		{func(p *Profile) { p.SynthesisPromptLenMultiplier = Ptr(-1.0) }, "synthesis_prompt_len_multiplier", "--synthesis-prompt-len-multiplier must be between 0 and 1e6, got -1"},
		{func(p *Profile) { p.SynthesisPrefixRootMultiplier = Ptr(0) }, "synthesis_prefix_root_multiplier", "--synthesis-prefix-root-multiplier must be at least 1, got 0"},
		{func(p *Profile) { p.SynthesisMaxISL = Ptr(0) }, "synthesis_max_isl", "--synthesis-max-isl must be at least 1, got 0"},
		{func(p *Profile) { p.SynthesisMaxOSL, p.InputFile = Ptr(5), "" }, "synthesis_max_osl", "--synthesis-max-osl rewrites a mooncake trace before it is replayed: give --input-file"},
		{func(p *Profile) { p.SynthesisBlockSize, p.CustomDatasetType = Ptr(64), "single_turn" }, "synthesis_block_size", "--synthesis-block-size requires --custom-dataset-type mooncake_trace"},
	} {
		p := trace()
		c.set(&p)
		assert.Contains(t, onlyError(t, p.Check(), c.field), c.msg)
	}
}

// A tracelab corpus is replayed as weka traces: it takes the weka
// filters and controls, but not the weka-only timestamp basis (its
// subagents' times are written by the conversion) nor the mooncake
// rewrites.
func TestTraceLabTakesTheWekaControls(t *testing.T) {
	t.Parallel()
	tracelab := func() Profile {
		p := withPhases()
		p.InputFile, p.CustomDatasetType = "corpus.jsonl.gz", "tracelab"
		return p
	}
	p := tracelab()
	p.SynthesisMaxISL, p.SynthesisMaxOSL = Ptr(5000), Ptr(100)
	p.TraceReplay.UseThinkTimeOnly, p.TraceReplay.MaxContextLength = true, Ptr(100000)
	assert.NoError(t, p.Check())

	for _, c := range []struct {
		set   func(*Profile)
		field string
		msg   string
	}{
		{func(p *Profile) { p.WekaNestedTimestampBasis = "relative" }, "weka_nested_timestamp_basis", "applies to weka_trace"},
		{func(p *Profile) { p.SynthesisSpeedupRatio = Ptr(2.0) }, "synthesis_speedup_ratio", "a tracelab takes only --synthesis-max-isl and --synthesis-max-osl"},
	} {
		p := tracelab()
		c.set(&p)
		assert.Contains(t, onlyError(t, p.Check(), c.field), c.msg)
	}
}
