package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// rangeRatioYAML is a config file whose prompts set random_range_ratio
// (line 9) to ratio and random_corpus_style (line 10) to style.
func rangeRatioYAML(ratio, style string) (*File, error) {
	return parse("models: [m]", "endpoint: {urls: [http://localhost:8000]}", "datasets:", "  - name: main",
		"    type: synthetic", "    prompts:", "      isl: 512", "      osl: 128",
		"      random_range_ratio: "+ratio, "      random_corpus_style: "+style)
}

// prompts.random_range_ratio, a number or AIPerf's {input, output}
// object, reaches the plan as --random-range-ratio's text, with
// random_corpus_style; Check accepts it.
func TestRandomRangeRatio(t *testing.T) {
	for ratio, c := range map[string]struct {
		style, want string
		in, out     float64
	}{
		"0.3":                       {"vllm", "0.3", 0.3, 0.3},
		"{input: 0.3, output: 0.5}": {"vllm", `{"input":0.3,"output":0.5}`, 0.3, 0.5},
		"1":                         {"sglang", "1", 1, 1},
	} {
		f, err := rangeRatioYAML(ratio, c.style)
		require.NoError(t, err, ratio)
		assert.Equal(t, c.want, f.Profile.RandomRangeRatio, ratio)
		assert.Equal(t, c.style, f.Profile.RandomCorpusStyle, ratio)
		assert.Equal(t, 128, *f.Profile.OutputTokensMean)
		require.NoError(t, f.Profile.Check(), ratio)
		in, out, err := plan.ParseRangeRatio(f.Profile.RandomRangeRatio, f.Profile.RandomCorpusStyle)
		require.NoError(t, err)
		assert.Equal(t, []float64{c.in, c.out}, []float64{in, out}, ratio)
	}
}

// A bad ratio is refused, named by its line in the file: at load when it
// is no number, by Check when it is out of range or the wrong form.
func TestRandomRangeRatioRefused(t *testing.T) {
	_, err := rangeRatioYAML("{input: wide, output: 0.5}", "vllm")
	assert.ErrorContains(t, err, "bench.yaml:9: datasets[0].prompts.random_range_ratio.input: expected")
	_, err = rangeRatioYAML("0.3", "trtllm")
	assert.ErrorContains(t, err, "bench.yaml:10: datasets[0].prompts.random_corpus_style")

	for ratio, c := range map[string]struct{ style, want string }{
		"1.0":                       {"vllm", "ISL ratio must be in [0, 1) under the vllm corpus style"},
		"{input: 0.3}":              {"vllm", "JSON object missing keys: [output]"},
		"{input: 0.3, output: 0.5}": {"sglang", "is a JSON object, but the sglang corpus style applies a single ratio"},
		"1.5":                       {"sglang", "must be in [0, 1] under the sglang corpus style, got 1.5"},
	} {
		f, err := rangeRatioYAML(ratio, c.style)
		require.NoError(t, err, ratio)
		fes := plan.FieldErrors(f.Profile.Check())
		require.Len(t, fes, 1, ratio)
		assert.Equal(t, "random_range_ratio", fes[0].Field)
		assert.Contains(t, fes[0].Msg, c.want, ratio)
		assert.Equal(t, "bench.yaml:9: datasets[0].prompts.random_range_ratio", f.Where(-1, fes[0].Field), ratio)
	}
}
