package main

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// yamlDoc is a YAML example of AIPerf's documentation, run from its
// verbatim copy under internal/config/testdata/aiperf_docs as AIPerf's
// user would: aiperf profile --config FILE. The test changes the text only
// as subs say (localhost:8000 always becomes the mock's address), and says
// why in change.
type yamlDoc struct {
	doc    string      // where the YAML is published: file @ commit (section)
	file   string      // its copy, under aiperf_docs
	change string      // what differs from the published text, besides the address
	subs   [][2]string // old, new: text replacements made before the run
	args   []string    // after profile --config FILE (flags a snippet needs)
	env    map[string]string
	trials bool // it runs trials as subprocesses
	exit   int  // the exit code the doc's example must give (ExitOK unless refused)
	check  func(t *testing.T, dir string, inv invocation, m *mockServer)
}

// docTokenizer is the flag that makes a doc's cells quick to run: a tiny
// tokenizer instead of the 200k-token default (which takes seconds to load
// under -race, in every trial's process).
func docTokenizer(t *testing.T) []string { return []string{"--tokenizer", tinyTokenizer(t)} }

// runYAMLDoc runs one example against a fresh mock in a fresh directory.
func runYAMLDoc(t *testing.T, c yamlDoc) {
	if c.trials {
		subprocesses(t)
	}
	m := startMock(t, mock.Config{Fast: true})
	u, err := url.Parse(m.URL)
	require.NoError(t, err)
	for k, v := range c.env {
		t.Setenv(k, strings.ReplaceAll(v, "localhost:8000", u.Host))
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "internal", "config", "testdata", "aiperf_docs", c.file))
	require.NoError(t, err)
	text := strings.ReplaceAll(string(b), "localhost:8000", u.Host)
	for _, s := range c.subs {
		require.Contains(t, text, s[0], "the substitution must apply")
		text = strings.ReplaceAll(text, s[0], s[1])
	}
	args := append([]string{"profile", "--config", filepath.Base(c.file)}, c.args...)
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, "localhost:8000", u.Host)
	}
	args = append(args, docTokenizer(t)...)
	dir := t.TempDir()
	writeFile(t, dir, filepath.Base(c.file), text)
	inv := cli(t, dir, args...)
	require.Equal(t, c.exit, inv.code, "%s\nstdout:\n%s\nstderr:\n%s", c.doc, inv.stdout, inv.stderr)
	c.check(t, dir, inv, m)
}

// cellExport is the JSON export of the one run under dir matching the
// glob pattern (relative to dir).
func cellExport(t *testing.T, dir, pattern string) map[string]any {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, pattern, "profile_export_aiperf.json"))
	require.Len(t, files, 1, pattern)
	return readJSON(t, files[0])
}

// phasesRun are the phases a run's export says it ran.
func phasesRun(t *testing.T, export map[string]any) []map[string]any {
	t.Helper()
	cfg := export["input_config"].(map[string]any)["aiperf_go"].(map[string]any)
	var out []map[string]any
	for _, p := range cfg["phases"].([]any) {
		out = append(out, p.(map[string]any))
	}
	return out
}

// TestYAMLConfigDoc runs the YAML examples of AIPerf's current
// docs/tutorials/yaml-config.md (ai-dynamo/aiperf @ 727339f) against the
// mock: each reads as written and does what the tutorial says; the one
// whose feature is not implemented yet is refused before any traffic.
func TestYAMLConfigDoc(t *testing.T) {
	const doc = "docs/tutorials/yaml-config.md @ 727339f"
	snippet := []string{"--model", "meta-llama/Llama-3.1-8B-Instruct", "--url", "localhost:8000"}
	for name, c := range map[string]yamlDoc{
		"why": {doc: doc + " (Why use a YAML config?: benchmark.yaml)", file: "yaml-config/benchmark.yaml", trials: true,
			change: "60 profiling requests instead of 500 (each of 4 cells streams them under -race) and 20 dataset entries instead of 500",
			subs:   [][2]string{{"requests: 500}", "requests: 60}"}, {"entries: 500", "entries: 20"}},
			check: func(t *testing.T, dir string, _ invocation, _ *mockServer) {
				for _, c := range []string{"8", "16", "32", "64"} {
					exp := cellExport(t, dir, "artifacts/my-test/concurrency_"+c)
					assert.Equal(t, 60.0, metricAvg(t, exp, "request_count"), "phases.profiling.requests; the warmup's 50 apart")
					assert.Len(t, phasesRun(t, exp), 2)
				}
			}},
		"minimal": {doc: doc + " (Your first config: minimal.yaml)", file: "yaml-config/minimal.yaml",
			check: func(t *testing.T, dir string, _ invocation, _ *mockServer) {
				assert.Equal(t, 100.0, metricAvg(t, onlyExport(t, dir), "request_count"))
			}},
		"shorthand": {doc: doc + " (Shorthand vs named forms: shorthand)", file: "yaml-config/shorthand.yaml",
			change: "--url given: the snippet has no endpoint", args: []string{"--url", "localhost:8000"},
			check: func(t *testing.T, dir string, _ invocation, _ *mockServer) {
				assert.Equal(t, 100.0, metricAvg(t, onlyExport(t, dir), "request_count"))
			}},
		"named": {doc: doc + " (Shorthand vs named forms: named)", file: "yaml-config/named.yaml",
			change: "--url given (no endpoint in the snippet); duration 0.5 s instead of 120", args: []string{"--url", "localhost:8000"},
			subs: [][2]string{{"duration: 120", "duration: 0.5"}},
			check: func(t *testing.T, dir string, _ invocation, m *mockServer) {
				exp := onlyExport(t, dir)
				assert.Positive(t, metricAvg(t, exp, "request_count"))
				assert.Equal(t, 0.0, metricAvg(t, exp, "error_request_count"))
				assert.Greater(t, m.control().InferenceRequests, 50, "the 50 warmup requests came first")
			}},
		"phase names and kinds": {doc: doc + " (Phase names and kinds)", file: "yaml-config/phase_kinds.yaml",
			change: "--model and --url given (the snippet has neither); each duration 0.3s instead of 5m or 30m",
			args:   snippet, subs: [][2]string{{"duration: 5m", "duration: 0.3s"}, {"duration: 30m", "duration: 0.3s"}},
			check: func(t *testing.T, dir string, _ invocation, _ *mockServer) {
				exp := onlyExport(t, dir)
				assert.Len(t, phasesRun(t, exp), 4)
				assert.Positive(t, metricAvg(t, exp, "cancelled_request_count"), "cancellation_stress aborts half its requests")
			}},
		"inline datasets": {doc: doc + " (Inline datasets)", file: "yaml-config/inline_dataset.yaml", args: snippet,
			change: "--model and --url given (the snippet has neither)",
			check: func(t *testing.T, dir string, _ invocation, m *mockServer) {
				exp := onlyExport(t, dir)
				assert.Equal(t, 10.0, metricAvg(t, exp, "request_count"), "no phases: aiperf profile's defaults")
				files, _ := filepath.Glob(filepath.Join(dir, "artifacts", "*", "inline_records_*.jsonl"))
				require.Len(t, files, 1, "the records are kept with the run's artifacts")
				b, err := os.ReadFile(files[0])
				require.NoError(t, err)
				assert.Equal(t, "{\"text\":\"What is machine learning?\"}\n{\"output_length\":200,\"text\":\"Explain GANs.\"}\n", string(b))
				assert.Equal(t, 10, m.control().InferenceRequests)
			}},
		"environment variables": {doc: doc + " (Substituting environment variables)", file: "yaml-config/env_vars.yaml",
			env:    map[string]string{"INFERENCE_URL": "http://localhost:8000/v1/chat/completions", "OPENAI_API_KEY": "sk-yaml-doc-secret"},
			change: "INFERENCE_URL and OPENAI_API_KEY set in the environment, as the tutorial's command line does",
			check: func(t *testing.T, dir string, _ invocation, _ *mockServer) {
				assert.Equal(t, 10.0, metricAvg(t, onlyExport(t, dir), "request_count"), "no phases: aiperf profile's defaults")
				assertNoSecretUnder(t, dir, "sk-yaml-doc-secret")
			}},
		"variables": {doc: doc + " (Reusable values and computed expressions)", file: "yaml-config/variables.yaml",
			change: "--model and --url given (the snippet has neither); test_duration 4 instead of 120 (the duration, and a 1 s ramp)",
			args:   snippet, subs: [][2]string{{"test_duration: 120", "test_duration: 4"}},
			check: func(t *testing.T, dir string, _ invocation, _ *mockServer) {
				phases := phasesRun(t, onlyExport(t, dir))
				require.Len(t, phases, 2)
				assert.Equal(t, 8.0, phases[0]["concurrency"], "{{ base_concurrency // 2 }}")
				assert.Equal(t, 80.0, phases[0]["requests"], "{{ base_concurrency * 5 }}")
				assert.Equal(t, 64.0, phases[1]["concurrency"])
				assert.Equal(t, "gamma", phases[1]["rate_mode"])
				assert.Equal(t, 1.0, phases[1]["request_rate_ramp_duration"], "{{ test_duration // 4 }}")
			}},
		"multiple phases": {doc: doc + " (Multiple phases in one file)", file: "yaml-config/multiple_phases.yaml",
			change: "--model and --url given (the snippet has neither); duration 0.5 instead of 120",
			args:   snippet, subs: [][2]string{{"duration: 120", "duration: 0.5"}},
			check: func(t *testing.T, dir string, _ invocation, _ *mockServer) {
				phases := phasesRun(t, onlyExport(t, dir))
				require.Len(t, phases, 2)
				assert.Equal(t, 60.0, phases[1]["grace_period"])
			}},
		"grid sweep": {doc: doc + " (Sweeps in YAML)", file: "yaml-config/grid_sweep.yaml", trials: true,
			change: "duration 0.1 instead of 120 (a rate phase's first request goes at once) and 20 dataset entries instead of 500",
			subs:   [][2]string{{"duration: 120", "duration: 0.1"}, {"entries: 500", "entries: 20"}},
			check: func(t *testing.T, dir string, _ invocation, _ *mockServer) {
				for _, isl := range []int{128, 512, 2048} {
					for _, rate := range []string{"10", "30", "50"} {
						exp := cellExport(t, dir, fmt.Sprintf("artifacts/*/isl_%d__rate_%s", isl, rate))
						assert.Equal(t, float64(isl), metricAvg(t, exp, "input_sequence_length"))
					}
				}
			}},
	} {
		t.Run(name, func(t *testing.T) { runYAMLDoc(t, c) })
	}
}

// assertNoSecretUnder fails when any file under dir holds secret.
func assertNoSecretUnder(t *testing.T, dir, secret string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err == nil {
			assert.NotContains(t, string(b), secret, path)
		}
		return nil
	}))
}

// TestSweepsDoc runs the YAML examples of AIPerf's current
// docs/tutorials/sweeps.md (ai-dynamo/aiperf @ cc2e9c4) against the mock:
// every cell and trial in AIPerf's layout, with what the tutorial says
// each varies. (Its ISL grid runs in TestAIPerfTutorials; its snippets
// are read in internal/config's TestAIPerfSweepSnippets.)
func TestSweepsDoc(t *testing.T) {
	const doc = "docs/tutorials/sweeps.md @ cc2e9c4"
	// A rate phase sends its first request at once: 0.1 s gives every cell
	// a request, all these checks need (the scenarios' averages need more).
	short := [][2]string{{"duration: 120", "duration: 0.1"}, {"entries: 2000", "entries: 10"}}
	const shortened = "each phase 0.1 s instead of 120 and 10 dataset entries instead of 2000"
	for name, c := range map[string]yamlDoc{
		"grid": {doc: doc + " (Example: Sweep Concurrency x Rate to Find Saturation)", file: "sweeps/saturation.yaml",
			trials: true, change: shortened, subs: short,
			check: func(t *testing.T, dir string, _ invocation, _ *mockServer) {
				for _, c := range []string{"8", "32", "64", "128"} {
					for _, r := range []string{"10", "50", "100"} {
						cell := filepath.Join(dir, "artifacts", "saturation_sweep", "concurrency_"+c+"__rate_"+r)
						assert.FileExists(t, filepath.Join(cell, "profile_export_aiperf.json"))
						assert.NoFileExists(t, filepath.Join(cell, "profile_export_aiperf.csv"), "summary: [json]")
					}
				}
			}},
		"zip": {doc: doc + " (Example: Paired ISL/OSL)", file: "sweeps/zip.yaml", trials: true, change: shortened, subs: short,
			check: func(t *testing.T, dir string, _ invocation, _ *mockServer) {
				for _, pair := range [][2]int{{128, 128}, {512, 256}, {2048, 512}} {
					exp := cellExport(t, dir, fmt.Sprintf("artifacts/isl_osl_pairs/isl_%d__osl_%d", pair[0], pair[1]))
					assert.Equal(t, float64(pair[0]), metricAvg(t, exp, "input_sequence_length"))
				}
			}},
		"scenarios": {doc: doc + " (Example: Compare Workload Profiles)", file: "sweeps/scenarios.yaml", trials: true,
			change: "each phase 0.3 s instead of 120 (a few requests a cell for the ISL averages) and 10 dataset entries instead of 2000",
			subs:   [][2]string{{"duration: 120", "duration: 0.3"}, {"entries: 2000", "entries: 10"}},
			check: func(t *testing.T, dir string, _ invocation, _ *mockServer) {
				for name, isl := range map[string]float64{"short_chatbot": 64, "summarization": 2048, "long_context_qa": 8192} {
					exp := cellExport(t, dir, "artifacts/workload_comparison/"+name)
					assert.InEpsilon(t, isl, metricAvg(t, exp, "input_sequence_length"), 0.2, name)
					assert.Equal(t, 0.3, phasesRun(t, exp)[0]["duration"], "the base's duration is inherited")
				}
			}},
		"paired scenarios": {doc: doc + " (Paired ISL/OSL via Scenarios)", file: "sweeps/isl_osl_scenarios.yaml", trials: true,
			change: shortened, subs: short,
			check: func(t *testing.T, dir string, _ invocation, _ *mockServer) {
				for name, isl := range map[string]float64{"short": 128, "medium": 256, "long": 512} {
					exp := cellExport(t, dir, "artifacts/isl_osl_pairs/"+name)
					assert.Equal(t, isl, metricAvg(t, exp, "input_sequence_length"), name)
				}
			}},
		"sweep and multi-run": {doc: doc + " (Example: 3 Concurrency Levels x 3 Runs = 9 Total)", file: "sweeps/sweep_multi_run.yaml",
			trials: true, change: shortened + "; no cooldown instead of 5 s", subs: append(short, [2]string{"cooldown_seconds: 5.0", "cooldown_seconds: 0"}),
			check: func(t *testing.T, dir string, _ invocation, _ *mockServer) {
				base := filepath.Join(dir, "artifacts", "concurrency_confidence")
				for _, c := range []string{"16", "64", "128"} {
					for n, phases := range map[string]int{"1": 2, "2": 1, "3": 1} { // disable_warmup_after_first
						exp := cellExport(t, base, "profile_runs/trial_000"+n+"/concurrency_"+c)
						assert.Len(t, phasesRun(t, exp), phases, "trial %s of concurrency %s", n, c)
					}
					assert.FileExists(t, filepath.Join(base, "aggregate", "concurrency_"+c, "profile_export_aiperf_aggregate.json"))
				}
			}},
		"environment variables in sweeps": {doc: doc + " (Environment Variables in Sweeps)", file: "sweeps/env_sweep.yaml", trials: true,
			change: shortened + "; no cooldown instead of 5 s", subs: append(short, [2]string{"cooldown_seconds: 5.0", "cooldown_seconds: 0"}),
			check: func(t *testing.T, dir string, _ invocation, _ *mockServer) {
				files, _ := filepath.Glob(filepath.Join(dir, "artifacts", "*", "profile_runs", "trial_000*", "concurrency_*", "profile_export_aiperf.json"))
				assert.Len(t, files, 12, "4 concurrencies x 3 runs")
			}},
	} {
		t.Run(name, func(t *testing.T) { runYAMLDoc(t, c) })
	}
}

// TestOlderSweepsDoc runs examples of sweeps.md before AIPerf's envelope
// (ai-dynamo/aiperf @ 394d85d: top-level models, endpoint.urls, a named
// datasets: list, phases naming their dataset, sweep.variables): they
// still run, with a note naming the shape and how to migrate. (The others
// read as their current twins: internal/config's
// TestAIPerfOlderDocsReadAsTheirTwins.)
func TestOlderSweepsDoc(t *testing.T) {
	const doc = "docs/tutorials/sweeps.md @ 394d85d"
	short := [][2]string{{"duration: 120", "duration: 0.3"}, {"entries: 2000", "entries: 50"}}
	for name, c := range map[string]yamlDoc{
		"scenarios": {doc: doc + " (Example: Compare Workload Profiles)", file: "sweeps-flat/scenarios.yaml", trials: true,
			change: "each phase 0.3 s instead of 120 and 50 dataset entries instead of 2000", subs: short,
			check: func(t *testing.T, dir string, inv invocation, _ *mockServer) {
				assert.Regexp(t, "note: .*scenarios.yaml: read as AIPerf's pre-envelope flat shape", inv.stderr)
				assert.Regexp(t, "`aiperf config migrate .*scenarios.yaml` rewrites the file", inv.stderr)
				for name, isl := range map[string]float64{"short_chatbot": 64, "summarization": 2048, "long_context_qa": 8192} {
					exp := cellExport(t, dir, "artifacts/workload_comparison/"+name)
					assert.InEpsilon(t, isl, metricAvg(t, exp, "input_sequence_length"), 0.2, name)
				}
			}},
		"isl grid": {doc: doc + " (Example: Sweep ISL Across Fixed Values)", file: "sweeps-flat/isl_grid.yaml", trials: true,
			change: "each phase 0.3 s instead of 120 and 50 dataset entries instead of 2000", subs: short,
			check: func(t *testing.T, dir string, _ invocation, _ *mockServer) {
				for _, isl := range []int{128, 512, 2048} {
					exp := cellExport(t, dir, fmt.Sprintf("artifacts/isl_sweep/isl_%d", isl))
					assert.Equal(t, float64(isl), metricAvg(t, exp, "input_sequence_length"))
				}
			}},
	} {
		t.Run(name, func(t *testing.T) { runYAMLDoc(t, c) })
	}
}
