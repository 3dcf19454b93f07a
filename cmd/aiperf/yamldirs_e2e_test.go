package main

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// yamlLoad is a config file of model m at url whose dataset and phases
// are these YAML lines, with a sweep: when sweep is not empty.
func yamlLoad(url, dataset, phases, sweep string) string {
	s := fmt.Sprintf("schemaVersion: \"2.0\"\nbenchmark:\n  model: m\n  endpoint:\n    url: %s\n%s%s", url, dataset, phases)
	if sweep != "" {
		s += "sweep:\n  type: grid\n  parameters:\n" + sweep
	}
	return s
}

// TestYAMLLoadNamesItsDirectoryAsFlags: a config file's load lands in the
// directory the same load given by flags does, AIPerf's name of it (it was
// request_rate10 for request_rate10.0, request_rate_sweep_10_20 for
// request_rate_sweep_10.0_20.0, and a replayed trace concurrency1, sharing
// a concurrency-1 run's directory).
func TestYAMLLoadNamesItsDirectoryAsFlags(t *testing.T) {
	subprocesses(t)         // the rate sweep's trials
	tok := tinyTokenizer(t) // for them
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	synthetic := "  dataset:\n    type: synthetic\n    prompts: {isl: 16, osl: 4}\n"
	rate := "  phases:\n    - name: profiling\n      type: poisson\n      rate: 10\n      requests: 3\n"
	trace := "  dataset:\n    type: file\n    format: mooncake_trace\n    records:\n" +
		"      - {timestamp: 0, input_length: 20, output_length: 4}\n      - {timestamp: 100, input_length: 20, output_length: 4}\n"
	writeFile(t, dir, "t.jsonl", `{"timestamp": 0, "input_length": 20, "output_length": 4}`+"\n"+
		`{"timestamp": 100, "input_length": 20, "output_length": 4}`+"\n")
	for _, tc := range []struct {
		name, yaml string
		flags      []string
		want       string
	}{
		{"a rate", yamlLoad(m.URL, synthetic, rate, ""), []string{"--request-rate", "10", "--request-count", "3"}, "request_rate10.0"},
		{"a capped rate", yamlLoad(m.URL, synthetic, rate+"      concurrency: 2\n", ""),
			[]string{"--request-rate", "10", "--concurrency", "2", "--request-count", "3"}, "concurrency2-request_rate10.0"},
		{"a rate sweep", yamlLoad(m.URL, synthetic, rate, "    rate: [10, 20]\n"),
			[]string{"--request-rate", "10,20", "--request-count", "3", "--tokenizer", tok}, "request_rate_sweep_10.0_20.0"},
		{"a fixed schedule", yamlLoad(m.URL, trace, "  phases:\n    type: fixed_schedule\n    auto_offset: true\n", ""),
			[]string{"--input-file", "t.jsonl", "--custom-dataset-type", "mooncake_trace", "--fixed-schedule"}, "fixed_schedule"},
	} {
		want := filepath.Join("artifacts", "m-openai-chat-"+tc.want)
		writeFile(t, dir, "load.yaml", tc.yaml)
		inv := cli(t, dir, "config", "expand", "load.yaml")
		require.Equal(t, ExitOK, inv.code, "%s: %s", tc.name, inv.stderr)
		assert.Contains(t, inv.stdout, "into "+want+"\n", tc.name)

		inv = cli(t, dir, append([]string{"profile", "-m", "m", "-u", m.URL, "--isl", "16", "--osl", "4", "--ui", "none",
			"--no-store"}, tc.flags...)...)
		require.Equal(t, ExitOK, inv.code, "%s: %s", tc.name, inv.stderr)
		assert.DirExists(t, filepath.Join(dir, want), "%s: the flags' directory", tc.name)
	}
}
