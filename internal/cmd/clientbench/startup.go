package main

import (
	"bufio"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	_ "github.com/mattn/go-sqlite3" // the sweep's store
)

var (
	aiperfBin = "bin/aiperf"
	startups  = 5
)

// startup measures what a trial costs beyond its load: the time from
// starting `aiperf profile` to its first request's send (the JSONL export's
// wall-clock request_start_ns), and the overhead per trial of a sweep of
// one-request trials: its wall time minus the trials' benchmark durations,
// over the trials.
func startup(url string) error {
	if startups <= 0 {
		return nil
	}
	bin, err := filepath.Abs(aiperfBin)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "clientbench-startup-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var firsts []float64
	for i := range startups {
		out := filepath.Join(dir, fmt.Sprint("p", i))
		t0 := time.Now()
		cmd := exec.Command(bin, "profile", "-m", "mock-model", "-u", url, "--streaming", "--request-count", "1",
			"--ui", "none", "--no-store", "--artifact-dir", out)
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("start-up run: %w\n%s", err, b)
		}
		first, err := firstSend(filepath.Join(out, "profile_export.jsonl"))
		if err != nil {
			return err
		}
		firsts = append(firsts, float64(first-t0.UnixNano())/1e6)
	}
	slices.Sort(firsts)

	script := filepath.Join(dir, "startup.star")
	if err := os.WriteFile(script, fmt.Appendf(nil, `sweep(name = "startup", trials = %d,
    base = profile(model = "mock-model", url = %q, streaming = True, request_count = 1))
`, startups, url), 0o644); err != nil {
		return err
	}
	store := filepath.Join(dir, "sweep.db")
	t0 := time.Now()
	cmd := exec.Command(bin, "--store", store, "sweep", script, "--ui", "none")
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("start-up sweep: %w\n%s", err, b)
	}
	wall := time.Since(t0).Seconds()
	load, err := loadSeconds(store)
	if err != nil {
		return err
	}
	fmt.Printf("\ntrial start-up: `aiperf profile` start to first request send, %d runs: min %.0f ms, median %.0f ms, max %.0f ms\n",
		len(firsts), firsts[0], median(firsts), firsts[len(firsts)-1])
	fmt.Printf("sweep of %d one-request trials: %.2f s, of which load %.3f s: %.0f ms per trial beyond the load\n",
		startups, wall, load, 1000*(wall-load)/float64(startups))
	return nil
}

// firstSend is the earliest request_start_ns of a profile_export.jsonl.
func firstSend(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	first := int64(0)
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var rec struct {
			Metadata struct {
				Start int64 `json:"request_start_ns"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return 0, fmt.Errorf("read %s: %w", path, err)
		}
		if first == 0 || rec.Metadata.Start < first {
			first = rec.Metadata.Start
		}
	}
	if first == 0 {
		return 0, fmt.Errorf("read %s: no request", path)
	}
	return first, sc.Err()
}

// loadSeconds is the sum of the benchmark durations of a store's runs.
func loadSeconds(path string) (float64, error) {
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var s sql.NullFloat64
	err = db.QueryRow(`SELECT sum(value) FROM run_stats WHERE metric = 'benchmark_duration' AND phase = 'profiling'`).Scan(&s)
	if err != nil {
		return 0, fmt.Errorf("read the sweep's benchmark durations: %w", err)
	}
	if !s.Valid {
		return 0, errors.New("read the sweep's benchmark durations: the store holds none")
	}
	return s.Float64, nil
}
