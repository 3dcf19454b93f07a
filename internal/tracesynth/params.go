package tracesynth

import (
	"errors"
	"fmt"
	"math"
)

// DefaultBlockSize is AIPerf's tokens per hash id.
const DefaultBlockSize = 512

// maxRootMultiplier bounds --prefix-root-multiplier (each row is written
// that many times).
const maxRootMultiplier = 1000

// Params are AIPerf's SynthesisParams (and profile's --synthesis-max-osl).
type Params struct {
	SpeedupRatio         float64 // timestamps divided by it (1, or 0 as in AIPerf: unchanged)
	PrefixLenMultiplier  float64 // context blocks scaled by it
	PrefixRootMultiplier int     // copies of the prefix tree
	PromptLenMultiplier  float64 // unique prompt tokens scaled by it
	OutputLenMultiplier  float64 // output lengths scaled by it (rounded half to even, as Python's round)
	MaxISL               int     // input length cap (0: none)
	MaxOSL               int     // output length cap (0: none)
	BlockSize            int     // tokens per hash id
	// Command is synthesize-trace's: its flags are named as its own
	// (--speedup-ratio; otherwise as profile's, --synthesis-speedup-ratio),
	// and the trace is checked as profile checks a file given no other flag
	// (dataset.ScanOptions.AsProfile: profile checks its synthetic trace
	// itself, knowing its other flags).
	Command bool
}

// prefix is what the flags' names start with in the command p is given
// to (Validate's prefix).
func (p Params) prefix() string {
	if p.Command {
		return ""
	}
	return "synthesis-"
}

// flag is the flag of parameter name (speedup-ratio) in the command p is
// given to.
func (p Params) flag(name string) string { return "--" + p.prefix() + name }

// Defaults are the parameters that change nothing.
func Defaults() Params {
	return Params{SpeedupRatio: 1, PrefixLenMultiplier: 1, PrefixRootMultiplier: 1, PromptLenMultiplier: 1,
		OutputLenMultiplier: 1, BlockSize: DefaultBlockSize}
}

// Active reports whether p changes a trace (AIPerf's should_synthesize,
// with the caps).
func (p Params) Active() bool {
	d := Defaults()
	return p.SpeedupRatio != d.SpeedupRatio || p.PrefixLenMultiplier != d.PrefixLenMultiplier ||
		p.PrefixRootMultiplier != d.PrefixRootMultiplier || p.PromptLenMultiplier != d.PromptLenMultiplier ||
		p.OutputLenMultiplier != d.OutputLenMultiplier || p.MaxISL != 0 || p.MaxOSL != 0
}

// Validate checks p's ranges; prefix names the flags ("" or "synthesis-").
func (p Params) Validate(prefix string) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	for _, f := range []struct {
		name string
		v    float64
	}{{"speedup-ratio", p.SpeedupRatio}, {"prefix-len-multiplier", p.PrefixLenMultiplier}, {"prompt-len-multiplier", p.PromptLenMultiplier},
		{"output-len-multiplier", p.OutputLenMultiplier}} {
		if !(f.v >= 0) || math.IsInf(f.v, 0) {
			bad("--%s%s must be a number ≥ 0, got %g", prefix, f.name, f.v)
		}
	}
	if p.PrefixRootMultiplier < 1 || p.PrefixRootMultiplier > maxRootMultiplier {
		bad("--%sprefix-root-multiplier must be between 1 and %d, got %d", prefix, maxRootMultiplier, p.PrefixRootMultiplier)
	}
	if p.MaxISL < 0 {
		bad("--%smax-isl must be at least 1 token, got %d", prefix, p.MaxISL)
	}
	if p.MaxOSL < 0 {
		bad("--%smax-osl must be at least 1 token, got %d", prefix, p.MaxOSL)
	}
	if p.BlockSize < 1 {
		bad("--%sblock-size must be at least 1 token, got %d", prefix, p.BlockSize)
	}
	return errors.Join(errs...)
}
