package main

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/report"
	"github.com/aiperf-go/aiperf/internal/result"
)

// jsonlMetricSum sums a metric's per-request values over the records of
// a profile_export.jsonl, and counts the records that have it.
func jsonlMetricSum(t *testing.T, path, tag string) (sum float64, n int) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var line struct {
			Metrics map[string]json.RawMessage `json:"metrics"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &line))
		if raw, ok := line.Metrics[tag]; ok {
			var v struct{ Value float64 }
			require.NoError(t, json.Unmarshal(raw, &v))
			sum += v.Value
			n++
		}
	}
	require.NoError(t, sc.Err())
	return sum, n
}

// TestPromptCacheMetricsEqualTheServersHits: against the mock's
// block-level prefix cache, the prompt tokens the server reports it read
// from its cache (usage.prompt_tokens_details.cached_tokens), summed over
// the profiling phase, are exactly its /metrics prefix-cache hit counter's
// increase over that phase: in the server-metrics export of a run with a
// warmup (warmup excluded), and scraped before and after a run without
// one. The overall cache-read % is that over the prompt tokens; the
// Usage console table, the JSONL, the store and compare carry them.
func TestPromptCacheMetricsEqualTheServersHits(t *testing.T) {
	m := startMock(t, mock.Config{TTFT: 2, ITL: 1})
	dir := t.TempDir()
	// Two prompts of 64 tokens (four 16-token blocks each), sent one at
	// a time: after each prompt's first reply the next sends of it hit.
	flags := func(name string, extra ...string) []string {
		return append(quick(m.URL, "--isl", "64", "--num-dataset-entries", "2", "--concurrency", "1",
			"--request-count", "12", "--name", name, "--artifact-dir", name), extra...)
	}
	hits := "vllm:prefix_cache_hits_total"

	inv := cli(t, dir, flags("warm", "--warmup-request-count", "3")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	client := readJSON(t, filepath.Join(dir, "warm", report.JSONFile))
	var exp serverExport
	b, err := os.ReadFile(filepath.Join(dir, "warm", "server_metrics_export.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &exp))
	server := exp.Metrics["vllm:prefix_cache_hits"]
	require.Len(t, server.Series, 1)
	serverHits := server.Series[0].Stats["total"]
	assert.Positive(t, serverHits, "the prompts were read from the cache")
	read := metricAvg(t, client, "total_usage_prompt_cache_read_tokens")
	assert.Equal(t, serverHits, read, "cache reads over the profiling phase = the server's hit counter's increase, warmup excluded")
	assert.Equal(t, serverHits, client["usage_prompt_cache_read_tokens"].(map[string]any)["sum"])
	jsonl, n := jsonlMetricSum(t, filepath.Join(dir, "warm", report.JSONLFile), "usage_prompt_cache_read_tokens")
	assert.Equal(t, serverHits, jsonl, "the per-request values add up to it")
	assert.Equal(t, 12, n, "every profiling request reported its reads")
	prompt := metricAvg(t, client, "total_usage_prompt_tokens")
	assert.InDelta(t, 100*serverHits/prompt, metricAvg(t, client, "overall_usage_prompt_cache_read_pct"), 1e-9)
	assert.Contains(t, inv.stdout, report.UsageTitle)
	assert.Contains(t, inv.stdout, "Usage Prompt Cache Read Tokens (tokens)")
	assert.Contains(t, inv.stdout, "Overall Usage Prompt Cache Read % (%)")
	assert.NotContains(t, inv.stdout, report.CacheReportingHint)

	before := scrape(t, m.URL, hits)[hits]
	inv = cli(t, dir, flags("cold")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	delta := scrape(t, m.URL, hits)[hits] - before
	cold := readJSON(t, filepath.Join(dir, "cold", report.JSONFile))
	assert.Equal(t, delta, metricAvg(t, cold, "total_usage_prompt_cache_read_tokens"),
		"the reads equal the hit counter scraped before and after the run")

	cmp := cli(t, dir, "compare", "warm", "cold", "--metric",
		"overall_usage_prompt_cache_read_pct.avg,usage_prompt_cache_read_tokens.sum", "--format", "csv")
	require.Equal(t, ExitOK, cmp.code, cmp.stderr)
	rows, err := csv.NewReader(strings.NewReader(cmp.stdout)).ReadAll()
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(rows), 3, cmp.stdout)
	assert.Equal(t, []string{"overall_usage_prompt_cache_read_pct.avg", "%", "higher"}, rows[1][:3],
		"stored, and more of the prompt read from the cache is better")
	assert.Equal(t, "usage_prompt_cache_read_tokens.sum", rows[2][0])
}

// TestNoCacheReportGivesTheHint: a server that reports usage but not its
// cache reads (the mock's --no-cache-report, vLLM without
// --enable-prompt-tokens-details) has no prompt-cache metrics, and the
// console says how to turn the reporting on.
func TestNoCacheReportGivesTheHint(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true, NoCacheReport: true})
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--request-count", "4", "--no-store", "--artifact-dir", "out")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stdout, report.CacheReportingHint)
	doc := readJSON(t, filepath.Join(dir, "out", report.JSONFile))
	assert.Contains(t, doc, "usage_prompt_tokens")
	for _, absent := range []string{"usage_prompt_cache_read_tokens", "total_usage_prompt_cache_read_tokens",
		"overall_usage_prompt_cache_read_pct"} {
		assert.NotContains(t, doc, absent)
	}
}

// TestImpossibleCacheCountIsNamedNotHinted: a server whose cached_tokens
// exceed its prompt_tokens reported a count, which is dropped: the console
// says so and why (a warning, in runs show too) instead of AIPerf's hint
// that it reports none, and each record says why in profile_export.jsonl
// (usage_cache_dropped), a worker's (--workers) as a local one's.
func TestImpossibleCacheCountIsNamedNotHinted(t *testing.T) {
	subprocesses(t)
	tok := tinyTokenizer(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hello there"},`+
			`"finish_reason":"stop"}],"usage":{"prompt_tokens":16,"completion_tokens":2,"total_tokens":18,`+
			`"prompt_tokens_details":{"cached_tokens":1000}}}`)
	}))
	t.Cleanup(srv.Close)
	const why = "1000 cached tokens, more than the 16 prompt tokens"
	dir := t.TempDir()
	for _, workers := range []string{"1", "2"} {
		name := "w" + workers
		inv := cli(t, dir, "profile", "-m", "m", "-u", srv.URL, "--ui", "none", "--tokenizer", tok, "--isl", "16", "--osl", "2",
			"--request-count", "4", "--concurrency", "2", "--workers", workers, "--name", name, "--artifact-dir", name)
		require.Equal(t, ExitOK, inv.code, inv.stderr)
		assert.NotContains(t, inv.stdout, report.CacheReportingHint, "%s: the server reported a count", name)
		assert.Contains(t, inv.stdout, result.WarnCacheDropped+" on 4 requests (the first: "+why+")", name)
		b, err := os.ReadFile(filepath.Join(dir, name, report.JSONLFile))
		require.NoError(t, err)
		assert.Equal(t, 4, strings.Count(string(b), `"usage_cache_dropped":"`+why+`"`), "%s: every record says why:\n%s", name, b)
	}
	show := cli(t, dir, "runs", "show", "1")
	require.Equal(t, ExitOK, show.code, show.stderr)
	assert.NotContains(t, show.stdout, report.CacheReportingHint)
	assert.Contains(t, show.stdout, result.WarnCacheDropped)
}
