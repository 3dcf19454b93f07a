package traceanalysis

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/cachesim"
)

func write(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	return path
}

// The example of Dynamo's data generator README (AIPerf's analyzer comes
// from it), worked by hand with 4-token blocks.
func TestAnalyzeByHand(t *testing.T) {
	path := write(t,
		`{"timestamp": 0, "input_length": 16, "output_length": 10, "hash_ids": [0, 1, 2, 3]}`,
		`{"timestamp": 1, "input_length": 7, "output_length": 20, "hash_ids": [0, 1]}`,
		`{"timestamp": 2, "input_length": 12, "output_length": 30, "hash_ids": [0, 1, 2]}`,
		`{"timestamp": 3, "input_length": 10, "output_length": 40, "hash_ids": [0, 4, 5]}`)
	r, err := Analyze(context.Background(), path, Options{BlockSize: 4})
	require.NoError(t, err)
	assert.Equal(t, 4, r.TotalRequests)
	assert.Equal(t, 6, r.UniquePrefixes, "[0] [0 1] [0 1 2] [0 1 2 3] [0 4] [0 4 5]")
	assert.Equal(t, 1, r.NumPrefixGroups, "one first block, shared")
	assert.InDelta(t, (0+1+1+1.0/3)/4, r.CacheHitRate, 1e-12, "first unseen id: 0/4, 2/2, 3/3, 1/3")
	assert.InDelta(t, 9.0/12, r.PrefixReuseRatio, 1e-12, "12 prefix occurrences, 3 of prefixes seen once")
	assert.Equal(t, []int{7, 16}, []int{r.MinISL, r.MaxISL})
	assert.InDelta(t, 11.25, r.AvgISL, 1e-12)
	assert.Equal(t, []int{10, 40}, []int{r.MinOSL, r.MaxOSL})
	// Context: (position, id) pairs seen twice or more: 3 of row 1's 4
	// blocks; all of rows 2 and 3 (their whole input length); 1 of row 4's.
	assert.Equal(t, &MetricStats{Mean: 8.75, StdDev: 3.418698582794336, Min: 4, P25: 6.25, Median: 9.5, P75: 12, Max: 12}, r.ContextStats)
	assert.Equal(t, 6.0, r.UniqueStats.Max, "16-12, 0, 0 and 10-4")
	assert.Equal(t, 2.5, r.UniqueStats.Mean)
	assert.Nil(t, r.Simulation)
}

// On the public Mooncake slice, every figure is what the hash ids imply,
// computed here the plain way (prefixes as strings, the infinite cache as
// a set).
func TestAnalyzeMooncakeSlice(t *testing.T) {
	path := filepath.Join("..", "dataset", "testdata", "mooncake_conversation_head200.jsonl")
	r, err := Analyze(context.Background(), path, Options{BlockSize: 512})
	require.NoError(t, err)

	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var rows [][]int64
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var row struct {
			HashIDs []int64 `json:"hash_ids"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &row))
		rows = append(rows, row.HashIDs)
	}
	want := plainly(rows)
	assert.Equal(t, 200, r.TotalRequests)
	assert.Equal(t, want.prefixes, r.UniquePrefixes)
	assert.InDelta(t, want.hitRate, r.CacheHitRate, 1e-12)
	assert.InDelta(t, want.reuse, r.PrefixReuseRatio, 1e-12)
	assert.Equal(t, 5215, r.UniquePrefixes)
	assert.InDelta(t, 0.1501, r.CacheHitRate, 1e-4)
}

func TestAnalyzeRowsWithoutHashIDs(t *testing.T) {
	path := write(t, `{"input_length": 100, "output_length": 5}`, `{"text_input": "hi"}`)
	r, err := Analyze(context.Background(), path, Options{BlockSize: 512})
	require.NoError(t, err)
	assert.Equal(t, 2, r.TotalRequests)
	assert.Zero(t, r.UniquePrefixes)
	assert.Zero(t, r.CacheHitRate)
	assert.Nil(t, r.HitRateStats, "no hash ids: no hit rates")
	assert.Equal(t, 50.0, r.UniqueStats.Mean, "the whole input is unique prompt (AIPerf counts text_input as 0)")
}

func TestAnalyzeProblems(t *testing.T) {
	path := write(t,
		`{"timestamp": 10, "input_length": 1000, "hash_ids": [1, 2]}`,
		`{"timestamp": 5, "input_length": 100, "hash_ids": [1, 2, 3]}`,
		`{"timestamp": 6, "input_length": -4}`)
	_, err := Analyze(context.Background(), path, Options{BlockSize: 512})
	require.Error(t, err)
	assert.Contains(t, err.Error(), path+":2: hash_ids: input length: 100, hash ids: [1 2 3], block size: 512 are not compatible")
	assert.Contains(t, err.Error(), path+":3: input_length: expected an integer from 1 to")
	sim := &cachesim.Config{HashBlockSize: 512, CacheBlockSize: 512, CapacityTokens: 1 << 20}
	path = write(t, `{"timestamp": 10, "input_length": 1000}`, `{"timestamp": 5, "input_length": 100}`)
	_, err = Analyze(context.Background(), path, Options{BlockSize: 512})
	require.NoError(t, err, "the analysis does not replay: order does not matter")
	_, err = Analyze(context.Background(), path, Options{BlockSize: 512, Simulate: sim})
	require.NoError(t, err, "nor does it for the simulation, which replays in arrival order")
	path = write(t, `{"timestamp": 1e300, "input_length": 4}`, `{"session_id": "a", "timestamp": 0, "input_length": 4}`,
		`{"session_id": "a", "delay": 1e18, "input_length": 4}`)
	_, err = Analyze(context.Background(), path, Options{BlockSize: 512})
	require.Error(t, err, "profile refuses them")
	assert.Contains(t, err.Error(), path+":1: timestamp: expected at most 9007199254740992 milliseconds, got 1e+300")
	assert.Contains(t, err.Error(), path+":3: delay: expected at most 86400000 milliseconds (a day), got 1e+18")
}

// A trace listed session by session is simulated in arrival order, a
// delay after the previous turn of its own session; a later turn re-sends
// the conversation so far, which the report says.
func TestSimulateSessions(t *testing.T) {
	path := write(t,
		`{"session_id": "x", "timestamp": 0, "input_length": 32, "output_length": 2, "hash_ids": [1, 2]}`,
		`{"session_id": "x", "delay": 1000, "input_length": 16, "output_length": 2, "hash_ids": [3]}`,
		`{"session_id": "y", "timestamp": 500, "input_length": 32, "output_length": 2, "hash_ids": [1, 4]}`,
		`{"session_id": "y", "delay": 1000, "input_length": 16, "output_length": 2, "hash_ids": [5]}`)
	r, err := Analyze(context.Background(), path, Options{BlockSize: 16,
		Simulate: &cachesim.Config{HashBlockSize: 16, CacheBlockSize: 16, CapacityTokens: 1000}})
	require.NoError(t, err)
	s := r.Simulation
	assert.Equal(t, int64(32+32+50+50), s.PromptTokens, "a later turn: 32 + 2 reply tokens + 16")
	assert.Equal(t, int64(16+32+32), s.HitTokens, "the mock's figures (aiperf profile against aiperf-mock-server --block-size 16)")
	assert.Equal(t, 2, s.LaterTurns)
	var out bytes.Buffer
	r.Print(&out)
	assert.Contains(t, out.String(), "Session turns:       2 requests are later turns of a session: each re-sends its conversation so far")
}

// The JSON file has AIPerf's AnalysisStats keys in its order, the
// simulation only when one ran.
func TestReportJSON(t *testing.T) {
	path := write(t, `{"timestamp": 0, "input_length": 600, "output_length": 3, "hash_ids": [1, 2]}`)
	r, err := Analyze(context.Background(), path, Options{BlockSize: 512})
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, r.WriteJSON(&buf))
	keys := topKeys(t, buf.Bytes())
	assert.Equal(t, []string{"total_requests", "unique_prefixes", "num_prefix_groups", "cache_hit_rate", "min_isl", "max_isl",
		"avg_isl", "min_osl", "max_osl", "avg_osl", "prefix_reuse_ratio", "isl_stats", "osl_stats", "context_length_stats",
		"unique_prompt_length_stats", "hit_rate_stats"}, keys)
	assert.Contains(t, buf.String(), `"isl_stats": {
    "mean": 600,
    "std_dev": 0,
    "min": 600,
    "p25": 600,
    "median": 600,
    "p75": 600,
    "max": 600
  }`)
	r, err = Analyze(context.Background(), path, Options{BlockSize: 512,
		Simulate: &cachesim.Config{HashBlockSize: 512, CacheBlockSize: 512, CapacityTokens: 4096}})
	require.NoError(t, err)
	buf.Reset()
	require.NoError(t, r.WriteJSON(&buf))
	assert.Equal(t, "kv_cache_simulation", topKeys(t, buf.Bytes())[16])
}

func topKeys(t *testing.T, b []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	_, err := dec.Token()
	require.NoError(t, err)
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		require.NoError(t, err)
		keys = append(keys, k.(string))
		var v json.RawMessage
		require.NoError(t, dec.Decode(&v))
	}
	return keys
}

func TestReportPrint(t *testing.T) {
	path := write(t, `{"timestamp": 0, "input_length": 1600, "output_length": 3, "hash_ids": [1, 2, 3, 4]}`,
		`{"timestamp": 0, "input_length": 1600, "output_length": 3, "hash_ids": [1, 2, 3, 4]}`)
	r, err := Analyze(context.Background(), path, Options{BlockSize: 512,
		Simulate: &cachesim.Config{HashBlockSize: 512, CacheBlockSize: 512, CapacityTokens: 1 << 20}})
	require.NoError(t, err)
	var buf bytes.Buffer
	r.Print(&buf)
	out := buf.String()
	for _, want := range []string{"Trace Analysis Report\nTotal requests:      2\nUnique prefixes:     4\nPrefix groups:       1\n" +
		"Cache hit rate:      50.00%\nPrefix reuse ratio:  100.00%\n", "Trace Statistics",
		"│          Input Length │ 1,600.00 │", "│ Theoretical Hit Rates │     0.50 │", "Unique Prompt Length",
		"KV cache:            1,048,576 tokens (2,048 blocks of 512 tokens)", "Hit ratio:           48.00%",
		"Prefix-cache hits:   1,536 of 3,200 prompt tokens"} {
		assert.Contains(t, out, want)
	}
}

// plain is what AIPerf's definitions give for rows of hash ids, computed
// the plain way: prefixes as strings, the infinite cache as a set.
type plain struct {
	prefixes       int
	reuse, hitRate float64
}

func plainly(rows [][]int64) plain {
	prefixes := map[string]int{}
	seen := map[int64]bool{}
	hit, total := 0.0, 0
	for _, ids := range rows {
		k := slices.IndexFunc(ids, func(id int64) bool { return !seen[id] })
		if k < 0 {
			k = len(ids)
		}
		hit += float64(k) / float64(len(ids))
		var key strings.Builder
		for _, id := range ids {
			seen[id] = true
			key.WriteString(strconv.FormatInt(id, 10) + ",")
			prefixes[key.String()]++
			total++
		}
	}
	reused := 0
	for _, n := range prefixes {
		if n > 1 {
			reused += n
		}
	}
	return plain{prefixes: len(prefixes), reuse: float64(reused) / float64(total), hitRate: hit / float64(len(rows))}
}

// A context cancelled once the simulation has started (as a Ctrl-C during
// it) stops the analysis with its error and no report; before, the
// simulation ran to its end and the report was written.
func TestAnalyzeStopsInTheSimulation(t *testing.T) {
	path := write(t, `{"timestamp": 0, "input_length": 32, "hash_ids": [1, 2]}`, `{"timestamp": 5, "input_length": 32, "hash_ids": [1, 3]}`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := 0
	r, err := Analyze(ctx, path, Options{BlockSize: 16,
		Simulate:   &cachesim.Config{HashBlockSize: 16, CacheBlockSize: 16, CapacityTokens: 1000},
		Simulating: func(requests int) { started = requests; cancel() }})
	assert.Equal(t, 2, started, "told the simulation starts, and of how many requests")
	require.ErrorIs(t, err, context.Canceled)
	assert.Nil(t, r)
}

// AsProfile refuses what profile refuses in a file given no other flag.
func TestAnalyzeAsProfile(t *testing.T) {
	path := write(t, `{"input_length": 8, "hash_ids": [1,2], "timestamp": 0}`, `{"input_length": 8, "hash_ids": [1,3], "delay": 50}`)
	_, err := Analyze(context.Background(), path, Options{BlockSize: 4})
	require.NoError(t, err)
	_, err = Analyze(context.Background(), path, Options{BlockSize: 4, AsProfile: true})
	assert.EqualError(t, err, path+":2: timestamp: the first turn of this conversation has no timestamp: a fixed schedule needs one on every conversation's first turn")
}

// Counts of one are singular (before: "1 blocks of 512 tokens").
func TestReportPlurals(t *testing.T) {
	var out bytes.Buffer
	(&Report{Simulation: &cachesim.Result{CapacityTokens: 512, CapacityBlocks: 1, CacheBlockSize: 512, PeakBlocks: 1, LaterTurns: 1}}).Print(&out)
	assert.Contains(t, out.String(), "KV cache:            512 tokens (1 block of 512 tokens)\n")
	assert.Contains(t, out.String(), "Blocks evicted:      0 (peak 1 block cached)\n")
	assert.Contains(t, out.String(), "Session turns:       1 request is a later turn of a session: each re-sends")
	out.Reset()
	(&Report{Simulation: &cachesim.Result{CapacityTokens: 1, CapacityBlocks: 1, CacheBlockSize: 1, PeakBlocks: 2000}}).Print(&out)
	assert.Contains(t, out.String(), "KV cache:            1 token (1 block of 1 token)\n")
	assert.Contains(t, out.String(), "(peak 2,000 blocks cached)\n")
}
