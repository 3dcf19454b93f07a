package mock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// ErrInvalidConfig marks a Config that New rejected (exit code 2 in the CLIs).
var ErrInvalidConfig = errors.New("invalid mock server flags")

// Serve is what both CLIs run: tokenize prompts with the default
// tokenizer (o200k_base, offline) unless cfg has its own, validate cfg,
// announce the address on logw ("aiperf-mock-server listening on
// http://ADDR"), send access logs there too unless cfg says otherwise, and
// serve until ctx is cancelled (what the stop then waits for is said
// there too). When tokens are paced it first gives the
// process one more P (GOMAXPROCS) for the timing thread.
func Serve(ctx context.Context, cfg Config, logw io.Writer) error {
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	if cfg.CountTokens == nil && cfg.EncodeTokens == nil {
		tok, err := tokenizer.Load(tokenizer.Default)
		if err != nil {
			return fmt.Errorf("load tokenizer: %w", err)
		}
		cfg.EncodeTokens = tok.Encode
	}
	if cfg.AccessLog == nil {
		cfg.AccessLog = logw
	}
	srv, err := New(cfg)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	if srv.paced() {
		addClockP()
	}
	srv.notes = logw
	return srv.ListenAndServe(ctx, func(addr string) {
		fmt.Fprintf(logw, "aiperf-mock-server listening on http://%s\n", addr)
	})
}

// addClockP raises GOMAXPROCS by one, once per process. The timing
// thread holds a P while it sleeps in the kernel, and under load it takes
// the Go scheduler milliseconds to retake it for the handlers and to find
// the thread one when it wakes; with a P of its own, releases stay on time
// when the handlers keep the other Ps busy. (Library users embedding
// servers in a process of their own are left to size GOMAXPROCS.)
var addClockP = sync.OnceFunc(func() { runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 1) })
