package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
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
	// servers are the host:port the command line (and env) names, each
	// replaced by a mock of its own built from mock (default: localhost:8000).
	servers []string
	// env is set for the run, its values' servers replaced as the args'.
	env    map[string]string
	trials bool              // it runs trials as subprocesses
	files  map[string]string // files the tutorial has the reader create first
	stdout []string          // what the console must show
	check  func(t *testing.T, dir string)
	// after, when set, checks the run with what each server became.
	after func(t *testing.T, dir string, servers map[string]tutorialServer)
}

// tutorialServer is the mock that stands for one server of a tutorial.
type tutorialServer struct {
	host     string   // its host:port
	requests int      // the inference requests (/v1/...) it answered
	bodies   []string // their bodies, sorted
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
			change: "--request-count 40 instead of 500",
			args: []string{"profile", "--model", "your-model", "--url", "localhost:8000", "--endpoint-type", "chat",
				"--streaming", "--concurrency", "100", "--warmup-concurrency", "20", "--warmup-request-count", "50",
				"--request-count", "40"},
			mock: mock.Config{Fast: true},
			check: func(t *testing.T, dir string) {
				exp := onlyExport(t, dir)
				assert.Equal(t, 40.0, metricAvg(t, exp, "request_count"))
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
			change: "the phase duration (0.3 s instead of 120 s) and the dataset entries (20 instead of 2000) (testdata/tutorial_isl_sweep.yaml)",
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
			change: "--url added (the tutorial relies on the default localhost:8000); --benchmark-duration 1.5 and --slice-duration 0.5 instead of 60 and 10",
			args: []string{"profile", "--model", "Qwen/Qwen3-0.6B", "--benchmark-duration", "1.5", "--slice-duration", "0.5",
				"--url", "localhost:8000"},
			mock: mock.Config{Fast: true},
			check: func(t *testing.T, dir string) {
				files, _ := filepath.Glob(filepath.Join(dir, "artifacts", "*", "profile_export_aiperf_timeslices.json"))
				require.Len(t, files, 1)
				slices := readJSON(t, files[0])["timeslices"].([]any)
				assert.GreaterOrEqual(t, len(slices), 3, "1.5 s in 0.5 s windows")
				csvs, _ := filepath.Glob(filepath.Join(dir, "artifacts", "*", "profile_export_aiperf_timeslices.csv"))
				assert.Len(t, csvs, 1)
			},
		},
		"HTTP trace timing on the console": {
			doc:    "docs/tutorials/http-trace-metrics.md (Enabling trace timing output)",
			change: "the tutorial's \"...\" is a model, --url, --streaming, --output-tokens-mean 16 and --request-count 20",
			args: []string{"profile", "--model", "Qwen/Qwen3-0.6B", "--url", "localhost:8000", "--streaming",
				"--output-tokens-mean", "16", "--request-count", "20", "--show-trace-timing"},
			mock:   mock.Config{TTFT: 5, ITL: 1},
			stdout: []string{"aiperf | HTTP Trace Timing", "HTTP Waiting (TTFB) (ms)", "HTTP Connection Reused (ratio)"},
			check: func(t *testing.T, dir string) {
				exp := onlyExport(t, dir)
				for _, tag := range []string{"http_req_blocked", "http_req_dns_lookup", "http_req_connecting", "http_req_sending",
					"http_req_waiting", "http_req_receiving", "http_req_duration", "http_req_connection_overhead", "http_req_total",
					"http_req_data_sent", "http_req_data_received", "http_req_connection_reused", "http_req_chunks_sent",
					"http_req_chunks_received"} {
					assert.Contains(t, exp, tag)
				}
				reused := 0.0
				for _, m := range jsonlMetrics(t, onlyFile(t, dir, "profile_export.jsonl")) {
					assert.LessOrEqual(t, m["http_req_waiting"], m["time_to_first_token"],
						"the first body byte comes no later than the first token")
					phases := m["http_req_blocked"] + m["http_req_dns_lookup"] + m["http_req_connecting"] + m["http_req_sending"] +
						m["http_req_waiting"] + m["http_req_receiving"]
					assert.InDelta(t, phases, m["http_req_total"], 1e-6, "the six phases add up")
					assert.Positive(t, m["http_req_data_sent"])
					reused += m["http_req_connection_reused"]
				}
				assert.GreaterOrEqual(t, reused, 19.0, "one request at a time: one connection, reused")
			},
		},
		"HTTP trace export": {
			doc:    "docs/tutorials/http-trace-metrics.md (Enabling HTTP Trace Export)",
			change: "the tutorial's \"...\" is a model, --url and --request-count 10",
			args:   []string{"profile", "--model", "Qwen/Qwen3-0.6B", "--url", "localhost:8000", "--request-count", "10", "--export-http-trace"},
			mock:   mock.Config{Fast: true},
			check:  checkTraceData(10),
		},
		"HTTP trace export with records": {
			doc:    "docs/tutorials/http-trace-metrics.md (Export Levels: Example with both flags)",
			change: "the tutorial's \"...\" is a model, --url and --request-count 10",
			args: []string{"profile", "--model", "Qwen/Qwen3-0.6B", "--url", "localhost:8000", "--request-count", "10",
				"--export-level", "records", "--export-http-trace"},
			mock:  mock.Config{Fast: true},
			check: checkTraceData(10),
		},
		"multi-URL round robin": {
			doc:     "docs/tutorials/multi-url-load-balancing.md (Usage: Round-robin across two servers)",
			change:  "--request-count 20 instead of 100",
			args:    []string{"profile", "--model", "llama", "--url", "http://server1:8000", "--url", "http://server2:8000", "--request-rate", "20", "--request-count", "20"},
			mock:    mock.Config{Fast: true},
			servers: []string{"server1:8000", "server2:8000"},
			after: func(t *testing.T, dir string, at map[string]tutorialServer) {
				assert.Equal(t, 20.0, metricAvg(t, onlyExport(t, dir), "request_count"))
				assert.Equal(t, 10, at["server1:8000"].requests, "round robin: half each")
				assert.Equal(t, 10, at["server2:8000"].requests)
			},
		},
		"multi-URL on one node": {
			doc:    "docs/tutorials/multi-url-load-balancing.md (Usage: Multi-GPU scaling on a single node)",
			change: "--benchmark-duration 1 instead of 60",
			args: []string{"profile", "--model", "llama", "--url", "http://localhost:8000", "--url", "http://localhost:8001",
				"--url", "http://localhost:8002", "--url", "http://localhost:8003", "--concurrency", "32", "--benchmark-duration", "1"},
			mock:    mock.Config{TTFT: 20, ITL: 1},
			servers: []string{"localhost:8000", "localhost:8001", "localhost:8002", "localhost:8003"},
			after: func(t *testing.T, dir string, at map[string]tutorialServer) {
				lo, hi := at["localhost:8000"].requests, at["localhost:8000"].requests
				for _, s := range at {
					lo, hi = min(lo, s.requests), max(hi, s.requests)
				}
				assert.Positive(t, lo)
				assert.LessOrEqual(t, hi-lo, 1, "round robin over four: counts differ by one at most (%v)", at)
			},
		},
		"multi-URL strategy": {
			doc:     "docs/tutorials/multi-url-load-balancing.md (URL Selection Strategy)",
			args:    []string{"profile", "--model", "llama", "--url", "http://server1:8000", "--url", "http://server2:8000", "--url-strategy", "round_robin", "--request-count", "100"},
			mock:    mock.Config{Fast: true},
			servers: []string{"server1:8000", "server2:8000"},
			after: func(t *testing.T, dir string, at map[string]tutorialServer) {
				assert.Equal(t, 50, at["server1:8000"].requests)
				assert.Equal(t, 50, at["server2:8000"].requests)
			},
		},
		"server metrics from several endpoints": {
			doc:    "docs/tutorials/server-metrics.md (Example Workflow: Benchmarking Dynamo, Run AIPerf with Server Metrics)",
			change: "--request-count 40 instead of 1000; the Dynamo frontend and component metrics (localhost:9007, localhost:9009) are two more mocks",
			args: []string{"profile", "--model", "meta-llama/Llama-3.1-8B", "--endpoint-type", "chat", "--endpoint", "/v1/chat/completions",
				"--url", "localhost:8000", "--streaming", "--synthetic-input-tokens-mean", "1024", "--output-tokens-mean", "640",
				"--concurrency", "100", "--request-count", "40", "--server-metrics", "http://localhost:9007/metrics", "http://localhost:9009/metrics"},
			mock:    mock.Config{Fast: true},
			servers: []string{"localhost:8000", "localhost:9007", "localhost:9009"},
			after: func(t *testing.T, dir string, at map[string]tutorialServer) {
				assert.Equal(t, 40.0, metricAvg(t, onlyExport(t, dir), "request_count"))
				files, _ := filepath.Glob(filepath.Join(dir, "artifacts", "*", "server_metrics_export.json"))
				require.Len(t, files, 1)
				b, err := os.ReadFile(files[0])
				require.NoError(t, err)
				for _, host := range []string{"localhost:8000", "localhost:9007", "localhost:9009"} {
					assert.Contains(t, string(b), "http://"+at[host].host+"/metrics", "%s scraped", host)
				}
			},
		},
		"bare --gpu-telemetry": {
			doc: "docs/tutorials/gpu-telemetry.md (1: Using Dynamo, Run AIPerf Benchmark)",
			change: "the default DCGM exporters are localhost:9400 (nothing there) and the mock's GPUs at localhost:9401, " +
				"through AIPerf's AIPERF_GPU_DEFAULT_DCGM_ENDPOINTS (the mock serves them at /dcgm/metrics)",
			args: []string{"profile", "--model", "Qwen/Qwen3-0.6B", "--endpoint-type", "chat", "--endpoint", "/v1/chat/completions",
				"--streaming", "--url", "localhost:8000", "--synthetic-input-tokens-mean", "100", "--synthetic-input-tokens-stddev", "0",
				"--output-tokens-mean", "200", "--output-tokens-stddev", "0", "--extra-inputs", "min_tokens:200",
				"--extra-inputs", "ignore_eos:true", "--concurrency", "4", "--request-count", "64", "--warmup-request-count", "1",
				"--num-dataset-entries", "8", "--random-seed", "100", "--gpu-telemetry"},
			mock:    mock.Config{Fast: true, GPUMetrics: true, GPUs: 1},
			servers: []string{"localhost:8000", "localhost:9401"},
			env:     map[string]string{"AIPERF_GPU_DEFAULT_DCGM_ENDPOINTS": "http://localhost:9400/metrics,http://localhost:9401/dcgm/metrics"},
			after: func(t *testing.T, dir string, at map[string]tutorialServer) {
				exp := onlyExport(t, dir)
				assert.Equal(t, 64.0, metricAvg(t, exp, "request_count"))
				assert.Contains(t, exp, "telemetry_data", "the mock's GPU, found at a default exporter")
				assert.Contains(t, fmt.Sprint(exp["telemetry_data"]), at["localhost:9401"].host)
				assert.NotContains(t, fmt.Sprint(exp["telemetry_data"]), "localhost:9400", "nothing there: left out")
			},
		},
	} {
		t.Run(name, func(t *testing.T) { c.run(t, isl) })
	}
}

// run runs the tutorial's command line in a fresh directory holding its
// files (and isl.yaml) against a mock for each of its servers, each at a new
// address, then its checks.
func (c tutorial) run(t *testing.T, isl []byte) {
	if c.trials {
		subprocesses(t)
	}
	servers := c.servers
	if servers == nil {
		servers = []string{"localhost:8000"}
	}
	at, swap := c.startServers(t, servers)
	dir := t.TempDir()
	writeFile(t, dir, "isl.yaml", swap.Replace(string(isl)))
	for name, content := range c.files {
		writeFile(t, dir, name, content)
	}
	args := make([]string, len(c.args))
	for i, a := range c.args {
		args[i] = swap.Replace(a)
	}
	for k, v := range c.env {
		t.Setenv(k, swap.Replace(v))
	}
	inv := cli(t, dir, args...)
	require.Equal(t, ExitOK, inv.code, "%s\nstdout:\n%s\nstderr:\n%s", c.doc, inv.stdout, inv.stderr)
	for _, want := range c.stdout {
		assert.Contains(t, inv.stdout, want)
	}
	if c.check != nil {
		c.check(t, dir)
	}
	if c.after != nil {
		c.after(t, dir, at())
	}
}

// startServers starts a mock for each server of the tutorial, counting the
// inference requests it answers, and returns what each server became (to
// read once the run is over) and the replacer of their addresses.
func (c tutorial) startServers(t *testing.T, servers []string) (func() map[string]tutorialServer, *strings.Replacer) {
	var pairs []string
	counts := make([]*atomic.Int64, len(servers))
	sent := make([]*bodies, len(servers))
	for i, host := range servers {
		n := &atomic.Int64{}
		counts[i], sent[i] = n, &bodies{}
		m := startMockBehind(t, c.mock, func(next http.Handler) http.Handler {
			return sent[i].wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasPrefix(r.URL.Path, "/v1/") {
					n.Add(1)
				}
				next.ServeHTTP(w, r)
			}))
		})
		u, err := url.Parse(m.URL)
		require.NoError(t, err)
		pairs = append(pairs, host, u.Host)
	}
	at := func() map[string]tutorialServer {
		out := map[string]tutorialServer{}
		for i, host := range servers {
			out[host] = tutorialServer{host: pairs[2*i+1], requests: int(counts[i].Load()), bodies: sent[i].sorted()}
		}
		return out
	}
	return at, strings.NewReplacer(pairs...)
}

// onlyExport is the JSON export of the one run under dir/artifacts.
func onlyExport(t *testing.T, dir string) map[string]any {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "artifacts", "*", "profile_export_aiperf.json"))
	require.Len(t, files, 1)
	return readJSON(t, files[0])
}

// onlyFile is the one file called name under dir/artifacts/*.
func onlyFile(t *testing.T, dir, name string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "artifacts", "*", name))
	require.Len(t, files, 1)
	return files[0]
}

// checkTraceData checks that each of the n lines of profile_export.jsonl
// has AIPerf's trace_data: its timestamps in order, the response's bytes
// as many as its reads add up to.
func checkTraceData(n int) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		b, err := os.ReadFile(onlyFile(t, dir, "profile_export.jsonl"))
		require.NoError(t, err)
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		require.Len(t, lines, n)
		for _, l := range lines {
			var line struct {
				Metadata struct {
					RequestStartNs int64 `json:"request_start_ns"`
				} `json:"metadata"`
				TraceData struct {
					TraceType      string     `json:"trace_type"`
					SendStart      int64      `json:"request_send_start_ns"`
					SendEnd        int64      `json:"request_send_end_ns"`
					ReceiveStart   int64      `json:"response_receive_start_ns"`
					ReceiveEnd     int64      `json:"response_receive_end_ns"`
					ResponseChunks [][2]int64 `json:"response_chunks"`
					ResponseBytes  int64      `json:"response_bytes_total"`
					Status         int        `json:"response_status_code"`
					RemotePort     int        `json:"remote_port"`
				} `json:"trace_data"`
			}
			require.NoError(t, json.Unmarshal([]byte(l), &line))
			td := line.TraceData
			assert.Equal(t, "httptrace", td.TraceType)
			assert.Equal(t, 200, td.Status)
			assert.Positive(t, td.RemotePort)
			assert.LessOrEqual(t, line.Metadata.RequestStartNs, td.SendStart, "wall clock, as the metadata")
			assert.Less(t, td.SendStart, td.SendEnd)
			assert.LessOrEqual(t, td.ReceiveStart, td.ReceiveEnd)
			var sum int64
			for _, c := range td.ResponseChunks {
				sum += c[1]
			}
			assert.Equal(t, td.ResponseBytes, sum)
		}
	}
}
