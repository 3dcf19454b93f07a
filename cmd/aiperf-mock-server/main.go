// Command aiperf-mock-server runs the OpenAI-compatible mock inference
// server of package mock until SIGINT, SIGTERM or SIGHUP.
//
// The first signal stops it (the requests in flight get a few seconds to
// finish, as the mock says); a second one, more than a second after the
// first, exits at once. Exit codes: 130 once stopped by a signal (as
// aiperf's), 1 on a runtime failure (such as the port being in use), 2 on
// invalid flags, 0 after --help.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/alecthomas/kong"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/stopsignal"
)

const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitInterrupted = 130
)

const name = "aiperf-mock-server"

func main() {
	ctx, stop := interruptContext(os.Stderr)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// sameSignal is how soon after the first a second signal is taken as the
// same one delivered twice (`timeout -s INT` signals its command and then
// the command's process group), as aiperf takes it (docs/interrupts.md).
const sameSignal = time.Second

// interruptContext returns a context cancelled by the first signal that
// stops a command (stopsignal: SIGINT, SIGTERM, SIGHUP), saying so on
// notes; a later signal, past sameSignal, exits at
// once with exitInterrupted.
func interruptContext(notes io.Writer) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, stopsignal.Signals()...)
	done := make(chan struct{})
	go func() {
		var first time.Time
		for {
			select {
			case s := <-sigs:
				switch {
				case first.IsZero():
					first = time.Now()
					fmt.Fprintf(notes, "%s: %s: stopping; a second one exits at once\n", name, stopsignal.Name(s))
					cancel()
				case time.Since(first) < sameSignal:
					fmt.Fprintf(notes, "%s: a second signal within %v of the first is taken as the same one; send another to exit at once\n",
						name, sameSignal)
				default:
					fmt.Fprintf(notes, "%s: interrupted again: exiting now (the requests in flight are cut)\n", name)
					os.Exit(exitInterrupted)
				}
			case <-done:
				return
			}
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
}

// run parses args, serves until ctx is cancelled and returns the exit code:
// exitInterrupted once ctx is cancelled (a signal stopped the mock).
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
	return exitInterrupted // Serve returns nil once ctx is cancelled: a signal stopped the mock
}
