package main

import (
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// jsonlSample is one sample of a server_metrics_export.jsonl line.
type jsonlSample struct {
	Labels  map[string]string  `json:"labels"`
	Value   *float64           `json:"value"`
	Buckets map[string]float64 `json:"buckets"`
	Sum     float64            `json:"sum"`
	Count   float64            `json:"count"`
}

// scrapes reads server_metrics_export.jsonl: each endpoint's scrapes by
// timestamp_ns.
func scrapes(t *testing.T, path string) map[string]map[int64]map[string][]jsonlSample {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	out := map[string]map[int64]map[string][]jsonlSample{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var l struct {
			EndpointURL string                   `json:"endpoint_url"`
			TimestampNs int64                    `json:"timestamp_ns"`
			Metrics     map[string][]jsonlSample `json:"metrics"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &l))
		if out[l.EndpointURL] == nil {
			out[l.EndpointURL] = map[int64]map[string][]jsonlSample{}
		}
		out[l.EndpointURL][l.TimestampNs] = l.Metrics
	}
	return out
}

// parquetRows reads a Parquet file with parquet-go: its column names, in
// order, its key/value metadata, and its rows as column → value (nil for
// null).
func parquetRows(t *testing.T, path string) ([]string, func(string) string, []map[string]any) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close() })
	st, err := f.Stat()
	require.NoError(t, err)
	pf, err := parquet.OpenFile(f, st.Size())
	require.NoError(t, err)
	var cols []string
	for _, c := range pf.Schema().Fields() {
		cols = append(cols, c.Name())
	}
	meta := func(k string) string { v, _ := pf.Lookup(k); return v }
	var out []map[string]any
	r := parquet.NewReader(pf)
	defer r.Close()
	buf := make([]parquet.Row, 256)
	for {
		n, err := r.ReadRows(buf)
		for _, row := range buf[:n] {
			m := map[string]any{}
			for _, v := range row {
				name := cols[v.Column()]
				switch {
				case v.IsNull():
					m[name] = nil
				case v.Kind() == parquet.ByteArray:
					m[name] = string(v.ByteArray())
				case v.Kind() == parquet.Int64:
					m[name] = v.Int64()
				default:
					m[name] = v.Double()
				}
			}
			out = append(out, m)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
	}
	require.EqualValues(t, pf.NumRows(), len(out))
	return cols, meta, out
}

// sampleOf is the sample of family name in a scrape whose labels are the
// row's label columns.
func sampleOf(t *testing.T, scrape map[string][]jsonlSample, name string, row map[string]any, labelCols []string) jsonlSample {
	t.Helper()
	want := map[string]string{}
	for _, c := range labelCols {
		if v, ok := row[c].(string); ok {
			want[c] = v
		}
	}
	for _, s := range scrape[name] {
		if maps.Equal(s.Labels, want) || len(s.Labels) == 0 && len(want) == 0 {
			return s
		}
	}
	require.Failf(t, "no sample", "%s %v in the scrape", name, want)
	return jsonlSample{}
}

// TestServerMetricsParquet: with --server-metrics-formats …,parquet a run
// against the mock writes server_metrics_export.parquet in AIPerf's
// normalized schema, read back here with parquet-go: its columns in
// AIPerf's order, a row per series per scrape of the profiling span (per
// bucket for a histogram) whose values are the JSONL export's samples of
// the same scrape — a gauge's as is, a counter's and a histogram's as
// increases since the scrape before the span — the warmup's scrapes left
// out, the prompt-token counter's last increase the profiling requests'
// usage, and AIPerf's metadata naming the run.
func TestServerMetricsParquet(t *testing.T) {
	m := startMock(t, mock.Config{TTFT: 5, ITL: 1})
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--concurrency", "2", "--request-count", "30", "--warmup-request-count", "6",
		"--server-metrics-interval", "0.05", "--server-metrics-formats", "json,jsonl,parquet", "--artifact-dir", "out")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	out := filepath.Join(dir, "out")
	assert.NoFileExists(t, filepath.Join(out, "server_metrics_export.csv"), "only the formats asked for")

	cols, meta, rows := parquetRows(t, filepath.Join(out, "server_metrics_export.parquet"))
	head, tail := []string{"endpoint_url", "metric_name", "metric_type", "unit", "description", "timestamp_ns"},
		[]string{"value", "sum", "count", "bucket_le", "bucket_count"}
	require.Greater(t, len(cols), len(head)+len(tail))
	assert.Equal(t, head, cols[:len(head)], "AIPerf's column order")
	assert.Equal(t, tail, cols[len(cols)-len(tail):])
	labelCols := cols[len(head) : len(cols)-len(tail)]
	assert.True(t, slices.IsSorted(labelCols))
	assert.Contains(t, labelCols, "model_name", "a column per label key")

	client := readJSON(t, filepath.Join(out, "profile_export_aiperf.json"))
	assert.Equal(t, client["benchmark_id"], meta("aiperf.benchmark_id"))
	assert.Equal(t, "1.0", meta("aiperf.schema_version"))
	assert.Equal(t, "ServerMetricsParquetExporter", meta("aiperf.exporter"))
	var labelMeta []string
	require.NoError(t, json.Unmarshal([]byte(meta("aiperf.label_columns")), &labelMeta))
	assert.Equal(t, labelCols, labelMeta)

	jsonl := scrapes(t, filepath.Join(out, "server_metrics_export.jsonl"))
	require.Len(t, jsonl, 1, "the mock's /metrics")
	var endpoint string
	var times []int64
	for e, byTime := range jsonl {
		endpoint, times = e, slices.Sorted(maps.Keys(byTime))
	}
	first := int64(-1)
	spanTimes := map[int64]bool{}
	for _, r := range rows {
		ts := r["timestamp_ns"].(int64)
		spanTimes[ts] = true
		if first < 0 || ts < first {
			first = ts
		}
	}
	i, _ := slices.BinarySearch(times, first)
	require.Positive(t, i, "baseline and warmup scrapes precede the span")
	ref := jsonl[endpoint][times[i-1]]
	assert.Less(t, len(spanTimes), len(times), "the warmup's scrapes are left out")

	types := map[string]int{}
	var promptTokens float64
	var promptAt int64
	for _, r := range rows {
		require.Equal(t, endpoint, r["endpoint_url"])
		name, typ, ts := r["metric_name"].(string), r["metric_type"].(string), r["timestamp_ns"].(int64)
		scrape, ok := jsonl[endpoint][ts]
		require.True(t, ok, "row at %d is a scrape of the JSONL export", ts)
		s := sampleOf(t, scrape, name, r, labelCols)
		types[typ]++
		switch typ {
		case "gauge", "unknown":
			require.NotNil(t, s.Value)
			assert.Equal(t, *s.Value, r["value"], "%s at %d", name, ts)
			assert.Nil(t, r["bucket_le"])
		case "counter":
			base := sampleOf(t, ref, name, r, labelCols)
			assert.InDelta(t, max(*s.Value-*base.Value, 0), r["value"].(float64), 1e-9, "%s at %d", name, ts)
			if name == "vllm:prompt_tokens" && ts > promptAt {
				promptTokens, promptAt = r["value"].(float64), ts
			}
		case "histogram":
			base := sampleOf(t, ref, name, r, labelCols)
			le := r["bucket_le"].(string)
			assert.Nil(t, r["value"])
			assert.InDelta(t, s.Buckets[le]-base.Buckets[le], r["bucket_count"].(float64), 1e-9, "%s le %s at %d", name, le, ts)
			assert.InDelta(t, s.Count-base.Count, r["count"].(float64), 1e-9)
			assert.InDelta(t, s.Sum-base.Sum, r["sum"].(float64), 1e-9)
		default:
			t.Fatalf("metric_type %q", typ)
		}
	}
	for _, typ := range []string{"gauge", "counter", "histogram"} {
		assert.Positive(t, types[typ], "rows of %s", typ)
	}
	usage := client["usage_prompt_tokens"].(map[string]any)
	assert.Equal(t, usage["sum"], promptTokens, "the prompt-token counter's increase over the span: the profiling requests' usage")
}
