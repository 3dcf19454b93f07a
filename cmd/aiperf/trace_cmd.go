package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"

	"github.com/aiperf-go/aiperf/internal/cachesim"
	"github.com/aiperf-go/aiperf/internal/outputfile"
	"github.com/aiperf-go/aiperf/internal/traceanalysis"
	"github.com/aiperf-go/aiperf/internal/tracesynth"
)

// AnalyzeTraceCmd is `aiperf analyze-trace`: AIPerf's prefix statistics of
// a mooncake trace, and the hit ratio it would get on a KV cache of a given
// size.
type AnalyzeTraceCmd struct {
	traceInput
	BlockSize      int     `name:"block-size" default:"512" placeholder:"TOKENS" help:"Tokens per hash id of the trace (default ${default})."`
	OutputFile     string  `name:"output-file" placeholder:"FILE" help:"Also write the report as JSON (AIPerf's analysis file) to FILE."`
	KVCacheTokens  *int    `name:"kv-cache-tokens" placeholder:"TOKENS" help:"Replay the trace on its schedule through an LRU prefix cache of this many tokens, at least one --cache-block-size block (the mock server's cache model), and report its hit ratio and evictions (default: no simulation)."`
	CacheBlockSize int     `name:"cache-block-size" placeholder:"TOKENS" help:"The simulated cache's block (page) size in tokens (default: --block-size), as the server's --block-size."`
	TTFTms         float64 `name:"ttft-ms" placeholder:"MS" help:"Simulated time to first token, 0 to 86400000 (a day): a request's prompt and reply blocks are cached again when it completes, TTFT + (output_length-1) × ITL after it arrives (default 0: at once, like aiperf-mock-server --fast)."`
	ITLms          float64 `name:"itl-ms" placeholder:"MS" help:"Simulated inter-token latency, 0 to 86400000 (default 0)."`
}

// traceInput is the trace file, given as an argument or, as AIPerf also
// accepts, with --input-file.
type traceInput struct {
	Input     string `arg:"" optional:"" name:"input" placeholder:"FILE" help:"The mooncake trace (JSONL)."`
	InputFile string `name:"input-file" placeholder:"FILE" help:"The mooncake trace, instead of the argument."`
}

// path is the trace file.
func (t traceInput) path() (string, error) {
	return argOrFlag(t.Input, t.InputFile, "input-file", "give the trace file as the first argument (or --input-file FILE)")
}

// argOrFlag is a file given as an argument or with --flag (not two
// different ones); missing says what to do when neither is.
func argOrFlag(arg, flag, name, missing string) (string, error) {
	switch {
	case arg == "" && flag == "":
		return "", errors.New(missing)
	case arg != "" && flag != "" && arg != flag:
		return "", fmt.Errorf("two files given (%s and --%s %s): give one", arg, name, flag)
	}
	return cmp.Or(arg, flag), nil
}

// Validate checks the flags before the trace is read.
func (c *AnalyzeTraceCmd) Validate() error {
	if _, err := c.path(); err != nil {
		return err
	}
	block := cmp.Or(c.CacheBlockSize, c.BlockSize)
	switch {
	case c.BlockSize < 1:
		return fmt.Errorf("--block-size must be at least 1 token, got %d", c.BlockSize)
	case c.KVCacheTokens != nil && *c.KVCacheTokens < max(block, 1):
		return fmt.Errorf("--kv-cache-tokens must be at least one cache block, %d tokens (--cache-block-size, default --block-size), got %d: "+
			"leave it out to skip the simulation", block, *c.KVCacheTokens)
	case c.KVCacheTokens == nil && (c.CacheBlockSize != 0 || c.TTFTms != 0 || c.ITLms != 0):
		return errors.New("--cache-block-size, --ttft-ms and --itl-ms configure the simulation: give --kv-cache-tokens too")
	case c.CacheBlockSize < 0:
		return fmt.Errorf("--cache-block-size must be at least 1 token, got %d", c.CacheBlockSize)
	case !(c.TTFTms >= 0 && c.TTFTms <= cachesim.MaxDurationMs):
		return fmt.Errorf("--ttft-ms must be from 0 to %d ms (a day), got %g", cachesim.MaxDurationMs, c.TTFTms)
	case !(c.ITLms >= 0 && c.ITLms <= cachesim.MaxDurationMs):
		return fmt.Errorf("--itl-ms must be from 0 to %d ms (a day), got %g", cachesim.MaxDurationMs, c.ITLms)
	}
	return nil
}

// Run analyses the trace and prints the report.
func (c *AnalyzeTraceCmd) Run(ctx context.Context, g *Globals) error {
	defer lean()()
	path, _ := c.path()
	if c.OutputFile != "" {
		if err := checkOutputFile(c.OutputFile, "--output-file", path); err != nil {
			return usageErr(err)
		}
	}
	o := traceanalysis.Options{BlockSize: c.BlockSize, AsProfile: true}
	if c.KVCacheTokens != nil {
		o.Simulate = &cachesim.Config{HashBlockSize: c.BlockSize, CacheBlockSize: cmp.Or(c.CacheBlockSize, c.BlockSize),
			CapacityTokens: *c.KVCacheTokens, TTFTms: c.TTFTms, ITLms: c.ITLms}
		o.Simulating = func(requests int) {
			fmt.Fprintf(g.Stderr, "%s: simulating the KV cache over %d requests (Ctrl-C stops it)\n", path, requests)
		}
	}
	r, err := traceanalysis.Analyze(ctx, path, o)
	if err != nil {
		return traceErr(tracesynth.NameBlockSizeFlag(err, "--block-size"))
	}
	r.Print(g.Stdout)
	if c.OutputFile == "" {
		return nil
	}
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		return err
	}
	if err := writeOutput(c.OutputFile, buf.Bytes()); err != nil {
		return err
	}
	fmt.Fprintf(g.Stdout, "Analysis report saved to %s\n", c.OutputFile)
	return nil
}

// lean makes the collector keep the heap within a quarter above what is
// live (instead of double), for a command whose live data is a large
// table built once, the garbage the file's lines; it returns the undo.
func lean() func() {
	old := debug.SetGCPercent(25)
	return func() { debug.SetGCPercent(old) }
}

// traceErr makes an error reading a trace a usage error (exit 2: the
// trace or a flag is at fault, nothing was written); an interruption stays
// one.
func traceErr(err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	return usageErr(err)
}

// checkOutputFile checks, before any work, that a file can be written at
// path (named by what in errors), as outputfile.Check allows: not a
// directory, FIFO, socket or block device (a character device, /dev/null,
// is written in place); not one of the inputs, under whatever name; in a
// directory that is writable or can be made in one that is (a probe file
// is made and removed there); and writable when it is a file.
func checkOutputFile(path, what string, inputs ...string) error {
	inPlace, err := outputfile.Check(path)
	if err != nil {
		return fmt.Errorf("%s %w", what, err)
	}
	for _, in := range inputs {
		if outputfile.SameFile(path, in) {
			return fmt.Errorf("%s %s is the input file %s: write elsewhere", what, path, in)
		}
	}
	if inPlace {
		return nil
	}
	dir := filepath.Dir(path)
	if target, err := filepath.EvalSymlinks(path); err == nil { // a regular file: replaced by a rename in its directory
		f, err := os.OpenFile(target, os.O_WRONLY, 0) // neither truncated nor written
		if err != nil {
			return fmt.Errorf("%s %s is not writable: %w", what, path, err)
		}
		f.Close()
		dir = filepath.Dir(target)
	}
	return checkWritableIn(path, what, dir, "a file path")
}

// checkOutputDir checks, before any work, that the files of a command
// writing several (plot's figures) can be written in the directory path
// (named by what in errors): a directory, or one that can be made, that is
// writable (a probe file is made and removed there).
func checkOutputDir(path, what string) error {
	if st, err := os.Stat(path); err == nil && !st.IsDir() {
		return fmt.Errorf("%s %s is not a directory: give a directory for the figures", what, path)
	}
	return checkWritableIn(path, what, path, "a directory path for the figures")
}

// checkWritableIn checks that the output path (named by what) can be
// written in dir: the nearest directory of dir that exists, in which a
// probe file is made and removed. A file in dir's way is refused, saying
// to give want instead.
func checkWritableIn(path, what, dir, want string) error {
	for { // the nearest directory that exists
		st, err := os.Stat(dir)
		if err == nil && !st.IsDir() {
			return fmt.Errorf("%s %s: %s is not a directory: give %s", what, path, dir, want)
		}
		if err == nil || filepath.Dir(dir) == dir {
			break
		}
		dir = filepath.Dir(dir)
	}
	probe, err := os.CreateTemp(dir, ".aiperf-write-check-*")
	if err != nil {
		return fmt.Errorf("%s %s: cannot write in %s: %w", what, path, dir, err)
	}
	probe.Close()
	return os.Remove(probe.Name())
}

// writeOutput writes an output file whole (outputfile.Write: a
// temporary file renamed into place, its directory made; a character
// device written in place, anything else but a regular file refused).
func writeOutput(path string, b []byte) error {
	_, err := outputfile.Write(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
	return err
}

// factor shows a ratio as AIPerf does (1.00, 2.50), or as %g when two
// decimals would hide it (1e-20, 0.125, 1e+30).
func factor(x float64) string {
	if s := fmt.Sprintf("%.2f", x); x < 1e6 && len(strconv.FormatFloat(x, 'f', -1, 64)) <= len(s) {
		return s
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// SynthesizeTraceCmd is `aiperf synthesize-trace`: a mooncake trace
// rewritten with AIPerf's synthesis parameters, its prefix structure kept.
type SynthesizeTraceCmd struct {
	traceInput
	Output               string  `arg:"" optional:"" name:"output" placeholder:"FILE" help:"The synthetic trace to write (JSONL)."`
	OutputFile           string  `name:"output-file" placeholder:"FILE" help:"The synthetic trace, instead of the second argument."`
	BlockSize            int     `name:"block-size" default:"512" placeholder:"TOKENS" help:"Tokens per hash id (default ${default})."`
	SpeedupRatio         float64 `name:"speedup-ratio" default:"1.0" placeholder:"X" help:"Divide the timestamps by X: 2 replays twice as fast (default ${default})."`
	PrefixLenMultiplier  float64 `name:"prefix-len-multiplier" default:"1.0" placeholder:"X" help:"Scale the shared prefixes' lengths, keeping who shares them (default ${default})."`
	PrefixRootMultiplier int     `name:"prefix-root-multiplier" default:"1" placeholder:"N" help:"Replicate the prefix tree N times: every row written N times with disjoint hash ids, N times the unique prefixes and requests at the same hit structure (default ${default})."`
	PromptLenMultiplier  float64 `name:"prompt-len-multiplier" default:"1.0" placeholder:"X" help:"Scale the unique (non-shared) prompt lengths (default ${default})."`
	MaxISL               int     `name:"max-isl" placeholder:"TOKENS" help:"Cap every input length at TOKENS (default: no cap)."`
}

// params are the command's synthesis parameters.
func (c *SynthesizeTraceCmd) params() tracesynth.Params {
	return tracesynth.Params{SpeedupRatio: c.SpeedupRatio, PrefixLenMultiplier: c.PrefixLenMultiplier,
		PrefixRootMultiplier: c.PrefixRootMultiplier, PromptLenMultiplier: c.PromptLenMultiplier, OutputLenMultiplier: 1,
		MaxISL: c.MaxISL, BlockSize: c.BlockSize, Command: true}
}

// outputPath is the file to write.
func (c *SynthesizeTraceCmd) outputPath() (string, error) {
	return argOrFlag(c.Output, c.OutputFile, "output-file", "give the output file: aiperf synthesize-trace IN OUT (or --output-file OUT)")
}

// Validate checks the arguments before the trace is read.
func (c *SynthesizeTraceCmd) Validate() error {
	in, err := c.path()
	if err != nil {
		return err
	}
	out, err := c.outputPath()
	if err != nil {
		return err
	}
	if filepath.Clean(in) == filepath.Clean(out) || outputfile.SameFile(in, out) {
		return fmt.Errorf("the output file %s is the input file %s: write the synthetic trace elsewhere", out, in)
	}
	return c.params().Validate("")
}

// outputWhat names the output file in errors, as it was given.
func (c *SynthesizeTraceCmd) outputWhat() string {
	if c.Output != "" {
		return "the output file"
	}
	return "--output-file"
}

// Run writes the synthetic trace.
func (c *SynthesizeTraceCmd) Run(ctx context.Context, g *Globals) error {
	defer lean()()
	in, _ := c.path()
	out, _ := c.outputPath()
	if err := checkOutputFile(out, c.outputWhat()); err != nil {
		return usageErr(err)
	}
	w := g.Stdout
	fmt.Fprintf(w, "\nStarting trace synthesis...\n")
	fmt.Fprintf(w, "Input file:                %s\nOutput file:               %s\n", in, out)
	fmt.Fprintf(w, "Block size:                %d\nSpeedup ratio:             %s\n", c.BlockSize, factor(c.SpeedupRatio))
	fmt.Fprintf(w, "Prefix length multiplier:  %s\nPrefix root multiplier:    %d\n", factor(c.PrefixLenMultiplier), c.PrefixRootMultiplier)
	fmt.Fprintf(w, "Prompt length multiplier:  %s\n", factor(c.PromptLenMultiplier))
	if c.MaxISL > 0 {
		fmt.Fprintf(w, "Max ISL:                   %d\n", c.MaxISL)
	}
	fmt.Fprintln(w)
	st, err := tracesynth.WriteFile(ctx, in, out, c.params())
	if err != nil {
		return traceErr(err)
	}
	fmt.Fprintf(w, "Generated %d synthetic traces\nOutput saved to %s\n\n", st.Written, out)
	fmt.Fprintf(w, "Synthesis Statistics:\n  Shared hash ids: %d of %d\n  Tree depth: %d\n\n", st.SharedIDs, st.HashIDs, st.MaxDepth)
	return nil
}
