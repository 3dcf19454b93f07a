package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// --random-corpus-style values (AIPerf's RandomCorpusStyle); "" is vllm.
const (
	CorpusStyleVLLM   = "vllm"
	CorpusStyleSGLang = "sglang"
)

// ParseRangeRatio reads --random-range-ratio under --random-corpus-style
// style ("" is vllm), AIPerf's way: a float for both the ISL and the OSL
// window or, under vllm only, a JSON object {"input": R, "output": R}. Under
// vllm each ratio must be in [0, 1), under sglang in [0, 1].
func ParseRangeRatio(text, style string) (input, output float64, err error) {
	s := strings.TrimSpace(text)
	if s == "" {
		return 0, 0, errors.New("value cannot be empty: give a ratio such as 0.3, or omit the option")
	}
	sglang := style == CorpusStyleSGLang
	if strings.HasPrefix(s, "{") {
		if sglang {
			return 0, 0, errors.New("is a JSON object, but the sglang corpus style applies a single ratio to both ISL and " +
				"OSL: give a plain float (e.g. 0.3), or use --random-corpus-style vllm for independent values")
		}
		if input, output, err = ratioObject(s); err != nil {
			return 0, 0, err
		}
	} else {
		x, err := strconv.ParseFloat(s, 64)
		if strings.ContainsAny(s, "xX") { // Go's hexadecimal float, which AIPerf's float() refuses
			err = strconv.ErrSyntax
		}
		if err != nil {
			if sglang {
				return 0, 0, fmt.Errorf("must be a plain float for the sglang corpus style, got %q", text)
			}
			return 0, 0, fmt.Errorf(`must be a float or a JSON object with "input" and "output" keys, got %q`, text)
		}
		input, output = x, x
	}
	for _, c := range []struct {
		what string
		x    float64
	}{{"ISL", input}, {"OSL", output}} {
		switch {
		case sglang && !(c.x >= 0 && c.x <= 1):
			return 0, 0, fmt.Errorf("must be in [0, 1] under the sglang corpus style, got %g", c.x)
		case !sglang && !(c.x >= 0 && c.x < 1):
			return 0, 0, fmt.Errorf("%s ratio must be in [0, 1) under the vllm corpus style (its window "+
				"[floor(mean*(1-r)), ceil(mean*(1+r))] reaches 0 tokens at 1), got %g; "+
				"--random-corpus-style sglang takes 1 (a length fixed at the mean)", c.what, c.x)
		}
	}
	return input, output, nil
}

// ratioObject reads the JSON object form {"input": R, "output": R}.
func ratioObject(s string) (input, output float64, err error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return 0, 0, fmt.Errorf(`must be a float or a JSON object with "input" and "output" keys, got %q: %w`, s, err)
	}
	var missing, unexpected []string
	for _, k := range []string{"input", "output"} {
		if _, ok := m[k]; !ok {
			missing = append(missing, k)
		}
	}
	for k := range m {
		if k != "input" && k != "output" {
			unexpected = append(unexpected, strconv.Quote(k))
		}
	}
	slices.Sort(unexpected)
	switch {
	case len(missing) > 0:
		return 0, 0, fmt.Errorf(`JSON object missing keys: [%s]: give {"input": R, "output": R}`, strings.Join(missing, ", "))
	case len(unexpected) > 0:
		return 0, 0, fmt.Errorf(`JSON object has unexpected keys: [%s]: only "input" and "output" are allowed`,
			strings.Join(unexpected, ", "))
	}
	num := func(k string) (float64, error) {
		var x float64
		if err := json.Unmarshal(m[k], &x); err != nil || bytes.Equal(bytes.TrimSpace(m[k]), []byte("null")) {
			return 0, fmt.Errorf("JSON object's %q must be a number, got %s", k, m[k])
		}
		return x, nil
	}
	if input, err = num("input"); err != nil {
		return 0, 0, err
	}
	if output, err = num("output"); err != nil {
		return 0, 0, err
	}
	return input, output, nil
}

// rangeRatio checks --random-range-ratio and --random-corpus-style: the
// ratio draws synthetic ISLs and OSLs from windows around --isl and --osl,
// so it needs --osl (--isl always has a value here: the plan cannot tell
// the default 550 from a given one) and takes the place of their standard
// deviations and of --seq-dist.
func (v *validator) rangeRatio(p *Profile) {
	v.oneOf("random_corpus_style", p.RandomCorpusStyle, "", CorpusStyleVLLM, CorpusStyleSGLang)
	if p.RandomRangeRatio == "" {
		return
	}
	const field = "random_range_ratio"
	in, _, err := ParseRangeRatio(p.RandomRangeRatio, p.RandomCorpusStyle)
	if err != nil {
		v.add(field, err.Error())
	}
	v.check(p.InputFile == "", field, "draws the ISL and OSL of synthetic prompts only (AIPerf ignores it for "+
		"file and public datasets): remove it or --input-file")
	v.check(!p.Spec().Rankings, field, "does not apply to a rankings endpoint: use the --rankings-* lengths")
	v.check(p.SequenceDistribution == "", field, "cannot be combined with --seq-dist: use one or the other")
	v.check(p.SyntheticInputTokensStddev == 0, field,
		"cannot be combined with --isl-stddev: the ratio's window already sets the ISL's spread; remove one")
	v.check(p.OutputTokensStddev == 0, field,
		"cannot be combined with --osl-stddev: the ratio's window already sets the OSL's spread; remove one")
	v.check(p.OutputTokensMean != nil, field,
		"needs --osl (--output-tokens-mean): the OSL window is drawn around it, and there is no default mean")
	isl := p.SyntheticInputTokensMean
	if err != nil || p.RandomCorpusStyle == CorpusStyleSGLang || isl < 1 {
		return
	}
	// vLLM's rule: the prefix and the shortest body the window allows must
	// make at least one token.
	if least := p.PromptPrefixLength + int(math.Floor(float64(isl)*(1-in))); least < 1 {
		v.add(field, fmt.Sprintf("gives a minimum input of %d tokens (--prompt-prefix-length %d + "+
			"floor(--isl %d × (1 − %g))): raise --isl or --prompt-prefix-length, or lower --random-range-ratio",
			least, p.PromptPrefixLength, isl, in))
	}
}
