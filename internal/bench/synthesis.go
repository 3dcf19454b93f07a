package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/aiperf-go/aiperf/internal/dataset"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/tracesynth"
)

// synthesisParams are the profile's --synthesis-* flags as synthesize-trace
// parameters.
func synthesisParams(p plan.Profile) tracesynth.Params {
	s := tracesynth.Defaults()
	deref := func(v *float64, into *float64) {
		if v != nil {
			*into = *v
		}
	}
	deref(p.SynthesisSpeedupRatio, &s.SpeedupRatio)
	deref(p.SynthesisPrefixLenMultiplier, &s.PrefixLenMultiplier)
	deref(p.SynthesisPromptLenMultiplier, &s.PromptLenMultiplier)
	deref(p.SynthesisOutputLenMultiplier, &s.OutputLenMultiplier)
	s.PrefixRootMultiplier = derefOr(p.SynthesisPrefixRootMultiplier, s.PrefixRootMultiplier)
	s.MaxISL, s.MaxOSL = derefInt(p.SynthesisMaxISL), derefInt(p.SynthesisMaxOSL)
	s.BlockSize = derefOr(p.SynthesisBlockSize, s.BlockSize)
	return s
}

func derefOr[T any](v *T, def T) T {
	if v == nil {
		return def
	}
	return *v
}

// synthesize rewrites the profile's mooncake trace with its --synthesis-*
// flags into a temporary file of the same name, which o then reads; the
// cell removes it when it ends (discard).
func (c *cell) synthesize(ctx context.Context, o *dataset.Options) error {
	det, err := dataset.Detect(c.p.InputFile, c.p.CustomDatasetType)
	if err != nil {
		return err
	}
	if det.Type == dataset.TypeWekaTrace || det.Type == dataset.TypeBasetenTrace || det.Type == dataset.TypeTraceLab {
		return traceFilters(c.p, det.Type, o)
	}
	if det.Type != dataset.TypeMooncakeTrace {
		return fmt.Errorf("--synthesis-* options rewrite a mooncake trace: %s is a %s file", c.p.InputFile, det.Type)
	}
	if c.tmp, err = os.MkdirTemp("", "aiperf-synthesis-"); err != nil {
		return fmt.Errorf("synthesize the trace: %w", err)
	}
	params := synthesisParams(c.p)
	if b := c.p.PromptInputTokensBlockSize; b > 0 && c.p.SynthesisBlockSize == nil {
		params.BlockSize = b // as AIPerf: the trace is rewritten at the block size it is read with
	} else if b > 0 && b != params.BlockSize {
		return fmt.Errorf("--synthesis-block-size %d and --prompt-input-tokens-block-size %d differ: the rewritten trace "+
			"is replayed at the block size it was rewritten with: give one of them", params.BlockSize, b)
	}
	out := filepath.Join(c.tmp, filepath.Base(c.p.InputFile))
	st, err := tracesynth.WriteFile(ctx, c.p.InputFile, out, params)
	if err != nil {
		return fmt.Errorf("synthesize the trace: %w", err)
	}
	fmt.Fprintf(c.log, "%s: synthesized as aiperf synthesize-trace does (%d lines from %d)\n", c.p.InputFile, st.Written, st.Rows)
	o.InputFile, o.BlockSize = out, params.BlockSize
	c.synthesized = func(err error) error { return atInputLines(err, out, c.p.InputFile, st, params.PrefixRootMultiplier) }
	return nil
}

// atInputLines places the problems err finds in the rewritten trace out at
// the lines of the input file in they were rewritten from.
func atInputLines(err error, out, in string, st tracesynth.Stats, roots int) error {
	if err == nil || !strings.Contains(err.Error(), out) {
		return err
	}
	at := regexp.MustCompile(regexp.QuoteMeta(out) + `(?::(\d+))?`)
	text := at.ReplaceAllStringFunc(err.Error(), func(m string) string {
		n, _ := strconv.Atoi(strings.TrimPrefix(m[len(out):], ":"))
		if line := st.InputLine(n, roots); line > 0 {
			return fmt.Sprintf("%s:%d", in, line)
		}
		return in
	})
	return tracesynth.Reworded(err, text+" (in the trace as the --synthesis-* flags rewrote it)")
}

// traceFilters applies --synthesis-max-isl and --synthesis-max-osl to a
// weka_trace, tracelab or baseten_trace as AIPerf's loaders do (filters, not a
// rewrite); the other --synthesis-* flags are refused, as AIPerf refuses
// them for a Baseten trace.
func traceFilters(p plan.Profile, kind string, o *dataset.Options) error {
	if p.SynthesisSpeedupRatio != nil || p.SynthesisPrefixLenMultiplier != nil || p.SynthesisPrefixRootMultiplier != nil ||
		p.SynthesisPromptLenMultiplier != nil || p.SynthesisBlockSize != nil {
		return fmt.Errorf("%s is a %s: it takes only --synthesis-max-isl and --synthesis-max-osl (its filters); "+
			"the other --synthesis-* flags rewrite a mooncake trace", p.InputFile, kind)
	}
	o.MaxISL, o.MaxOSL = derefInt(p.SynthesisMaxISL), derefInt(p.SynthesisMaxOSL)
	return nil
}

// discard removes the cell's temporary files.
func (c *cell) discard() {
	if c.tmp != "" {
		os.RemoveAll(c.tmp)
	}
}
