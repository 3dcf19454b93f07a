package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseRangeRatio(t *testing.T) {
	for _, c := range []struct {
		text, style string
		in, out     float64
	}{
		{"0.3", "", 0.3, 0.3},
		{" 0 ", CorpusStyleVLLM, 0, 0},
		{`{"input": 0.3, "output": 0.5}`, "", 0.3, 0.5},
		{`{"output": 0, "input": 0.99}`, CorpusStyleVLLM, 0.99, 0},
		{"1", CorpusStyleSGLang, 1, 1},
		{"0", CorpusStyleSGLang, 0, 0},
	} {
		in, out, err := ParseRangeRatio(c.text, c.style)
		require.NoError(t, err, c.text)
		assert.Equal(t, []float64{c.in, c.out}, []float64{in, out}, c.text)
	}
}

// TestCheckRangeRatio: every refusal names --random-range-ratio and what to
// do; a valid ratio passes with --osl given.
func TestCheckRangeRatio(t *testing.T) {
	osl := func(p *Profile) { p.OutputTokensMean = Ptr(20) }
	for name, c := range map[string]struct {
		ratio, style string
		set          func(p *Profile)
		want         string // "": valid
	}{
		"vllm float":  {"0.5", "", osl, ""},
		"vllm object": {`{"input": 0.3, "output": 0.5}`, CorpusStyleVLLM, osl, ""},
		"sglang one":  {"1", CorpusStyleSGLang, osl, ""},
		"prefix rescues": {"0.9", "", func(p *Profile) {
			osl(p)
			p.SyntheticInputTokensMean = 1
			p.PromptPrefixLength, p.PromptPrefixPoolSize = 4, 1
		}, ""},
		"sglang tiny isl":   {"0.9", CorpusStyleSGLang, func(p *Profile) { osl(p); p.SyntheticInputTokensMean = 1 }, ""},
		"blank":             {" ", "", osl, "--random-range-ratio value cannot be empty: give a ratio such as 0.3, or omit the option"},
		"not a number":      {"wide", "", osl, `--random-range-ratio must be a float or a JSON object with "input" and "output" keys, got "wide"`},
		"hex float":         {"0x1p-2", "", osl, `--random-range-ratio must be a float or a JSON object with "input" and "output" keys, got "0x1p-2"`},
		"bad json":          {"{input: 0.3}", "", osl, `--random-range-ratio must be a float or a JSON object with "input" and "output" keys, got "{input: 0.3}"`},
		"missing key":       {`{"input": 0.3}`, "", osl, `--random-range-ratio JSON object missing keys: [output]: give {"input": R, "output": R}`},
		"unexpected key":    {`{"input": 0.3, "output": 0.1, "x": 1}`, "", osl, `--random-range-ratio JSON object has unexpected keys: ["x"]`},
		"not a number key":  {`{"input": "0.3", "output": 0.1}`, "", osl, `--random-range-ratio JSON object's "input" must be a number, got "0.3"`},
		"null key":          {`{"input": null, "output": 0.1}`, "", osl, `--random-range-ratio JSON object's "input" must be a number, got null`},
		"vllm one":          {"1.0", "", osl, "--random-range-ratio ISL ratio must be in [0, 1) under the vllm corpus style"},
		"vllm osl negative": {`{"input": 0.3, "output": -0.1}`, "", osl, "--random-range-ratio OSL ratio must be in [0, 1) under the vllm corpus style"},
		"nan":               {"NaN", "", osl, "--random-range-ratio ISL ratio must be in [0, 1)"},
		"sglang object": {`{"input": 0.3, "output": 0.3}`, CorpusStyleSGLang, osl,
			"--random-range-ratio is a JSON object, but the sglang corpus style applies a single ratio to both ISL and OSL: give a plain float (e.g. 0.3)"},
		"sglang text":  {"x", CorpusStyleSGLang, osl, `--random-range-ratio must be a plain float for the sglang corpus style, got "x"`},
		"sglang above": {"1.5", CorpusStyleSGLang, osl, "--random-range-ratio must be in [0, 1] under the sglang corpus style, got 1.5"},
		"no osl":       {"0.3", "", nil, "--random-range-ratio needs --osl (--output-tokens-mean): the OSL window is drawn around it"},
		"isl stddev":   {"0.3", "", func(p *Profile) { osl(p); p.SyntheticInputTokensStddev = 5 }, "--random-range-ratio cannot be combined with --isl-stddev"},
		"osl stddev":   {"0.3", "", func(p *Profile) { osl(p); p.OutputTokensStddev = 5 }, "--random-range-ratio cannot be combined with --osl-stddev"},
		"seq dist":     {"0.3", "", func(p *Profile) { osl(p); p.SequenceDistribution = "64,32:1" }, "--random-range-ratio cannot be combined with --seq-dist: use one or the other"},
		"input file": {"0.3", "", func(p *Profile) { osl(p); p.InputFile = "data.jsonl" },
			"--random-range-ratio draws the ISL and OSL of synthetic prompts only (AIPerf ignores it for file and public datasets): remove it or --input-file"},
		"rankings": {"0.3", "", func(p *Profile) { osl(p); p.EndpointType = EndpointCohereRankings }, "--random-range-ratio does not apply to a rankings endpoint"},
		"degenerate": {"0.9", "", func(p *Profile) { osl(p); p.SyntheticInputTokensMean = 2 },
			"--random-range-ratio gives a minimum input of 0 tokens (--prompt-prefix-length 0 + floor(--isl 2 × (1 − 0.9))): " +
				"raise --isl or --prompt-prefix-length, or lower --random-range-ratio"},
		"bad style": {"", "tensorrt", nil, `--random-corpus-style must be one of vllm, sglang, got "tensorrt"`},
	} {
		t.Run(name, func(t *testing.T) {
			p := valid()
			p.RandomRangeRatio, p.RandomCorpusStyle = c.ratio, c.style
			if c.set != nil {
				c.set(&p)
			}
			err := p.Check()
			if c.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			for _, fe := range FieldErrors(err) {
				assert.Contains(t, []string{"random_range_ratio", "random_corpus_style"}, fe.Field, "named: %v", fe)
			}
		})
	}
}
