package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

var memoryRuns = []int{20000, 200000}

// memory runs `aiperf profile` as a separate process for each request
// count of memoryRuns (streaming, 64 chunks, concurrency 64, store on)
// against url and prints its peak RSS, the slope in bytes per request
// between the first and last count, and the seconds it spent after its
// load (wall time minus start-up to the first send minus the benchmark
// duration), per 100k requests.
func memory(url string) error {
	if len(memoryRuns) == 0 {
		return nil
	}
	bin, err := filepath.Abs(aiperfBin)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "clientbench-memory-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fmt.Printf("\nmemory and post-run work of `aiperf profile` (streaming, 64 chunks, concurrency 64, store on)\n")
	type point struct{ n, rssKB int }
	var pts []point
	for _, n := range memoryRuns {
		out := filepath.Join(dir, fmt.Sprint("r", n))
		t0 := time.Now()
		cmd := exec.Command(bin, "--store", filepath.Join(dir, "aiperf.db"), "profile", "-m", "mock-model", "-u", url,
			"--streaming", "--concurrency", "64", "--request-count", fmt.Sprint(n), "--osl", "64",
			"--extra-inputs", "ignore_eos:true", "--ui", "none", "--artifact-dir", out)
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("memory run of %d requests: %w\n%s", n, err, b)
		}
		wall := time.Since(t0).Seconds()
		rss := int(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) // KB on Linux
		first, err := firstSend(filepath.Join(out, "profile_export.jsonl"))
		if err != nil {
			return err
		}
		dur, err := benchmarkSeconds(filepath.Join(out, "profile_export_aiperf.json"))
		if err != nil {
			return err
		}
		post := wall - float64(first-t0.UnixNano())/1e9 - dur
		fmt.Printf("  %7d requests: peak RSS %4d MB, load %.1f s, after the load %.2f s (%.2f s per 100k requests)\n",
			n, rss>>10, dur, post, post*1e5/float64(n))
		pts = append(pts, point{n, rss})
	}
	if len(pts) >= 2 {
		a, b := pts[0], pts[len(pts)-1]
		fmt.Printf("  slope: %.0f bytes per request\n", float64(b.rssKB-a.rssKB)*1024/float64(b.n-a.n))
	}
	return nil
}

// benchmarkSeconds reads benchmark_duration from a profile export.
func benchmarkSeconds(path string) (float64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	var exp struct {
		Duration struct {
			Avg float64 `json:"avg"`
		} `json:"benchmark_duration"`
	}
	if err := json.Unmarshal(b, &exp); err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	return exp.Duration.Avg, nil
}
