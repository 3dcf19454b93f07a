package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/aiperf-go/aiperf/internal/cachesim"
	"github.com/aiperf-go/aiperf/internal/traceanalysis"
)

// AnalyzeTraceCmd is `aiperf analyze-trace`: AIPerf's prefix statistics of
// a mooncake trace, and the hit ratio it would get on a KV cache of a given
// size.
type AnalyzeTraceCmd struct {
	traceInput
	BlockSize      int     `name:"block-size" default:"512" placeholder:"TOKENS" help:"Tokens per hash id of the trace (default ${default})."`
	OutputFile     string  `name:"output-file" placeholder:"FILE" help:"Also write the report as JSON (AIPerf's analysis file) to FILE."`
	KVCacheTokens  int     `name:"kv-cache-tokens" placeholder:"TOKENS" help:"Replay the trace on its schedule through an LRU prefix cache of this many tokens (the mock server's cache model) and report its hit ratio and evictions."`
	CacheBlockSize int     `name:"cache-block-size" placeholder:"TOKENS" help:"The simulated cache's block (page) size in tokens (default: --block-size), as the server's --block-size."`
	TTFTms         float64 `name:"ttft-ms" placeholder:"MS" help:"Simulated time to first token: a request's prompt and reply blocks are cached again when it completes, TTFT + (output_length-1) × ITL after it arrives (default 0: at once, like aiperf-mock-server --fast)."`
	ITLms          float64 `name:"itl-ms" placeholder:"MS" help:"Simulated inter-token latency (default 0)."`
}

// traceInput is the trace file, given as an argument or, as AIPerf also
// accepts, with --input-file.
type traceInput struct {
	Input     string `arg:"" optional:"" name:"input" placeholder:"FILE" help:"The mooncake trace (JSONL)."`
	InputFile string `name:"input-file" placeholder:"FILE" help:"The mooncake trace, instead of the argument."`
}

// path is the trace file.
func (t traceInput) path() (string, error) {
	switch {
	case t.Input == "" && t.InputFile == "":
		return "", errors.New("give the trace file: aiperf analyze-trace FILE (or --input-file FILE)")
	case t.Input != "" && t.InputFile != "" && t.Input != t.InputFile:
		return "", fmt.Errorf("two trace files given (%s and --input-file %s): give one", t.Input, t.InputFile)
	}
	return cmp.Or(t.Input, t.InputFile), nil
}

// Validate checks the flags before the trace is read.
func (c *AnalyzeTraceCmd) Validate() error {
	if _, err := c.path(); err != nil {
		return err
	}
	switch {
	case c.BlockSize < 1:
		return fmt.Errorf("--block-size must be at least 1 token, got %d", c.BlockSize)
	case c.KVCacheTokens < 0:
		return fmt.Errorf("--kv-cache-tokens must be at least 1 block, got %d", c.KVCacheTokens)
	case c.KVCacheTokens == 0 && (c.CacheBlockSize != 0 || c.TTFTms != 0 || c.ITLms != 0):
		return errors.New("--cache-block-size, --ttft-ms and --itl-ms configure the simulation: give --kv-cache-tokens too")
	case c.CacheBlockSize < 0:
		return fmt.Errorf("--cache-block-size must be at least 1 token, got %d", c.CacheBlockSize)
	}
	return nil
}

// Run analyses the trace and prints the report.
func (c *AnalyzeTraceCmd) Run(ctx context.Context, g *Globals) error {
	defer lean()()
	path, _ := c.path()
	o := traceanalysis.Options{BlockSize: c.BlockSize}
	if c.KVCacheTokens > 0 {
		o.Simulate = &cachesim.Config{HashBlockSize: c.BlockSize, CacheBlockSize: cmp.Or(c.CacheBlockSize, c.BlockSize),
			CapacityTokens: c.KVCacheTokens, TTFTms: c.TTFTms, ITLms: c.ITLms}
	}
	r, err := traceanalysis.Analyze(ctx, path, o)
	if err != nil {
		return traceErr(err)
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

// writeOutput writes an output file, making its directory.
func writeOutput(path string, b []byte) error {
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
