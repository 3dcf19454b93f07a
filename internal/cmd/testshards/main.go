// Command testshards runs the module's tests as `make test` does: every
// package with `go test`, and the heaviest package (cmd/aiperf, whose
// end-to-end tests change the working directory and the environment and so
// run one at a time inside one process) split into shards that run as
// separate `go test` processes side by side.
//
// The split is by test name: `go test -list` names the package's tests, so a
// test added tomorrow runs without anyone editing a list. With -weights, a
// file of each test's seconds in an earlier run, the tests are dealt longest
// first, each to the shard with the least work so far (a test the file does
// not name weighs the median); without it, round-robin. Every go test flag
// after -- is passed to each process. The exit status is the first failing
// process's, or 0; Ctrl-C stops every process.
//
//	go run ./internal/cmd/testshards -shards 4 -weights cmd/aiperf/testdata/test_seconds.tsv -- -race -count=1 -timeout 30m
//
// -durations reads `go test -json` output on stdin and writes such a file:
//
//	go test -race -count=1 -json ./cmd/aiperf | go run ./internal/cmd/testshards -durations > cmd/aiperf/testdata/test_seconds.tsv
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
)

func main() {
	shards := flag.Int("shards", 4, "processes the heavy package's tests are split across")
	heavy := flag.String("heavy", "github.com/aiperf-go/aiperf/cmd/aiperf", "import path of the package to shard")
	weightsFile := flag.String("weights", "", "file of `name<TAB>seconds` lines from an earlier run, to deal the longest tests first")
	durations := flag.Bool("durations", false, "read go test -json on stdin and write each top-level test's seconds")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: testshards [-shards N] [-heavy PKG] [-weights FILE] -- [go test flags]\n       testshards -durations < go-test-json > FILE")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *shards < 1 {
		fmt.Fprintln(os.Stderr, "testshards: -shards must be at least 1")
		os.Exit(2)
	}
	if *durations {
		if err := writeDurations(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "testshards:", err)
			os.Exit(1)
		}
		return
	}
	var weights map[string]float64
	if *weightsFile != "" {
		var err error
		if weights, err = readWeights(*weightsFile); err != nil {
			fmt.Fprintln(os.Stderr, "testshards:", err)
			os.Exit(2)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, *heavy, *shards, weights, flag.Args(), os.Stdout))
}

// run lists the packages and the heavy package's tests, starts the
// processes and returns the exit status.
func run(ctx context.Context, heavy string, shards int, weights map[string]float64, testFlags []string, out io.Writer) int {
	pkgs, err := goList(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testshards:", err)
		return 2
	}
	others := slices.DeleteFunc(slices.Clone(pkgs), func(p string) bool { return p == heavy })
	var jobs [][]string
	if len(others) > 0 {
		jobs = append(jobs, append(append([]string{"test"}, testFlags...), others...))
	}
	if len(others) < len(pkgs) {
		names, err := listTests(ctx, heavy, testFlags)
		if err != nil {
			fmt.Fprintln(os.Stderr, "testshards:", err)
			return 2
		}
		for _, shard := range deal(names, shards, weights) {
			pattern := "^(" + strings.Join(shard, "|") + ")$"
			jobs = append(jobs, append(append([]string{"test"}, testFlags...), "-run", pattern, heavy))
		}
	}
	return runAll(ctx, jobs, out)
}

// goList returns the import paths of the module's packages.
func goList(ctx context.Context) ([]string, error) {
	b, err := exec.CommandContext(ctx, "go", "list", "./...").Output()
	if err != nil {
		return nil, fmt.Errorf("list packages: %w", exitDetail(err))
	}
	return strings.Fields(string(b)), nil
}

// testName matches the lines of `go test -list` that name a test.
var testName = regexp.MustCompile(`^(Test|Fuzz|Example)\w*$`)

// listTests returns the names of pkg's top-level tests, fuzz targets and
// examples, built with the same flags (so the build is reused).
func listTests(ctx context.Context, pkg string, testFlags []string) ([]string, error) {
	args := append(append([]string{"test"}, buildFlags(testFlags)...), "-list", ".", pkg)
	b, err := exec.CommandContext(ctx, "go", args...).Output()
	if err != nil {
		return nil, fmt.Errorf("list the tests of %s: %w", pkg, exitDetail(err))
	}
	var names []string
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); testName.MatchString(line) {
			names = append(names, line)
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("list the tests of %s: go test -list named none", pkg)
	}
	return names, nil
}

// buildFlags keeps the flags that change the test binary (-race, -tags,
// ...) and drops the ones that only steer a run (-count, -timeout, -run),
// which -list does not need.
func buildFlags(testFlags []string) []string {
	var keep []string
	for _, f := range testFlags {
		name, _, _ := strings.Cut(strings.TrimLeft(f, "-"), "=")
		switch name {
		case "race", "tags", "cover", "covermode", "gcflags", "ldflags", "trimpath", "mod":
			keep = append(keep, f)
		}
	}
	return keep
}

// deal splits names into at most n non-empty shards: without weights
// round-robin, so the slow tests of one file (listed together) land in
// different shards; with weights longest first, each to the shard with the
// least weight so far.
func deal(names []string, n int, weights map[string]float64) [][]string {
	n = min(n, len(names))
	shards := make([][]string, n)
	if len(weights) == 0 {
		for i, name := range names {
			shards[i%n] = append(shards[i%n], name)
		}
		return shards
	}
	known := slices.Sorted(maps.Values(weights))
	median := known[len(known)/2]
	weight := func(name string) float64 { return cmp.Or(weights[name], median) }
	order := slices.Clone(names)
	slices.SortStableFunc(order, func(a, b string) int { return cmp.Compare(weight(b), weight(a)) })
	load := make([]float64, n)
	for _, name := range order {
		i := slices.Index(load, slices.Min(load))
		shards[i] = append(shards[i], name)
		load[i] += weight(name)
	}
	return shards
}

// runAll starts every job at once, copies each one's output a whole line at
// a time, and returns the first non-zero exit status.
func runAll(ctx context.Context, jobs [][]string, out io.Writer) int {
	var (
		mu     sync.Mutex
		status int
		wg     sync.WaitGroup
	)
	lw := &lineWriter{w: out}
	for _, args := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.CommandContext(ctx, "go", args...)
			cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
			stdout, err := cmd.StdoutPipe()
			if err == nil {
				cmd.Stderr = cmd.Stdout
				err = cmd.Start()
			}
			if err == nil {
				lw.copyLines(stdout)
				err = cmd.Wait()
			}
			code := exitCode(err)
			if err != nil && code == 1 && !errors.As(err, new(*exec.ExitError)) {
				fmt.Fprintf(os.Stderr, "testshards: go %s: %v\n", strings.Join(args, " "), err)
			}
			mu.Lock()
			if status == 0 {
				status = code
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	return status
}

// lineWriter writes whole lines from several processes to one writer.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) copyLines(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		l.mu.Lock()
		l.w.Write(append(sc.Bytes(), '\n'))
		l.mu.Unlock()
	}
	io.Copy(io.Discard, r) // a line over the buffer: keep the process from blocking
}

// exitCode is the process's exit status: 0, its code, or 1.
func exitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee) && ee.ExitCode() > 0:
		return ee.ExitCode()
	}
	return 1
}

// exitDetail adds a failed command's stderr to its error.
func exitDetail(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		return fmt.Errorf("%w: %s", err, bytes.TrimSpace(ee.Stderr))
	}
	return err
}
