// Package promtest runs Debian's Prometheus server (the prometheus
// package) for tests: it scrapes the given targets every second (a scrape may take 900 ms: a
// loaded machine running the race detector is slow to answer), and its
// HTTP API answers instant queries. Tests skip, with a message, where the
// binary is absent (.ci/run installs it).
package promtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Binary is where Debian installs Prometheus.
var Binary = "/usr/bin/prometheus"

// Server is a running Prometheus.
type Server struct {
	URL string // its HTTP API's base
}

// Start runs Prometheus scraping targets (host:port, path /metrics), or
// skips the test when the binary is absent. It is stopped at cleanup.
func Start(t testing.TB, targets ...string) *Server {
	t.Helper()
	bin, err := exec.LookPath(Binary)
	if err != nil {
		t.Skipf("Debian's prometheus is not installed (%v): apt-get install prometheus (.ci/run does)", err)
	}
	dir := t.TempDir()
	quoted := make([]string, len(targets))
	for i, tg := range targets {
		quoted[i] = strconv.Quote(tg)
	}
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\nscrape_configs:\n"+
		"  - job_name: aiperf\n    static_configs:\n      - targets: [%s]\n", strings.Join(quoted, ", "))
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr)
	log, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start prometheus: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		log.Close()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			t.Logf("prometheus log:\n%s", b)
		}
	})
	s := &Server{URL: "http://" + addr}
	deadline := time.Now().Add(60 * time.Second) // a hang guard
	for {
		resp, err := http.Get(s.URL + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus at %s not ready: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Sample is one series of an instant query's answer.
type Sample struct {
	Labels map[string]string
	At     time.Time
	Value  float64
}

// Query runs an instant PromQL query. A range selector (q[5m]) answers
// each series' last raw sample in the range, at its scrape time.
func (s *Server) Query(q string) ([]Sample, error) {
	resp, err := http.Get(s.URL + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  []any             `json:"value"`  // a vector's sample
				Values [][]any           `json:"values"` // a matrix's samples, oldest first
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("decode the query's answer: %w", err)
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("query %q: %s", q, body.Error)
	}
	out := make([]Sample, 0, len(body.Data.Result))
	for _, r := range body.Data.Result {
		pair := r.Value
		if n := len(r.Values); n > 0 {
			pair = r.Values[n-1]
		}
		if len(pair) != 2 {
			return nil, fmt.Errorf("query %q: a sample is not [time, value]", q)
		}
		at, _ := pair[0].(float64)
		str, _ := pair[1].(string)
		v, err := strconv.ParseFloat(str, 64)
		if err != nil {
			return nil, fmt.Errorf("query %q: value %q: %w", q, str, err)
		}
		out = append(out, Sample{Labels: r.Metric, At: time.Unix(0, int64(at*1e9)), Value: v})
	}
	return out, nil
}

// WaitScraped polls q until it returns a series scraped at or after since
// (the hang guard: a minute), and returns its answer.
func (s *Server) WaitScraped(t testing.TB, q string, since time.Time) []Sample {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		// The raw samples of the last minutes, not the instant value: once
		// the endpoint is gone Prometheus marks the series stale, and an
		// instant query read after that finds nothing, however slow the
		// machine was to ask.
		samples, err := s.Query(q + "[10m]")
		if err == nil && len(samples) > 0 && !samples[0].At.Before(since.Truncate(time.Millisecond)) {
			return samples
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus has no sample of %s scraped after %s (last error %v)", q, since, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
