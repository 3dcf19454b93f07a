package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"text/tabwriter"
)

var (
	callgrindLevels []int
	// callgrindRuns are the two request counts of each client's runs: the
	// difference of their instruction counts, over the difference of the
	// counts, is the cost of a request without the start-up and the exit.
	callgrindRuns = [2]int{300, 1300}
)

// callgrindCounts prints the user-space instructions per request of aiperf
// and the minimal client (and the -pinned-extra clients), each run under
// valgrind --tool=callgrind against the neutral server: a count that does
// not depend on the machine's load, unlike CPU time.
func callgrindCounts() error {
	if len(callgrindLevels) == 0 {
		return nil
	}
	if _, err := exec.LookPath("valgrind"); err != nil {
		fmt.Printf("instruction counts skipped: valgrind is not installed\n\n")
		return nil
	}
	self, clients, err := measuredClients()
	if err != nil {
		return err
	}
	fmt.Printf("user-space instructions per request (valgrind --tool=callgrind, GOMAXPROCS 1; the difference between runs of %d and %d requests)\n",
		callgrindRuns[0], callgrindRuns[1])
	tw := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	head := "concurrency\t"
	for _, cl := range clients {
		head += cl.name + "\t"
	}
	fmt.Fprintln(tw, head+"aiperf / minimal\t")
	for _, c := range callgrindLevels {
		line := fmt.Sprintf("%d\t", c)
		var per []float64
		for _, cl := range clients {
			n, err := instructionsPerRequest(self, cl, c)
			if err != nil {
				return fmt.Errorf("callgrind %s at concurrency %d: %w", cl.name, c, err)
			}
			per = append(per, n)
			line += fmt.Sprintf("%.0f\t", n)
		}
		fmt.Fprintf(tw, "%s%.2f×\t\n", line, per[0]/per[1])
	}
	tw.Flush()
	fmt.Println()
	return nil
}

// collected is valgrind's count of executed instructions.
var collected = regexp.MustCompile(`Collected : (\d+)`)

// instructionsPerRequest runs cl under callgrind at concurrency c for each
// of callgrindRuns against a fresh neutral server.
func instructionsPerRequest(self string, cl pinnedClient, c int) (float64, error) {
	url, _, stop, err := startServer(exec.Command(self, "-role", "server"))
	if err != nil {
		return 0, err
	}
	defer stop()
	var counts [2]float64
	for i, n := range callgrindRuns {
		dir, err := os.MkdirTemp("", "clientbench-callgrind-")
		if err != nil {
			return 0, err
		}
		args, err := cl.args(url, dir, c, n)
		if err != nil {
			return 0, err
		}
		cmd := exec.Command("valgrind", append([]string{"--tool=callgrind", "--callgrind-out-file=" + filepath.Join(dir, "callgrind.out")}, args...)...)
		// Valgrind cannot follow Go's asynchronous preemption signals;
		// one P, as on a core of its own.
		cmd.Env = append(os.Environ(), "GODEBUG=asyncpreemptoff=1", "GOMAXPROCS=1")
		b, err := cmd.CombinedOutput()
		os.RemoveAll(dir)
		m := collected.FindSubmatch(b)
		if err != nil || m == nil {
			return 0, fmt.Errorf("valgrind: %v\n%s", err, b)
		}
		counts[i], _ = strconv.ParseFloat(string(m[1]), 64)
	}
	return (counts[1] - counts[0]) / float64(callgrindRuns[1]-callgrindRuns[0]), nil
}
