package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/search"
	"github.com/aiperf-go/aiperf/runner"
)

// TestConfigCommandsDoc runs the config command lines of yaml-config.md
// (ai-dynamo/aiperf @ 727339f: "Your first config", "Sweeps in YAML", "CLI
// helpers for working with configs") unchanged, then profiles the file
// config init wrote; and config migrate on an older file (AIPerf's
// migrating-config.md, whose script this command is).
func TestConfigCommandsDoc(t *testing.T) {
	tokenizer := tinyTokenizer(t)
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	grid, err := os.ReadFile(filepath.Join("..", "..", "internal", "config", "testdata", "aiperf_docs", "yaml-config", "grid_sweep.yaml"))
	require.NoError(t, err)
	writeFile(t, dir, "sweep.yaml", string(grid))

	inv := cli(t, dir, "config", "init", "--template", "minimal", "--output", "minimal.yaml")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.FileExists(t, filepath.Join(dir, "minimal.yaml"))
	inv = cli(t, dir, "config", "init", "--template", "minimal", "--output", "minimal.yaml")
	assert.Equal(t, ExitUsage, inv.code, "an existing file is never overwritten")
	assert.Contains(t, inv.stderr, "minimal.yaml exists: it is left as it is")

	inv = cli(t, dir, "config", "init", "--list")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	for _, cat := range []string{"Getting Started", "Load Testing", "Sweep & Multi-Run", "Advanced"} {
		assert.Contains(t, inv.stdout, cat)
	}
	inv = cli(t, dir, "config", "init", "--search", "sweep")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stdout, "sweep_distributions")
	assert.NotContains(t, inv.stdout, "minimal")

	inv = cli(t, dir, "config", "init", "--template", "goodput_slo", "--model", "meta-llama/Llama-3.1-70B-Instruct",
		"--url", m.URL+"/v1/chat/completions", "--output", "benchmark.yaml")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	inv = cli(t, dir, "config", "validate", "benchmark.yaml")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stdout, "is valid: 1 cell × 1 trial")
	assert.Contains(t, inv.stdout, `read as AIPerf config schema 2.0`)

	inv = cli(t, dir, "config", "expand", "sweep.yaml")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stdout, "9 trials in total; nothing was sent")
	assert.NotContains(t, inv.stdout, "variation 0")
	inv = cli(t, dir, "config", "expand", "sweep.yaml", "--full")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stdout, "variation 8 (isl_2048__rate_50): datasets.default.prompts.isl=2048, rate=50:")
	inv = cli(t, dir, "config", "expand", "sweep.yaml", "--index", "2", "--full")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stdout, "1 trial in total")
	assert.Contains(t, inv.stdout, "variation 2 (isl_128__rate_50)")
	assert.Contains(t, inv.stdout, "      rate: 50.0\n", "the body as merged")
	inv = cli(t, dir, "config", "expand", "sweep.yaml", "-i", "9")
	assert.Equal(t, ExitUsage, inv.code)
	assert.Contains(t, inv.stderr, "--index 9: the file declares 9 variations (indexes 0 to 8)")
	inv = cli(t, dir, "config", "expand", "--config-file", "sweep.yaml", "-F", "--format", "yaml", "-i", "0")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stdout, "variations:\n    - index: 0\n      label: isl_128__rate_10\n")
	assert.Contains(t, inv.stdout, "benchmark:\n")
	assert.Zero(t, m.control().InferenceRequests, "config commands send nothing")

	inv = cli(t, dir, "profile", "--config", "benchmark.yaml", "--ui", "none", "--tokenizer", tokenizer)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	exp := onlyExport(t, dir)
	assert.Equal(t, 500.0, metricAvg(t, exp, "request_count"))
	assert.Contains(t, exp, "goodput", "the template's slos")
	assert.Equal(t, "meta-llama/Llama-3.1-70B-Instruct", exp["input_config"].(map[string]any)["aiperf_go"].(map[string]any)["model"].([]any)[0])
}

// TestConfigMigrate: config migrate rewrites an older file in schema 2.0
// (printed, -o, --in-place keeping a .bak), the result runs the same
// cells, and a 2.0 file is left alone.
func TestConfigMigrate(t *testing.T) {
	dir := t.TempDir()
	old, err := os.ReadFile(filepath.Join("..", "..", "internal", "config", "testdata", "aiperf_docs", "sweeps-flat", "saturation.yaml"))
	require.NoError(t, err)
	writeFile(t, dir, "old.yaml", string(old))
	before := cli(t, dir, "config", "expand", "old.yaml", "--format", "json")
	require.Equal(t, ExitOK, before.code, before.stderr)

	inv := cli(t, dir, "config", "migrate", "old.yaml")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.True(t, strings.HasPrefix(inv.stdout, "schemaVersion: \"2.0\"\nbenchmark:\n"), inv.stdout)
	assert.Contains(t, inv.stderr, "old.yaml was in AIPerf's pre-envelope flat shape")
	inv = cli(t, dir, "config", "migrate", "old.yaml", "-o", "new.yaml")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	after := cli(t, dir, "config", "expand", "new.yaml", "--format", "json")
	require.Equal(t, ExitOK, after.code, after.stderr)
	assert.NotContains(t, after.stderr, "note:", "the migrated file needs no note")
	var b, a map[string]any
	require.NoError(t, json.Unmarshal([]byte(before.stdout), &b))
	require.NoError(t, json.Unmarshal([]byte(after.stdout), &a))
	assert.Equal(t, b["variations"], a["variations"], "the same variations")
	assert.Contains(t, b["schema"], "pre-envelope flat shape")
	assert.Contains(t, a["schema"], "schema 2.0")

	inv = cli(t, dir, "config", "migrate", "old.yaml", "--in-place")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	bak, err := os.ReadFile(filepath.Join(dir, "old.yaml.bak"))
	require.NoError(t, err)
	assert.Equal(t, old, bak, "the original is kept")
	inv = cli(t, dir, "config", "migrate", "old.yaml", "--in-place")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, "is already in the current shape: left as it is")
}

// TestYAMLAdaptiveSearch: a config file's sweep of type adaptive_search
// (AIPerf's schema 2.0) runs as aiperf profile's --search-* flags would,
// its probes setting the concurrency of the file's listed profiling phase:
// the monotonic planner finds the boundary of what it measured (the
// mock's, 8, on a quiet machine: measuredBoundary). config validate and
// expand describe it without sending anything.
func TestYAMLAdaptiveSearch(t *testing.T) {
	subprocesses(t)
	m := startMock(t, slaMock)
	dir := t.TempDir()
	writeFile(t, dir, "search.yaml", strings.Join([]string{
		"benchmark:",
		"  model: mock-model",
		"  endpoint: {url: '" + m.URL + "', streaming: true}",
		"  tokenizer: " + tinyTokenizer(t),
		"  dataset: {type: synthetic, prompts: {isl: 16, osl: 32}}",
		"  phases:",
		"    - {name: warmup, type: concurrency, concurrency: 1, requests: 1}",
		"    - {name: profiling, type: concurrency, concurrency: 1, requests: 16}",
		"  artifacts: {dir: out}",
		"sweep:",
		"  type: adaptive_search",
		"  planner: monotonic_sla",
		"  search_space: [{path: concurrency, lo: 1, hi: 1000, kind: int}]",
		"  sla_filters: [{metric: time_to_first_token, stat: p99, op: '<', threshold: " + strconv.Itoa(slaMs) + "}]",
		"  max_iterations: 20",
	}, "\n"))
	inv := cli(t, dir, "config", "validate", "search.yaml")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stdout, "is valid: an adaptive search (monotonic_sla over concurrency [1, 1000] int")
	inv = cli(t, dir, "config", "expand", "search.yaml")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stdout, "its probes are chosen as it runs")
	assert.Zero(t, m.control().InferenceRequests)

	inv = cli(t, dir, "profile", "--config", "search.yaml", "--ui", "none", "--name", "sla")
	require.Equal(t, ExitOK, inv.code, "stdout:\n%s\nstderr:\n%s", inv.stdout, inv.stderr)
	var doc search.HistoryDoc
	readJSONInto(t, filepath.Join(dir, "out", runner.HistoryFile), &doc)
	measuredBoundary(t, doc, inv.stdout)
	require.NotEmpty(t, doc.Iterations)
	for i, it := range doc.Iterations {
		exp := readJSON(t, filepath.Join(dir, "out", search.TrialDir(i, 1), "profile_export_aiperf.json"))
		phases := exp["input_config"].(map[string]any)["aiperf_go"].(map[string]any)["phases"].([]any)
		require.Len(t, phases, 2)
		assert.Equal(t, it.VariationValues["phases.profiling.concurrency"], phases[1].(map[string]any)["concurrency"],
			"probe %d: the probe's concurrency is the listed profiling phase's", i)
	}
}

// config init -o names the file it wrote in the template's "Run it" line;
// printed to stdout, the template keeps the placeholder this.yaml.
func TestConfigInitNamesItsFile(t *testing.T) {
	dir := t.TempDir()
	inv := cli(t, dir, "config", "init", "-o", "start.yaml")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	b, err := os.ReadFile(filepath.Join(dir, "start.yaml"))
	require.NoError(t, err)
	assert.Contains(t, string(b), "# Run it:    aiperf profile --config start.yaml\n")
	assert.Contains(t, string(b), "# Check it:  aiperf config validate start.yaml\n")
	assert.NotContains(t, string(b), "minimal.yaml")
	inv = cli(t, dir, "config", "validate", "start.yaml")
	require.Equal(t, ExitOK, inv.code, inv.stderr)

	inv = cli(t, dir, "config", "init")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stdout, "# Run it:    aiperf profile --config this.yaml\n")
}

// config init refuses, exit 2 with nothing written, an --output in a
// directory that does not exist (it exited 1) or under a file, and a --url
// that config validate refuses in the file written (a comma-separated
// list is not one URL): the same values written into the template by hand
// are refused by config validate. A ${VAR} URL is left for the file's
// reader; a password in a refused URL is never printed.
func TestConfigInitRefusals(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "afile", "x\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-o", filepath.Join("nodir", "x.yaml")}, "write the config file: the directory nodir does not exist: make it first, or give another --output"},
		{[]string{"-o", filepath.Join("afile", "x.yaml")}, "a part of its directory is a file, not a directory: give another --output"},
		{[]string{"-o", "c.yaml", "-u", "http://a:1, http://b:2"}, `--url is not a URL: "http://a:1, http://b:2": config init writes one url; list the servers under benchmark.endpoint.urls`},
		{[]string{"-o", "c.yaml", "-u", "http://perf:" + plotSecret + "@a:99999"}, `--url has port 99999, not one from 1 to 65535: "http://<redacted>@a:99999": config validate would refuse the file, so nothing was written`},
		{[]string{"-u", "ftp://a"}, `--url must use http or https, got "ftp"`},
		{[]string{"-o", "c.yaml", "-u", "http://a:1", "-u", "http://b:2"}, `--url given 2 times: config init writes one url; list the servers under benchmark.endpoint.urls`},
	} {
		inv := cli(t, dir, append([]string{"config", "init"}, c.args...)...)
		assert.Equal(t, ExitUsage, inv.code, "%v: %s", c.args, inv.stderr)
		assert.Contains(t, inv.stderr, c.want, c.args)
		assert.NotContains(t, inv.stderr, plotSecret)
		assert.Empty(t, inv.stdout, c.args)
	}
	assert.NoDirExists(t, filepath.Join(dir, "nodir"))
	assert.NoFileExists(t, filepath.Join(dir, "c.yaml"))

	tmpl := cli(t, dir, "config", "init")
	require.Equal(t, ExitOK, tmpl.code, tmpl.stderr)
	require.Contains(t, tmpl.stdout, "url: http://localhost:8000\n")
	for i, url := range []string{`"http://a:1, http://b:2"`, "http://a:99999", "ftp://a"} {
		name := fmt.Sprintf("byhand%d.yaml", i)
		writeFile(t, dir, name, strings.Replace(tmpl.stdout, "url: http://localhost:8000\n", "url: "+url+"\n", 1))
		inv := cli(t, dir, "config", "validate", name)
		assert.Equal(t, ExitUsage, inv.code, "config validate refuses %s too: %s", url, inv.stderr)
	}

	for _, url := range []string{"localhost:8000", "${AIPERF_TEST_URL:http://127.0.0.1:8000}"} {
		require.NoError(t, os.RemoveAll(filepath.Join(dir, "ok.yaml")))
		inv := cli(t, dir, "config", "init", "-o", "ok.yaml", "-u", url)
		require.Equal(t, ExitOK, inv.code, inv.stderr)
		inv = cli(t, dir, "config", "validate", "ok.yaml")
		assert.Equal(t, ExitOK, inv.code, "%s: %s", url, inv.stderr)
	}
}
