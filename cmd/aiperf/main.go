// Command aiperf benchmarks OpenAI-compatible LLM inference servers: one cell
// with `profile`, declared sweeps with `plan` and `sweep`, and the stored run
// history with `runs` and `compare`.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/alecthomas/kong"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/report"
	"github.com/aiperf-go/aiperf/internal/stopsignal"
	"github.com/aiperf-go/aiperf/internal/termsafe"
	"github.com/aiperf-go/aiperf/runner"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// Globals are the options and streams every command receives.
type Globals struct {
	Store string `name:"store" env:"AIPERF_STORE" default:"artifacts/aiperf.db" help:"SQLite run store." placeholder:"PATH"`
	Wide  bool   `name:"wide" help:"Print tables and lines at full width (full metric names and cell labels) instead of fitting them to 120 columns."`
	// Version is --version, as aiperf version.
	Version kong.VersionFlag `name:"version" help:"Print the version and exit."`
	Stdout  io.Writer        `kong:"-"` // escapes control characters (termsafe.Writer)
	Stderr  io.Writer        `kong:"-"` // escapes control characters (termsafe.Writer)
	Args    []string         `kong:"-"` // the command line after the program name, as given
	// sweepLists are the profile command line's comma lists
	// (--concurrency 8,16,32), each parsed as its first value.
	sweepLists []sweepList
	// bareStore is the store a command given no --store opens
	// (AIPERF_STORE, else the default), set by checkStoreFlags.
	bareStore string
	// scratch says Store is a temporary file dropped at exit (profile
	// --no-store with several trials): nothing of the run is kept.
	scratch bool
}

// storeName is the store as the console names it.
func (g *Globals) storeName() string {
	if g.scratch {
		return "none (--no-store)"
	}
	return g.Store
}

// CLI is the command tree.
type CLI struct {
	Globals

	Profile         ProfileCmd         `cmd:"" help:"Benchmark one cell against an OpenAI-compatible server."`
	Chat            ChatCmd            `cmd:"" help:"Chat with an endpoint a message at a time, each reply followed by its TTFT, TPS, ITL and prompt-cache hit rate (AIPerf's sanity check)."`
	Plan            PlanCmd            `cmd:"" help:"Print every trial a .star sweep script declares; sends nothing."`
	Sweep           SweepCmd           `cmd:"" help:"Run a .star sweep script: every trial in its own subprocess, results stored."`
	Runs            RunsCmd            `cmd:"" help:"List, show, export and delete stored runs."`
	Compare         CompareCmd         `cmd:"" help:"Compare stored runs or sweeps, with run-to-run noise taken into account."`
	Plot            PlotCmd            `cmd:"" help:"Draw runs as PNG and SVG, from their artifact directories (as AIPerf's plot: its figures over time and comparisons, next to ours) or the store: Pareto views, bars, CDFs, timelines."`
	Config          ConfigCmd          `cmd:"" help:"AIPerf's YAML helpers: validate a config file, expand its sweep into trials."`
	Report          ReportCmd          `cmd:"" help:"Write one self-contained HTML report of stored runs or sweeps (tables, verdicts, figures, audits)."`
	Analyze         AnalyzeCmd         `cmd:"" help:"Views of a finished run: its sessions as swim lanes, its conversations' messages."`
	AnalyzeTrace    AnalyzeTraceCmd    `cmd:"" name:"analyze-trace" help:"Analyze a mooncake trace: AIPerf's prefix statistics and ISL/OSL distributions, and the hit ratio it gets on a KV cache of a given size."`
	SynthesizeTrace SynthesizeTraceCmd `cmd:"" name:"synthesize-trace" help:"Write a synthetic mooncake trace from a real one: scaled timestamps, prefixes, prompts and prefix trees, its prefix structure kept."`
	MockServer      MockServerCmd      `cmd:"" name:"mock-server" help:"Run the built-in OpenAI-compatible mock server."`
	Plugins         PluginsCmd         `cmd:"" help:"List AIPerf's plugin categories that aiperf has and their types (endpoint types, dataset formats, arrival patterns, search planners, ...): aiperf plugins [category] [type]."`
	Version         VersionCmd         `cmd:"" help:"Print the version."`
	Worker          WorkerCmd          `cmd:"" hidden:"" help:"One worker process of a sharded cell (profile --workers), driven over stdin and stdout."`

	// --install-completion, AIPerf's: run() makes it the hidden command.
	InstallCompletionFlag installCompletionFlag `name:"install-completion" help:"Install the shell completion of aiperf and exit: aiperf --install-completion [--shell bash|zsh|fish] [-o PATH] (default: the shell $SHELL names, in its completions directory)."`
	InstallCompletion     InstallCompletionCmd  `cmd:"" name:"install-completion" hidden:"" help:"Install the shell completion of aiperf (aiperf --install-completion)."`
}

// VersionCmd prints the version.
type VersionCmd struct{}

// Run prints the version.
func (VersionCmd) Run(g *Globals) error {
	fmt.Fprintln(g.Stdout, "aiperf", version)
	return nil
}

// memoryLimit is Go's soft memory limit unless GOMEMLIMIT sets one: the
// garbage collector then keeps the heap near what a long run holds (its
// records) instead of letting it grow to twice that. A run that holds more
// makes the collector work harder, which the client's health line shows.
const memoryLimit = 768 << 20

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	// A reader that went away (aiperf profile … | head -1) makes a write to
	// stdout or stderr fail with EPIPE, not kill the process: the run goes
	// on, is exported and stored. (Notify, not Ignore: a process this one
	// starts gets SIGPIPE's default back.)
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	stopQuit := quitOnSIGQUIT()
	ctx, stop := interruptContext(os.Getenv(runner.ChildEnv) == "")
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	stopQuit()
	os.Exit(code)
}

// sameSignal is how soon after the first a second signal is taken as the
// same one delivered twice (a variable for the test that holds it open).
var sameSignal = time.Second

// signalNotes is where interruptContext says what it does with a signal
// (signalNote: above the dashboard while it draws).
var signalNotes io.Writer = os.Stderr

// interruptContext returns a context cancelled by the first SIGINT,
// SIGTERM or SIGHUP (stopsignal.Signals; its cause: signalled): the run stops cleanly (in-flight requests
// cut, profiler stopped, results written). With exitOnSecond, it says so at
// once, and a second signal exits at once with ExitInterrupted, unless it
// came within sameSignal of the first: that is one signal delivered twice
// (`timeout -s INT` signals its command and then the command's process
// group), not a second Ctrl-C. A sweep's trial child gets each Ctrl-C twice (from the
// terminal and forwarded by its parent), so it never exits early: its
// parent does, and kills it if it outlives the parent's grace period.
func interruptContext(exitOnSecond bool) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, stopsignal.Signals()...)
	done := make(chan struct{})
	go func() {
		var first time.Time
		select {
		case s := <-sigs:
			first = time.Now()
			// Said before the run is cancelled: before what the run then
			// says of its clean stop (a profiler call it waits for).
			if exitOnSecond {
				fmt.Fprintf(signalNote(), "aiperf: %v: stopping cleanly; a second one exits at once\n", signalled{s})
			}
			cancel(signalled{s})
		case <-done:
			return
		}
		if !exitOnSecond {
			return
		}
		for {
			select {
			case <-sigs:
				if time.Since(first) < sameSignal {
					fmt.Fprintf(signalNote(), "aiperf: a second signal within %v of the first is taken as the same one; "+
						"send another to exit at once\n", sameSignal)
					continue
				}
				hardExit()
			case <-done:
				return
			}
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}

// signalled is the cause of a run stopped by a signal: it is
// context.Canceled, and its message names the signal.
type signalled struct{ sig os.Signal }

func (s signalled) Error() string { return stopsignal.Name(s.sig) }

// Is makes a signalled match context.Canceled.
func (s signalled) Is(target error) bool { return target == context.Canceled }

// interruptedWhile is err, unless err is ctx's cancellation (a Ctrl-C):
// then it says what was being done and why it stopped ("interrupted while
// reading the runs: SIGINT (Ctrl-C)"), in place of the step that saw it
// ("get run 22: control-hook calls: context canceled"). Still
// context.Canceled: exit 130.
func interruptedWhile(ctx context.Context, what string, err error) error {
	if err == nil || ctx.Err() == nil || !errors.Is(err, context.Canceled) {
		return err
	}
	return fmt.Errorf("interrupted while %s: %w", what, context.Cause(ctx))
}

// run parses args, runs the command and maps its error to an exit code.
// Everything printed goes through termsafe: control characters a server,
// an error body or a stored name carries are shown escaped, never acted on
// by the terminal (the few outputs that must stay raw take termsafe.Raw).
// The standard log package's lines (net/http's own, which quote a server's
// bytes) go to stderr redacted of every secret the command knows.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	stdout, stderr = termsafe.Writer(stdout), termsafe.Writer(stderr)
	defer log.SetOutput(log.Writer())
	log.SetOutput(plan.LogWriter(stderr))
	var cli CLI
	exited := -1
	parser, err := kong.New(&cli, append(parserOptions(),
		kong.Name("aiperf"),
		kong.Description("Benchmark OpenAI-compatible LLM inference servers (a Go re-implementation of NVIDIA AIPerf)."),
		kong.UsageOnError(),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { exited = code }),
		kong.BindTo(ctx, (*context.Context)(nil)),
		kong.Vars{"version": "aiperf " + version},
	)...)
	if err != nil {
		fmt.Fprintf(stderr, "aiperf: internal error: %v\n", err)
		return ExitFailure
	}
	if len(args) == 0 { // a bare aiperf: its commands, as --help lists them
		_, _ = parser.Parse([]string{"--help"})
		return ExitUsage
	}
	parsed, lists, err := takeSweepLists(joinNegativeValues(parser.Model, completionArgs(args)))
	if err != nil {
		fmt.Fprintf(stderr, "aiperf: error: %v\n", err)
		return ExitUsage
	}
	kctx, err := parser.Parse(parsed)
	if exited >= 0 { // --help, --version
		return exited
	}
	if errors.Is(err, syscall.EPIPE) { // the help's reader went away (aiperf profile --help | head)
		return ExitOK
	}
	if groupWithoutCommand(err) { // aiperf runs: its commands, as aiperf runs --help lists them
		_, _ = parser.Parse(append(slices.Clone(parsed), "--help"))
		return ExitUsage
	}
	if err != nil {
		fmt.Fprintf(stderr, "aiperf: error: %s\n", parseMessage(err))
		return ExitUsage
	}
	if cli.Globals.Wide { // marked under the escaping, which termsafe.Raw peels off
		stdout = termsafe.Writer(report.Wide(termsafe.Raw(stdout)))
		stderr = termsafe.Writer(report.Wide(termsafe.Raw(stderr)))
	}
	if err := checkStoreFlags(kctx, &cli.Globals, cli.Profile.NoStore); err != nil { // --store, AIPERF_STORE, --no-store
		return printError(stderr, err)
	}
	cli.Globals.Stdout, cli.Globals.Stderr, cli.Globals.Args, cli.Globals.sweepLists = stdout, stderr, args, lists
	return printError(stderr, kctx.Run(&cli.Globals))
}

// exitError carries an exit code through a command's error.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErr marks a problem with the user's input: exit 2, nothing was sent.
func usageErr(err error) error { return &exitError{code: ExitUsage, err: err} }

// refused reports whether err refused the command before it sent anything
// (exit 2).
func refused(err error) bool {
	var ee *exitError
	return errors.As(err, &ee) && ee.code == ExitUsage
}

// withCode attaches an exit code to err.
func withCode(code int, err error) error { return &exitError{code: code, err: err} }

// printError prints err (one problem per line) and returns its exit code.
func printError(stderr io.Writer, err error) int {
	if err == nil {
		return ExitOK
	}
	code := ExitFailure
	var ee *exitError
	var pe *fs.PathError
	switch {
	case errors.As(err, &pe) && pe.Path == os.Stdout.Name() && errors.Is(pe.Err, syscall.EPIPE):
		return ExitOK // the reader of the output went away (aiperf runs list | head): it had what it wanted
	case errors.As(err, &ee):
		code = ee.code
	case errors.Is(err, context.Canceled):
		code = ExitInterrupted
	}
	if fes := plan.FieldErrors(err); len(fes) > 0 {
		fmt.Fprintf(stderr, "aiperf: error: invalid configuration (nothing was sent):\n")
		for _, fe := range fes {
			fmt.Fprintf(stderr, "  %s\n", fe.Error())
		}
		return code
	}
	msg := strings.TrimSpace(err.Error())
	fmt.Fprintf(stderr, "aiperf: error: %s\n", msg)
	return code
}
