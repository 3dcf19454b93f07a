package main

import (
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// tutorial is a command line of AIPerf's own documentation (ai-dynamo/aiperf),
// run unchanged against the mock: localhost:8000 becomes the mock's
// address, and where the tutorial runs for minutes a shorter duration or
// count is used (said in change).
type tutorial struct {
	doc    string // where the command is published
	change string // what differs from it, besides the address
	args   []string
	mock   mock.Config
	trials bool              // it runs trials as subprocesses
	files  map[string]string // files the tutorial has the reader create first
	check  func(t *testing.T, dir string)
}

// TestAIPerfTutorials runs the command lines of AIPerf's tutorials as an
// AIPerf user would type them and checks that each did what its tutorial
// says.
func TestAIPerfTutorials(t *testing.T) {
	isl, err := os.ReadFile(filepath.Join("testdata", "tutorial_isl_sweep.yaml"))
	require.NoError(t, err)
	for name, c := range map[string]tutorial{
		"goodput": {
			doc: "docs/tutorials/goodput.md (Run AIPerf with Goodput Constraints)",
			args: []string{"profile", "-m", "Qwen/Qwen3-0.6B", "--endpoint-type", "chat", "--streaming",
				"--url", "localhost:8000", "--request-count", "20",
				"--goodput", "time_to_first_token:100 inter_token_latency:3.40"},
			mock: mock.Config{TTFT: 5, ITL: 0.1},
			check: func(t *testing.T, dir string) {
				exp := onlyExport(t, dir)
				assert.Equal(t, 20.0, metricAvg(t, exp, "request_count"))
				good := metricAvg(t, exp, "good_request_count")
				assert.Positive(t, good, "TTFT 5 ms and ITL 0.1 ms meet both objectives")
				assert.LessOrEqual(t, good, 20.0)
				assert.Positive(t, metricAvg(t, exp, "goodput"))
			},
		},
		"warmup with its own concurrency": {
			doc:    "docs/tutorials/warmup.md (Warmup-Specific Load Settings: Different Concurrency)",
			change: "--request-count 100 instead of 500",
			args: []string{"profile", "--model", "your-model", "--url", "localhost:8000", "--endpoint-type", "chat",
				"--streaming", "--concurrency", "100", "--warmup-concurrency", "20", "--warmup-request-count", "50",
				"--request-count", "100"},
			mock: mock.Config{Fast: true},
			check: func(t *testing.T, dir string) {
				exp := onlyExport(t, dir)
				assert.Equal(t, 100.0, metricAvg(t, exp, "request_count"))
				warm := exp["warmup_metrics"].(map[string]any)
				assert.Equal(t, 50.0, metricAvg(t, warm, "request_count"))
			},
		},
		"multi-run with --num-prompts": {
			doc:    "docs/tutorials/multi-run-confidence.md (Simple Multi-Run Benchmark)",
			change: "--num-prompts 100 instead of 1000",
			args: []string{"profile", "--model", "llama-3-8b", "--endpoint-type", "chat",
				"--url", "http://localhost:8000/v1/chat/completions", "--num-profile-runs", "5", "--concurrency", "10",
				"--num-prompts", "100"},
			mock:   mock.Config{Fast: true},
			trials: true,
			check: func(t *testing.T, dir string) {
				runs, _ := filepath.Glob(filepath.Join(dir, "artifacts", "*", "profile_runs", "run_000?", "profile_export_aiperf.json"))
				assert.Len(t, runs, 5)
				agg, _ := filepath.Glob(filepath.Join(dir, "artifacts", "*", "aggregate", "profile_export_aiperf_aggregate.json"))
				assert.Len(t, agg, 1)
			},
		},
		"request cancellation": {
			doc: "docs/tutorials/request-cancellation.md (Immediate Cancellation Testing (Delay = 0))",
			args: []string{"profile", "--model", "Qwen/Qwen3-0.6B", "--endpoint-type", "chat",
				"--endpoint", "/v1/chat/completions", "--streaming", "--url", "localhost:8000",
				"--request-cancellation-rate", "30", "--request-cancellation-delay", "0.0",
				"--synthetic-input-tokens-mean", "500", "--output-tokens-mean", "100", "--concurrency", "15",
				"--request-count", "60"},
			mock: mock.Config{TTFT: 20, ITL: 1},
			check: func(t *testing.T, dir string) {
				exp := onlyExport(t, dir)
				cancelled := metricAvg(t, exp, "cancelled_request_count")
				assert.InDelta(t, 18, cancelled, 12, "about 30% of 60 aborted")
				assert.Equal(t, 60.0, cancelled+metricAvg(t, exp, "request_count"))
			},
		},
		"comma-list concurrency sweep": {
			doc:    "docs/tutorials/parameter-sweeping.md (Simple Concurrency Sweep)",
			change: "--num-prompts 100 instead of 1000",
			args: []string{"profile", "--model", "llama-3-8b", "--endpoint-type", "chat",
				"--url", "http://localhost:8000/v1/chat/completions", "--concurrency", "10,20,30,40", "--num-prompts", "100"},
			mock:   mock.Config{Fast: true},
			trials: true,
			check: func(t *testing.T, dir string) {
				for _, c := range []string{"10", "20", "30", "40"} {
					cells, _ := filepath.Glob(filepath.Join(dir, "artifacts", "*", "concurrency_"+c, "profile_export_aiperf.json"))
					assert.Len(t, cells, 1, "concurrency %s", c)
				}
			},
		},
		"YAML sweep": {
			doc:    "docs/tutorials/sweeps.md @ cc2e9c4 (Sweep + Distributions: Sweep ISL Across Fixed Values)",
			change: "the phase duration (1 s instead of 120 s) and the dataset entries (20 instead of 2000) (testdata/tutorial_isl_sweep.yaml)",
			args:   []string{"profile", "--config", "isl.yaml"},
			mock:   mock.Config{Fast: true},
			trials: true,
			check: func(t *testing.T, dir string) {
				for _, isl := range []int{128, 512, 2048} {
					cell := filepath.Join(dir, "artifacts", "isl_sweep", "isl_"+strconv.Itoa(isl))
					exp := readJSON(t, filepath.Join(cell, "profile_export_aiperf.json"))
					assert.Equal(t, float64(isl), metricAvg(t, exp, "input_sequence_length"))
					assert.NoFileExists(t, filepath.Join(cell, "profile_export_aiperf.csv"), "summary: [json]")
				}
			},
		},
		"user-centric rate": {
			doc:    "docs/tutorials/user-centric-timing.md (High Throughput Cache Test)",
			change: "--benchmark-duration 4 instead of 100, --num-dataset-entries 16 instead of 1000, --user-context-prompt-length 2000 instead of 20000",
			args: []string{"profile", "--model", "Qwen/Qwen3-0.6B", "--url", "localhost:8000", "--endpoint-type", "chat",
				"--streaming", "--user-centric-rate", "4.0", "--num-users", "15", "--session-turns-mean", "20",
				"--shared-system-prompt-length", "1000", "--user-context-prompt-length", "2000",
				"--synthetic-input-tokens-mean", "26", "--osl", "100", "--num-dataset-entries", "16",
				"--benchmark-duration", "4"},
			mock: mock.Config{Fast: true},
			check: func(t *testing.T, dir string) {
				exp := onlyExport(t, dir)
				n := metricAvg(t, exp, "request_count")
				assert.InDelta(t, 16, n, 3, "4 requests/s for 4 s")
				assert.Equal(t, "user_centric", exp["client_audit"].(map[string]any)["mode"])
			},
		},
		"timeslices": {
			doc:    "docs/tutorials/timeslices.md (Simple Time Slicing Example)",
			change: "--url added (the tutorial relies on the default localhost:8000); --benchmark-duration 3 and --slice-duration 1 instead of 60 and 10",
			args: []string{"profile", "--model", "Qwen/Qwen3-0.6B", "--benchmark-duration", "3", "--slice-duration", "1",
				"--url", "localhost:8000"},
			mock: mock.Config{Fast: true},
			check: func(t *testing.T, dir string) {
				files, _ := filepath.Glob(filepath.Join(dir, "artifacts", "*", "profile_export_aiperf_timeslices.json"))
				require.Len(t, files, 1)
				slices := readJSON(t, files[0])["timeslices"].([]any)
				assert.GreaterOrEqual(t, len(slices), 3, "3 s in 1 s windows")
				csvs, _ := filepath.Glob(filepath.Join(dir, "artifacts", "*", "profile_export_aiperf_timeslices.csv"))
				assert.Len(t, csvs, 1)
			},
		},
	} {
		t.Run(name, func(t *testing.T) { c.run(t, isl) })
	}
}

// run runs the tutorial's command line in a fresh directory holding its
// files (and isl.yaml) against a mock at a new address, then its check.
func (c tutorial) run(t *testing.T, isl []byte) {
	if c.trials {
		subprocesses(t)
	}
	m := startMock(t, c.mock)
	u, err := url.Parse(m.URL)
	require.NoError(t, err)
	dir := t.TempDir()
	writeFile(t, dir, "isl.yaml", strings.ReplaceAll(string(isl), "localhost:8000", u.Host))
	for name, content := range c.files {
		writeFile(t, dir, name, content)
	}
	args := make([]string, len(c.args))
	for i, a := range c.args {
		args[i] = strings.ReplaceAll(a, "localhost:8000", u.Host)
	}
	inv := cli(t, dir, args...)
	require.Equal(t, ExitOK, inv.code, "%s\nstdout:\n%s\nstderr:\n%s", c.doc, inv.stdout, inv.stderr)
	c.check(t, dir)
}

// onlyExport is the JSON export of the one run under dir/artifacts.
func onlyExport(t *testing.T, dir string) map[string]any {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "artifacts", "*", "profile_export_aiperf.json"))
	require.Len(t, files, 1)
	return readJSON(t, files[0])
}
