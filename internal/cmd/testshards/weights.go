package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
)

// readWeights reads a file of `name<TAB>seconds` lines; # starts a comment.
func readWeights(path string) (map[string]float64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read test weights: %w", err)
	}
	weights := map[string]float64{}
	for i, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, secs, ok := strings.Cut(line, "\t")
		v, err := strconv.ParseFloat(strings.TrimSpace(secs), 64)
		if !ok || err != nil || v < 0 {
			return nil, fmt.Errorf("read test weights: %s:%d: want name<TAB>seconds, got %q", path, i+1, line)
		}
		weights[name] = v
	}
	if len(weights) == 0 {
		return nil, fmt.Errorf("read test weights: %s names no test", path)
	}
	return weights, nil
}

// writeDurations reads go test -json events and writes each top-level
// test's seconds as `name<TAB>seconds`, longest first.
func writeDurations(r io.Reader, w io.Writer) error {
	type event struct {
		Action  string
		Test    string
		Elapsed float64
	}
	// A test whose subtests run in parallel ends before they start: its
	// weight is the larger of its own time and the sum of its leaf
	// subtests' (a subtest's name may itself hold a slash, so a leaf is a
	// name no other extends).
	secs, subs, inner := map[string]float64{}, map[string]float64{}, map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Test == "" ||
			(e.Action != "pass" && e.Action != "fail" && e.Action != "skip") {
			continue
		}
		if !strings.Contains(e.Test, "/") {
			secs[e.Test] = max(secs[e.Test], e.Elapsed)
			continue
		}
		subs[e.Test] = e.Elapsed
		for i := strings.LastIndexByte(e.Test, '/'); i > 0; i = strings.LastIndexByte(e.Test[:i], '/') {
			inner[e.Test[:i]] = true
		}
	}
	leaves := map[string]float64{}
	for name, s := range subs {
		if !inner[name] {
			top, _, _ := strings.Cut(name, "/")
			leaves[top] += s
		}
	}
	for top, s := range leaves {
		secs[top] = max(secs[top], s)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read go test -json: %w", err)
	}
	names := slices.Sorted(maps.Keys(secs))
	slices.SortStableFunc(names, func(a, b string) int { return cmp.Compare(secs[b], secs[a]) })
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "# each top-level test's seconds in one go test -race run (internal/cmd/testshards -durations)")
	for _, n := range names {
		fmt.Fprintf(bw, "%s\t%.2f\n", n, secs[n])
	}
	return bw.Flush()
}
