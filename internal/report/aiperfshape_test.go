package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/servermetrics"
)

// start_time and end_time are AIPerf's naive datetime.fromtimestamp(ns /
// 1e9).isoformat(): local time, no zone, microseconds (none when zero).
func TestTimestampIsNaiveLocal(t *testing.T) {
	plus1 := time.FixedZone("CET", 3600)
	at := time.Unix(0, wallNs) // 2026-01-02T03:04:05Z
	assert.Equal(t, "2026-01-02T04:04:05", isoLocal(at, plus1), "whole second: no fraction, as isoformat")
	assert.Equal(t, "2026-01-02T04:04:05.200000", isoLocal(at.Add(200*time.Millisecond), plus1))
	assert.Equal(t, "2026-01-02T04:04:05.000002", isoLocal(at.Add(1500*time.Nanosecond), plus1), "to the nearest microsecond")
	assert.Equal(t, "2026-01-02T03:04:05.123456", isoLocal(at.Add(123456*time.Microsecond), time.UTC))
	assert.Nil(t, timestamp(time.Time{}))
}

// profile_export_raw.jsonl leaves None out, as AIPerf's exclude_none dump:
// no null status, error or metadata time on a success.
func TestRawJSONLLeavesNoneOut(t *testing.T) {
	run := minimalRun()
	for i := range run.Records {
		run.Records[i].Raw = &metrics.Raw{Payload: []byte(`{"model":"m"}`),
			Responses: []metrics.RawResponse{{At: run.Records[i].EndNs, Data: []byte(`{"x":1}`), Whole: true}}}
	}
	run.Records[1].Error = &metrics.Error{Type: "IncompleteStream", Message: "closed"}
	var buf bytes.Buffer
	require.NoError(t, WriteRawJSONL(&buf, run))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 2)
	assert.NotContains(t, lines[0], "null")
	var ok, failed map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &ok))
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &failed))
	for _, k := range []string{"error", "status"} {
		assert.NotContains(t, ok, k)
	}
	md := ok["metadata"].(map[string]any)
	for _, k := range []string{"request_ack_ns", "cancellation_time_ns", "credit_issued_ns", "credit_received_ns"} {
		assert.NotContains(t, md, k)
	}
	assert.Equal(t, map[string]any{"code": 0.0, "type": "IncompleteStream", "message": "closed"}, failed["error"])
}

// The time slices hold what the summary exports hold: sum after max (AIPerf's
// STAT_KEYS), and not AIPerf's INTERNAL metrics.
func TestTimeslicesSumAndNoInternal(t *testing.T) {
	run := fixtureRun(t)
	var profiling []metrics.Record
	for _, r := range run.Records {
		if r.PhaseKind == plan.KindProfiling {
			profiling = append(profiling, r)
		}
	}
	run.Timeslices = []metrics.Slice{{StartNs: wallNs, EndNs: wallNs + int64(time.Second), Complete: true,
		Summary: metrics.Summarize(profiling, true)}}
	_, ok := run.Timeslices[0].Summary.Get(metrics.TagMinRequestTimestamp)
	require.True(t, ok, "the summary has it; the exports leave it out")

	var js, cs bytes.Buffer
	require.NoError(t, WriteTimeslicesJSON(&js, run))
	require.NoError(t, WriteTimeslicesCSV(&cs, run))
	assert.NotContains(t, js.String(), metrics.TagMinRequestTimestamp)
	assert.NotContains(t, js.String(), metrics.TagMaxResponseTimestamp)
	assert.NotContains(t, cs.String(), "Timestamp")
	assert.Contains(t, cs.String(), "0,Time to First Token,ms,max,48.00\r\n0,Time to First Token,ms,sum,172.00\r\n0,Time to First Token,ms,p1,")
}

// gpuRun is minimalRun with GPU telemetry: two GPUs, one without a host.
func gpuRun() *result.Run {
	run := minimalRun()
	stats := map[string]float64{"avg": 200, "min": 100, "max": 300, "std": 79.06, "count": 5, "p1": 102, "p5": 110,
		"p10": 120, "p25": 150, "p50": 200, "p75": 250, "p90": 280, "p95": 290, "p99": 298}
	gpu := func(index, host string) servermetrics.Series {
		l := map[string]string{"gpu": index, "UUID": "GPU-" + index, "modelName": "NVIDIA H100"}
		if host != "" {
			l["Hostname"] = host
		}
		return servermetrics.Series{Source: servermetrics.SourceGPU, Endpoint: "http://dcgm:9400/metrics",
			Metric: "DCGM_FI_DEV_POWER_USAGE", Labels: l, Type: servermetrics.TypeGauge, Phase: "profiling", Stats: stats}
	}
	run.Server = &servermetrics.Result{Span: "profiling",
		Endpoints: []servermetrics.Endpoint{{URL: "http://dcgm:9400/metrics", Source: servermetrics.SourceGPU}},
		Series:    []servermetrics.Series{gpu("0", "node1"), gpu("1", "")}}
	return run
}

// The GPU table of profile_export_aiperf.csv is AIPerf's
// (_write_telemetry_section): after two empty rows, every line CRLF, sum
// after max, and the optional Hostname column when a GPU has a host (a GPU
// without one: "None", Python's str(None)).
func TestCSVGPUSectionAsAIPerf(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, WriteCSV(&buf, gpuRun()))
	out := buf.String()
	assert.Contains(t, out, "(tokens/sec),1495.36\r\n\r\n\r\nEndpoint,GPU_Index,GPU_Name,GPU_UUID,Platform,Metric,"+
		"avg,min,max,sum,p1,p5,p10,p25,p50,p75,p90,p95,p99,std,Hostname\r\n", "two empty rows, then the header")
	assert.NotContains(t, out, "\r\n\r\n\r\n\r\n")
	assert.Equal(t, strings.Count(out, "\n"), strings.Count(out, "\r\n"), "every line ends in CRLF")
	assert.Contains(t, out, "\r\ndcgm:9400,0,NVIDIA H100,GPU-0,nvidia,NVIDIA GPU Power Usage (W),200.00,100.00,300.00,1000.00,102.00,")
	assert.Contains(t, out, ",79.06,node1\r\n")
	assert.Contains(t, out, ",79.06,None\r\n")

	sections := strings.Split(out, "\r\n\r\n\r\n")
	require.Len(t, sections, 2)
	rows, err := csv.NewReader(strings.NewReader(sections[1])).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 3)
	for _, row := range rows {
		assert.Len(t, row, 21)
	}
}
