// Command aiperf-mock-server runs the OpenAI-compatible mock inference
// server of package mock until SIGINT or SIGTERM.
//
// Exit codes: 0 after a clean shutdown, 1 on a runtime failure (such as the
// port being in use), 2 on invalid flags.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/alecthomas/kong"

	"github.com/aiperf-go/aiperf/internal/mock"
)

const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

const name = "aiperf-mock-server"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run parses args, serves until ctx is cancelled and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var cfg mock.Config
	exit := -1 // set by kong after --help
	parser, err := kong.New(&cfg,
		kong.Name(name),
		kong.Description("OpenAI-compatible mock inference server (chat and completions, streaming or not) with the control-hook admin routes of vLLM and SGLang."),
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { exit = code }),
	)
	if err != nil {
		fmt.Fprintf(stderr, "%s: build flags: %v\n", name, err)
		return exitFailure
	}
	_, err = parser.Parse(args)
	if exit >= 0 {
		return exit
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v (see --help)\n", name, err)
		return exitUsage
	}
	if err := mock.Serve(ctx, cfg, stderr); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		if errors.Is(err, mock.ErrInvalidConfig) {
			return exitUsage
		}
		return exitFailure
	}
	return exitOK
}
