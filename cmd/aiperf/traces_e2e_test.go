package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// productionQueries is the 5-line trace of AIPerf's trace-benchmarking
// tutorial, as its `cat > production_queries.jsonl` creates it.
const productionQueries = `{"text_input": "What is the capital of France?", "output_length": 20}
{"text_input": "Explain quantum computing in simple terms.", "output_length": 100}
{"text_input": "Write a Python function to calculate fibonacci numbers.", "output_length": 150}
{"text_input": "Summarize the main causes of World War II.", "output_length": 200}
{"text_input": "How do neural networks learn?", "output_length": 80}
`

// TestTraceTutorials runs the command lines of AIPerf's trace tutorials
// unchanged against the mock.
func TestTraceTutorials(t *testing.T) {
	for name, c := range map[string]tutorial{
		"trace benchmarking": {
			doc: "docs/tutorials/trace-benchmarking.md (Running Basic Trace Benchmark): each line becomes exactly one request",
			args: []string{"profile", "--model", "Qwen/Qwen3-0.6B", "--endpoint-type", "chat",
				"--endpoint", "/v1/chat/completions", "--streaming", "--url", "localhost:8000",
				"--input-file", "production_queries.jsonl", "--custom-dataset-type", "mooncake_trace",
				"--concurrency", "2", "--warmup-request-count", "1"},
			files: map[string]string{"production_queries.jsonl": productionQueries},
			mock:  mock.Config{Fast: true},
			check: func(t *testing.T, dir string) {
				exp := onlyExport(t, dir)
				assert.Equal(t, 5.0, metricAvg(t, exp, "request_count"), "5 lines, 5 requests")
				sent := map[string]int{}
				osl := map[float64]int{}
				for _, r := range profilingRecords(t, dir) {
					sent[r.Metadata.ConversationID]++
					var n float64
					require.NoError(t, json.Unmarshal(r.Metrics["output_sequence_length"].Value, &n))
					osl[n]++
				}
				assert.Equal(t, map[string]int{"production_queries.jsonl:1": 1, "production_queries.jsonl:2": 1,
					"production_queries.jsonl:3": 1, "production_queries.jsonl:4": 1, "production_queries.jsonl:5": 1}, sent,
					"every line exactly once")
				assert.Equal(t, map[float64]int{20: 1, 100: 1, 150: 1, 200: 1, 80: 1}, osl, "each line's output_length")
			},
		},
		"bailian trace": {
			doc: "docs/tutorials/bailian-trace.md (Download and Profile): the trace replayed on its schedule, each request once",
			change: "bailian_short.jsonl is a 6-line trace in the Bailian format (timestamps from 0 s) instead of the first 50 lines " +
				"of the downloaded qwen_traceA_blksz_16.jsonl",
			args: []string{"profile", "--model", "Qwen/Qwen3-0.6B", "--endpoint-type", "chat", "--streaming",
				"--url", "localhost:8000", "--input-file", "bailian_short.jsonl", "--custom-dataset-type", "bailian_trace",
				"--fixed-schedule"},
			files: map[string]string{"bailian_short.jsonl": bailianShort},
			mock:  mock.Config{Fast: true},
			after: func(t *testing.T, dir string, at map[string]tutorialServer) {
				assert.Equal(t, 6, at["localhost:8000"].requests, "6 lines, 6 requests")
				assertSentLengths(t, dir, map[[2]float64]int{{521, 132}: 1, {676, 80}: 1, {900, 40}: 1, {33, 7}: 1, {64, 16}: 1, {300, 20}: 1})
			},
		},
	} {
		t.Run(name, func(t *testing.T) { c.run(t, nil) })
	}
}

// bailianShort is a small trace in the format of AIPerf's bailian-trace.md
// (its two example lines first, their timestamps moved to the start): a
// three-turn session (159 → 160 → 161), two single requests and a
// follow-up whose parent is not in the file.
const bailianShort = `{"chat_id": 159, "parent_chat_id": -1, "timestamp": 0.114, "input_length": 521, "output_length": 132, "type": "text", "turn": 1}
{"chat_id": 160, "parent_chat_id": 159, "timestamp": 0.5, "input_length": 676, "output_length": 80, "type": "text", "turn": 2}
{"chat_id": 170, "parent_chat_id": -1, "timestamp": 0.55, "input_length": 33, "output_length": 7, "type": "search", "turn": 1, "hash_ids": [1, 2, 3]}
{"chat_id": 171, "timestamp": 0.6, "input_length": 64, "output_length": 16, "type": "text", "hash_ids": [1, 2, 4, 5]}
{"chat_id": 161, "parent_chat_id": 160, "timestamp": 0.7, "input_length": 900, "output_length": 40, "type": "text", "turn": 3}
{"chat_id": 180, "parent_chat_id": 42, "timestamp": 0.8, "input_length": 300, "output_length": 20, "type": "file", "turn": 2}
`

// assertSentLengths checks the profiling records of the one run under
// dir: one per (input, output) length pair of the trace, as many times as
// the trace has it.
func assertSentLengths(t *testing.T, dir string, want map[[2]float64]int) {
	t.Helper()
	got := map[[2]float64]int{}
	for _, r := range profilingRecords(t, dir) {
		var isl, osl float64
		require.NoError(t, json.Unmarshal(r.Metrics["input_sequence_length"].Value, &isl))
		require.NoError(t, json.Unmarshal(r.Metrics["output_sequence_length"].Value, &osl))
		got[[2]float64{isl, osl}]++
	}
	assert.Equal(t, want, got, "each line's input_length and output_length, once")
}

// exportRecord is the part of a profile_export.jsonl record the trace
// tests read.
type exportRecord struct {
	Metadata struct {
		ConversationID string `json:"conversation_id"`
		Phase          string `json:"benchmark_phase"`
	} `json:"metadata"`
	Metrics map[string]struct {
		Value json.RawMessage `json:"value"`
	} `json:"metrics"`
}

// profilingRecords reads the profiling phase's records of the one run
// under dir/artifacts.
func profilingRecords(t *testing.T, dir string) []exportRecord {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "artifacts", "*", "profile_export.jsonl"))
	require.Len(t, files, 1)
	f, err := os.Open(files[0])
	require.NoError(t, err)
	defer f.Close()
	var out []exportRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var r exportRecord
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		if r.Metadata.Phase == "profiling" {
			out = append(out, r)
		}
	}
	require.NoError(t, sc.Err())
	return out
}

// mooncakeSlice is the absolute path of the public Mooncake slice (200
// lines of the FAST'25 conversation trace, 512-token hash blocks; see
// internal/dataset/testdata/README.md).
func mooncakeSlice(t *testing.T) string {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("..", "..", "internal", "dataset", "testdata", "mooncake_conversation_head200.jsonl"))
	require.NoError(t, err)
	return path
}

// analyze-trace on the Mooncake slice reports the infinite-cache hit rate
// its hash ids imply, on the console and in AIPerf's JSON file.
func TestAnalyzeTraceMooncake(t *testing.T) {
	trace := mooncakeSlice(t)
	inv := cli(t, "", "analyze-trace", trace, "--block-size", "512", "--output-file", "out/analysis.json")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	for _, want := range []string{"Trace Analysis Report", "Total requests:      200", "Unique prefixes:     5,215",
		"Cache hit rate:      15.01%", "Theoretical Hit Rates", "Analysis report saved to out/analysis.json"} {
		assert.Contains(t, inv.stdout, want)
	}
	got := readJSON(t, "out/analysis.json")
	// Each request's share of hash ids before the first one never seen,
	// averaged (derived from the hash ids in traceanalysis's
	// TestAnalyzeMooncakeSlice).
	assert.InDelta(t, 0.15012131489595779, got["cache_hit_rate"].(float64), 1e-12)
	assert.Equal(t, 200.0, got["total_requests"])
	assert.NotContains(t, got, "kv_cache_simulation")
}

// A trace with malformed lines is refused before anything is analysed or
// written: every problem listed with its line and field, exit 2.
func TestAnalyzeTraceRefusesBadLines(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "bad.jsonl", `{"timestamp": 0, "input_length": 600, "hash_ids": [1, 2]}
{"timestamp": 1, "input_length": 100, "hash_ids": [1, 2, 3]}
{"timestamp": "later", "input_length": 10}
{"timestamp": 3, "output_length": 0, "input_length": 10}
`)
	inv := cli(t, dir, "analyze-trace", "bad.jsonl")
	assert.Equal(t, ExitUsage, inv.code)
	for _, want := range []string{"3 problems", "bad.jsonl:2: hash_ids: input length: 100, hash ids: [1 2 3], block size: 512 are not compatible",
		"bad.jsonl:3:15: timestamp: expected a number, got a JSON string", "bad.jsonl:4: output_length: expected an integer from 1 to 16777216, got 0"} {
		assert.Contains(t, inv.stderr, want)
	}
	assert.Empty(t, inv.stdout)
	inv = cli(t, dir, "synthesize-trace", "bad.jsonl", "out.jsonl")
	assert.Equal(t, ExitUsage, inv.code)
	assert.Contains(t, inv.stderr, "bad.jsonl:4: output_length: expected an integer from 1 to 16777216, got 0")
	assert.NoFileExists(t, filepath.Join(dir, "out.jsonl"), "nothing written from a malformed trace")
	writeFile(t, dir, "backwards.jsonl", `{"timestamp": 10, "input_length": 600}
{"timestamp": 5, "input_length": 600}
`)
	inv = cli(t, dir, "analyze-trace", "backwards.jsonl", "--kv-cache-tokens", "4096")
	assert.Equal(t, ExitOK, inv.code, "the simulator replays the lines in arrival order: %s", inv.stderr)
	inv = cli(t, dir, "analyze-trace", "backwards.jsonl", "--ttft-ms", "5")
	assert.Equal(t, ExitUsage, inv.code)
	assert.Contains(t, inv.stderr, "give --kv-cache-tokens too")
}

// The KV-cache simulator predicts the hit ratio the mock measures when the
// Mooncake slice is replayed on it on its schedule (sped up, one request at
// a time so that the mock serves them in the trace's order), for caches of
// three sizes: within 2 percentage points (they agree to the block); and
// with cache blocks half the trace's hash blocks (vLLM's 16 tokens under
// 32). The slice is replayed at 1/16 scale (32-token hash blocks, every
// length divided by 16: the same hash ids, so the same prefix structure),
// and, without the race detector, at full scale too (2.8 million prompt
// tokens a replay: what the mock's tokenizer costs).
func TestKVCacheSimulatorPredictsTheMock(t *testing.T) {
	dir := t.TempDir()
	full := mooncakeSlice(t)
	small := writeFile(t, dir, "small.jsonl", scaledSlice(t, 16))
	type replay struct {
		trace                   string
		hashBlock, block, cache int // tokens
	}
	cases := []replay{{small, 32, 32, 2048 * 32}, {small, 32, 32, 3000 * 32}, {small, 32, 32, 4096 * 32}, {small, 32, 16, 1 << 16}}
	if !raceEnabled {
		cases = append(cases, replay{full, 512, 512, 2048 * 512}, replay{full, 512, 512, 3000 * 512}, replay{full, 512, 512, 4096 * 512})
	}
	predicted := map[string][]float64{}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s, block %d, %d tokens", filepath.Base(c.trace), c.block, c.cache), func(t *testing.T) {
			m := startMock(t, mock.Config{Fast: true, BlockSize: c.block, KVCacheTokens: c.cache})
			run := t.TempDir()
			inv := cli(t, run, "profile", "-m", "mock-model", "--url", m.URL, "--input-file", c.trace,
				"--custom-dataset-type", "mooncake_trace", "--prompt-input-tokens-block-size", strconv.Itoa(c.hashBlock),
				"--replay-speedup", "1000", "--concurrency", "1", "--ui", "none")
			require.Equal(t, ExitOK, inv.code, inv.stderr)
			hits, queries := prefixCacheCounters(t, m.URL+"/metrics")

			inv = cli(t, run, "analyze-trace", c.trace, "--block-size", strconv.Itoa(c.hashBlock), "--kv-cache-tokens", strconv.Itoa(c.cache),
				"--cache-block-size", strconv.Itoa(c.block), "--output-file", "sim.json")
			require.Equal(t, ExitOK, inv.code, inv.stderr)
			sim := readJSON(t, filepath.Join(run, "sim.json"))["kv_cache_simulation"].(map[string]any)
			require.Equal(t, queries, sim["prompt_tokens"], "every prompt token of every request, on both")
			ratio := sim["hit_ratio"].(float64)
			t.Logf("mock %.4f (%.0f hit tokens), simulator %.4f (%.0f)", hits/queries, hits, ratio, sim["hit_tokens"])
			assert.InDelta(t, hits/queries, ratio, 0.02)
			if c.block == c.hashBlock {
				predicted[c.trace] = append(predicted[c.trace], ratio)
			}
		})
	}
	for trace, p := range predicted {
		assert.IsIncreasing(t, p, "%s: a larger cache keeps more of the trace's prefixes", filepath.Base(trace))
	}
}

// scaledSlice is the Mooncake slice at 1/k scale: the same hash ids and
// timestamps, input and output lengths divided by k (rounded up), so its
// hash blocks are 512/k tokens.
func scaledSlice(t *testing.T, k int) string {
	t.Helper()
	b, err := os.ReadFile(mooncakeSlice(t))
	require.NoError(t, err)
	var out strings.Builder
	for line := range strings.Lines(string(b)) {
		var row map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &row))
		for _, key := range []string{"input_length", "output_length"} {
			row[key] = (int(row[key].(float64)) + k - 1) / k
		}
		scaled, err := json.Marshal(row)
		require.NoError(t, err)
		out.Write(append(scaled, '\n'))
	}
	return out.String()
}

// prefixCacheCounters reads vLLM's prefix-cache hit and query counters
// (tokens) from a /metrics endpoint.
func prefixCacheCounters(t *testing.T, url string) (hits, queries float64) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	value := func(name string) float64 {
		f := fams[name]
		require.NotNil(t, f, "no %s", name)
		require.Len(t, f.GetMetric(), 1)
		return f.GetMetric()[0].GetCounter().GetValue()
	}
	return value("vllm:prefix_cache_hits_total"), value("vllm:prefix_cache_queries_total")
}

// sliceHead is the first n lines of the Mooncake slice (all at t=0 for
// n ≤ 10).
func sliceHead(t *testing.T, n int) string {
	t.Helper()
	b, err := os.ReadFile(mooncakeSlice(t))
	require.NoError(t, err)
	lines := bytes.SplitAfter(b, []byte("\n"))
	return string(bytes.Join(lines[:n], nil))
}

// AIPerf's prefix-synthesis tutorial (docs/tutorials/prefix-synthesis.md),
// its command lines run unchanged against the mock on a 10-line
// production trace (the first lines of the Mooncake slice): Step 1
// analyze, Step 2 synthesize, Step 3 profile the synthetic trace (--url
// added: the tutorial relies on localhost:8000), then the advanced
// scenarios, each output analysed as its Tips say; and the API reference's
// profile command with --synthesis-* flags.
func TestPrefixSynthesisTutorial(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true, BlockSize: 512})
	dir := t.TempDir()
	writeFile(t, dir, "traces/production.jsonl", sliceHead(t, 10))
	writeFile(t, dir, "prod.jsonl", sliceHead(t, 10))
	step := func(args ...string) invocation {
		t.Helper()
		inv := cli(t, dir, args...)
		require.Equal(t, ExitOK, inv.code, "%v\nstdout:\n%s\nstderr:\n%s", args, inv.stdout, inv.stderr)
		return inv
	}
	inv := step("analyze-trace", "traces/production.jsonl", "--block-size", "512", "--output-file", "analysis.json")
	assert.Contains(t, inv.stdout, "Total requests:      10")
	assert.Equal(t, 10.0, readJSON(t, filepath.Join(dir, "analysis.json"))["total_requests"])

	inv = step("synthesize-trace", "traces/production.jsonl", "traces/synthetic.jsonl", "--block-size", "512",
		"--speedup-ratio", "1.0", "--prefix-len-multiplier", "1.0", "--prefix-root-multiplier", "1", "--prompt-len-multiplier", "1.0")
	assert.Contains(t, inv.stdout, "Generated 10 synthetic traces")
	assert.Equal(t, 10, countLines(t, filepath.Join(dir, "traces", "synthetic.jsonl")))

	step("profile", "--input-file", "traces/synthetic.jsonl", "--custom-dataset-type", "mooncake_trace",
		"--model", "Qwen/Qwen3-0.6B", "--endpoint-type", "chat", "--workers-max", "4", "--concurrency", "32", "--url", m.URL)
	exp := onlyExport(t, dir)
	assert.Equal(t, 10.0, metricAvg(t, exp, "request_count"), "every line of the synthetic trace once")

	for _, c := range []struct {
		args  []string
		lines int
	}{
		{[]string{"prod.jsonl", "high-cache-hit.jsonl", "--prefix-root-multiplier", "5", "--prompt-len-multiplier", "0.8"}, 50},
		{[]string{"prod.jsonl", "fast-load.jsonl", "--speedup-ratio", "10.0"}, 10},
		{[]string{"prod.jsonl", "long-context.jsonl", "--prefix-len-multiplier", "2.0", "--max-isl", "8192"}, 10},
		{[]string{"prod.jsonl", "multiturn.jsonl", "--prefix-root-multiplier", "10", "--prompt-len-multiplier", "1.2"}, 100},
		{[]string{"prod.jsonl", "syn-aggressive.jsonl", "--prefix-len-multiplier", "2.0", "--prefix-root-multiplier", "5"}, 50},
	} {
		step(append([]string{"synthesize-trace"}, c.args...)...)
		assert.Equal(t, c.lines, countLines(t, filepath.Join(dir, c.args[1])), c.args)
		inv = step("analyze-trace", c.args[1], "--output-file", "syn-analysis.json")
		if c.args[1] == "long-context.jsonl" {
			assert.LessOrEqual(t, readJSON(t, filepath.Join(dir, "syn-analysis.json"))["max_isl"], 8192.0)
		}
	}

	// The API reference: synthesis applied by profile itself.
	out := t.TempDir()
	inv = cli(t, out, "profile", "--input-file", filepath.Join(dir, "traces", "production.jsonl"), "--custom-dataset-type", "mooncake_trace",
		"--synthesis-speedup-ratio", "2.0", "--synthesis-prefix-len-multiplier", "1.5", "--synthesis-max-isl", "4096",
		"--model", "Qwen/Qwen3-0.6B", "--endpoint-type", "chat", "--url", m.URL)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	exp = onlyExport(t, out)
	assert.Equal(t, 10.0, metricAvg(t, exp, "request_count"))
	assert.LessOrEqual(t, exp["input_sequence_length"].(map[string]any)["max"], 4096.0, "--synthesis-max-isl")
	assert.Contains(t, inv.stderr, "synthesized as aiperf synthesize-trace does (10 lines from 10)")
}

// --synthesis-prefix-root-multiplier on profile sends every line once per
// copy of the prefix tree; a synthesis flag on another kind of file is
// refused before anything is sent.
func TestProfileSynthesis(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	writeFile(t, dir, "trace.jsonl", sliceHead(t, 4))
	inv := cli(t, dir, "profile", "-m", "mock-model", "--url", m.URL, "--input-file", "trace.jsonl", "--ui", "none",
		"--synthesis-prefix-root-multiplier", "3")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Equal(t, 12.0, metricAvg(t, onlyExport(t, dir), "request_count"))
	sent := map[string]int{}
	for _, r := range profilingRecords(t, dir) {
		sent[r.Metadata.ConversationID]++
	}
	assert.Len(t, sent, 12, "12 conversations, each once")

	writeFile(t, dir, "single.jsonl", `{"text": "hello"}`+"\n")
	inv = cli(t, dir, "profile", "-m", "mock-model", "--url", m.URL, "--input-file", "single.jsonl", "--ui", "none",
		"--synthesis-speedup-ratio", "2")
	assert.Equal(t, ExitUsage, inv.code)
	assert.Contains(t, inv.stderr, "--synthesis-* options rewrite a mooncake trace: single.jsonl is a single_turn file")
	inv = cli(t, dir, "profile", "-m", "mock-model", "--url", m.URL, "--input-file", "single.jsonl", "--ui", "none",
		"--custom-dataset-type", "single_turn", "--synthesis-max-isl", "100")
	assert.Equal(t, ExitUsage, inv.code)
	assert.Contains(t, inv.stderr, "--synthesis-max-isl requires --custom-dataset-type mooncake_trace (it rewrites a trace's hash ids and lengths), got single_turn")
	assert.Zero(t, m.control().InferenceRequests-12, "nothing sent by the refused runs")
}
