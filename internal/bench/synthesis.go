package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

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
	out := filepath.Join(c.tmp, filepath.Base(c.p.InputFile))
	st, err := tracesynth.WriteFile(ctx, c.p.InputFile, out, synthesisParams(c.p))
	if err != nil {
		return fmt.Errorf("synthesize the trace: %w", err)
	}
	fmt.Fprintf(c.log, "%s: synthesized as aiperf synthesize-trace does (%d lines from %d)\n", c.p.InputFile, st.Written, st.Rows)
	o.InputFile = out
	return nil
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
