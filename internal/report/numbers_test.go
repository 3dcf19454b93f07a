package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/result"
)

// nonFiniteRun is minimalRun with request_latency's avg +Inf, its p99 NaN
// (a statistic a store lacks) and request_throughput -Inf, as a stored run
// another tool wrote reads back.
func nonFiniteRun(t *testing.T) *result.Run {
	t.Helper()
	run := minimalRun()
	for i := range run.Profiling.Metrics {
		m := &run.Profiling.Metrics[i]
		switch m.Tag {
		case metrics.TagRequestLatency:
			st := *m.Stats
			st.Avg, st.P99 = math.Inf(1), math.NaN()
			m.Stats = &st
		case metrics.TagRequestThroughput:
			m.Value = math.Inf(-1)
		}
	}
	return run
}

// TestNonFiniteStatisticsShowAsNotANumber: in the console, the CSV and
// the JSON export a statistic that is not a finite number is n/a or null,
// never 0, and its metric is there.
func TestNonFiniteStatisticsShowAsNotANumber(t *testing.T) {
	run := nonFiniteRun(t)

	var buf bytes.Buffer
	Console(Wide(&buf), run)
	latency := lineOf(t, buf.String(), "Request Latency (ms)")
	cells := strings.Split(latency, "│")
	assert.Equal(t, "n/a", strings.TrimSpace(cells[2]), "avg: %s", latency)
	assert.Equal(t, "n/a", strings.TrimSpace(cells[5]), "p99: %s", latency)
	assert.Equal(t, "250.00", strings.TrimSpace(cells[3]), "min kept: %s", latency)
	throughput := strings.Split(lineOf(t, buf.String(), "Request Throughput"), "│")
	assert.Equal(t, "n/a", strings.TrimSpace(throughput[2]))

	buf.Reset()
	require.NoError(t, WriteCSV(&buf, run))
	r := csv.NewReader(&buf)
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	require.NoError(t, err)
	byName := map[string][]string{}
	for _, row := range rows {
		byName[row[0]] = row
	}
	assert.Equal(t, "n/a", byName["Request Latency (ms)"][1], "avg")
	assert.Equal(t, "n/a", byName["Request Latency (ms)"][13], "p99")
	assert.Equal(t, "250.00", byName["Request Latency (ms)"][2], "min")
	assert.Equal(t, []string{"Request Throughput (requests/sec)", "n/a"}, byName["Request Throughput (requests/sec)"])

	buf.Reset()
	require.NoError(t, WriteJSON(&buf, run))
	var doc map[string]map[string]any
	var all map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(buf.Bytes(), &all))
	doc = map[string]map[string]any{}
	for _, tag := range []string{"request_latency", "request_throughput"} {
		var block map[string]any
		require.NoError(t, json.Unmarshal(all[tag], &block), tag)
		doc[tag] = block
	}
	assert.Contains(t, doc["request_latency"], "avg")
	assert.Nil(t, doc["request_latency"]["avg"])
	assert.Nil(t, doc["request_latency"]["p99"])
	assert.Equal(t, 250.0, doc["request_latency"]["min"])
	assert.Equal(t, map[string]any{"unit": "requests/sec", "avg": nil}, doc["request_throughput"])
}

// TestRunJSON: a run's JSON as runs show writes it is encoding/json's for
// a finite run (the summaries after the other fields), and has null where
// a value or a statistic is not a finite number.
func TestRunJSON(t *testing.T) {
	run := minimalRun()
	var got bytes.Buffer
	require.NoError(t, RunJSON(&got, run))
	want, err := json.Marshal(run)
	require.NoError(t, err)
	var a, b map[string]any
	require.NoError(t, json.Unmarshal(got.Bytes(), &a))
	require.NoError(t, json.Unmarshal(want, &b))
	assert.Equal(t, b, a)

	got.Reset()
	require.NoError(t, RunJSON(&got, nonFiniteRun(t)))
	var doc struct {
		Profiling struct {
			Metrics []struct {
				Tag   string
				Value *float64
				Stats map[string]any
			}
		}
	}
	require.NoError(t, json.Unmarshal(got.Bytes(), &doc), got.String())
	seen := 0
	for _, m := range doc.Profiling.Metrics {
		switch m.Tag {
		case metrics.TagRequestLatency:
			seen++
			assert.Contains(t, m.Stats, "avg")
			assert.Nil(t, m.Stats["avg"])
			assert.Nil(t, m.Stats["p99"])
			assert.Equal(t, 250.0, m.Stats["min"])
		case metrics.TagRequestThroughput:
			seen++
			assert.Nil(t, m.Value)
		}
	}
	assert.Equal(t, 2, seen, "both metrics are there")
}

// TestHugeValuesInTheConsoleAndCSV: a huge value is in scientific notation
// in the console's tables and the CSV export, ordinary ones as before.
func TestHugeValuesInTheConsoleAndCSV(t *testing.T) {
	run := minimalRun()
	for i := range run.Profiling.Metrics {
		if m := &run.Profiling.Metrics[i]; m.Tag == metrics.TagRequestThroughput {
			m.Value = 1e300
		}
	}
	var buf bytes.Buffer
	Console(&buf, run)
	assert.Contains(t, lineOf(t, buf.String(), "Request Throughput"), "1.00e+300")
	buf.Reset()
	require.NoError(t, WriteCSV(&buf, run))
	assert.Contains(t, buf.String(), "Request Throughput (requests/sec),1.00e+300\r\n")
	assert.Contains(t, buf.String(), ",250.00,", "ordinary values keep two decimals")
}

// lineOf is the first line of out that contains s.
func lineOf(t *testing.T, out, s string) string {
	t.Helper()
	for line := range strings.SplitSeq(out, "\n") {
		if strings.Contains(line, s) {
			return line
		}
	}
	require.Failf(t, "no line", "none has %q in:\n%s", s, out)
	return ""
}
