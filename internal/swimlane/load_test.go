package swimlane

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Load keeps the timed requests: cancelled and untimed records left out
// (with a note), sessions by x_correlation_id in first-seen order, a
// session's requests by turn, errors kept as text, the warmup flagged.
func TestLoadRecords(t *testing.T) {
	r := load(t, []string{
		rec("s1", "conv-1", 1, 50, 90, nil, ""),
		rec("s2", "conv-2", 0, 10, 30, nil, `{"code":500,"type":"Internal Server Error","message":"boom"}`),
		"",
		rec("s1", "conv-1", 0, 0, 40, nil, ""),
		rec("s3", "conv-1", 0, 5, 6, map[string]any{"was_cancelled": true}, ""),
		rec("s4", "conv-4", 0, 5, 6, map[string]any{"request_end_ns": nil}, ""),
		rec("s5", "conv-5", 0, 1, 2, map[string]any{"benchmark_phase": "warmup"}, ""),
		rec("", "conv-6", 0, 1, 2, nil, ""),
	}, "")
	require.Len(t, r.Requests, 5)
	var ids []string
	for _, s := range r.Sessions {
		ids = append(ids, s.ID)
	}
	assert.Equal(t, []string{"s1", "s2", "s5", "conv-6"}, ids, "a record without x_correlation_id keys on conversation_id")
	s1 := r.SessionRequests(0)
	require.Len(t, s1, 2)
	assert.Equal(t, []int32{0, 1}, []int32{r.Requests[s1[0]].Turn, r.Requests[s1[1]].Turn})
	assert.Equal(t, ms(0), r.Sessions[0].First)
	assert.Equal(t, ms(90), r.Sessions[0].Last)
	failed := r.Requests[r.SessionRequests(1)[0]]
	assert.True(t, failed.Failed())
	assert.Equal(t, []string{"500 Internal Server Error: boom"}, r.Errors)
	assert.True(t, r.Requests[r.SessionRequests(2)[0]].Warmup)
	q := r.Requests[s1[0]]
	assert.InDelta(t, 20.5, q.TTFTms, 1e-6)
	assert.InDelta(t, 40, q.LatencyMs, 1e-6)
	assert.Equal(t, int32(16), q.ISL)
	assert.Equal(t, int32(4), q.OSL)
	assert.Contains(t, strings.Join(r.Notes, "\n"), "left out 1 cancelled and 1 untimed record(s)")
}

// Every input Load cannot draw is refused with the file (and line) named.
func TestLoadRefuses(t *testing.T) {
	ok := rec("s1", "c1", 0, 0, 10, nil, "")
	for name, c := range map[string]struct {
		lines  []string
		config string
		want   []string
	}{
		"malformed line":  {[]string{ok, ok, `{"metadata": {"x_correlation_id": "s2",`}, "", []string{FileJSONL + ":3: not a JSON record"}},
		"not an object":   {[]string{ok, `[1, 2]`}, "", []string{FileJSONL + ":2: not a JSON record"}},
		"trailing bytes":  {[]string{ok + ` x`}, "", []string{FileJSONL + ":1: not a JSON record", "after the record's end"}},
		"end before":      {[]string{ok, rec("s1", "c1", 1, 20, 10, nil, "")}, "", []string{FileJSONL + ":2: request_end_ns", "is before request_start_ns"}},
		"no session":      {[]string{rec("", "", 0, 0, 1, nil, "")}, "", []string{FileJSONL + ":1: the record has neither x_correlation_id nor conversation_id"}},
		"wrong type":      {[]string{rec("s1", "c1", 0, 0, 1, map[string]any{"request_start_ns": "soon"}, "")}, "", []string{FileJSONL + ":1:", "metadata.request_start_ns: want an integer"}},
		"only cancelled":  {[]string{rec("s1", "c1", 0, 0, 1, map[string]any{"was_cancelled": true}, "")}, "", []string{"no timed request", "nothing to draw"}},
		"empty":           {[]string{""}, "", []string{"no timed request"}},
		"bad config":      {[]string{ok}, `{"input_config": `, []string{FileJSON + ": not AIPerf's JSON export"}},
		"unescaped ctrl":  {[]string{ok, "{\"metadata\": {\"x_correlation_id\": \"a\tb\"}}"}, "", []string{FileJSONL + ":2:", "control character"}},
		"unbalanced json": {[]string{`{"metadata": {"a": [1, 2}}}`}, "", []string{FileJSONL + ":1:", "unbalanced"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Load(context.Background(), writeRun(t, c.lines, c.config))
			require.Error(t, err)
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// A directory without profile_export.jsonl says which file and who writes
// it; a missing directory says so.
func TestLoadMissing(t *testing.T) {
	dir := t.TempDir()
	_, err := Load(context.Background(), dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join(dir, FileJSONL)+" not found")
	assert.Contains(t, err.Error(), "`aiperf profile` writes it")
	assert.Contains(t, err.Error(), "unless --export-level summary")
	err = Check(filepath.Join(dir, "nope"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "run directory "+filepath.Join(dir, "nope")+" does not exist")
}

// A line longer than MaxLineBytes is refused at its number.
func TestLoadLongLine(t *testing.T) {
	ok := rec("s1", "c1", 0, 0, 10, nil, "")
	long := `{"metadata": {"x": "` + strings.Repeat("a", MaxLineBytes) + `"}}`
	_, err := Load(context.Background(), writeRun(t, []string{ok, long}, ""))
	require.Error(t, err)
	assert.Contains(t, err.Error(), FileJSONL+":2: the line is longer than")
}

// Ctrl-C stops the reading.
func TestLoadCancelled(t *testing.T) {
	lines := make([]string, 10_000)
	for i := range lines {
		lines[i] = rec("s1", "c1", i, float64(i), float64(i)+1, nil, "")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Load(ctx, writeRun(t, lines, ""))
	require.ErrorIs(t, err, context.Canceled)
}

// The ramp comes from the profiling phase (AIPerf v2), else loadgen
// (AIPerf v1), else ours; the benchmark's end from the measured duration.
func TestReadConfig(t *testing.T) {
	ok := []string{rec("s1", "c1", 0, 0, 10, nil, "")}
	for name, c := range map[string]struct {
		config      string
		ramp, bench float64 // NaN: none
	}{
		"aiperf v2": {`{"benchmark_duration": {"unit": "sec", "avg": 12.5}, "input_config": {"phases": [
			{"kind": "warmup", "exclude_from_results": true, "concurrency_ramp": {"duration": 3}},
			{"kind": "profiling", "concurrency_ramp": {"duration": 7}}]}}`, 7, 12.5},
		"aiperf v1": {`{"input_config": {"loadgen": {"concurrency_ramp_duration": 4, "benchmark_duration": 60}}}`, 4, 60},
		"ours": {`{"benchmark_duration": {"unit": "sec", "avg": 0.43}, "input_config": {"phases": [{"kind": "profiling"}],
			"aiperf_go": {"concurrency_ramp_duration": 1}}}`, 1, 0.43},
		"none": {`{"input_config": {}}`, math.NaN(), math.NaN()},
	} {
		t.Run(name, func(t *testing.T) {
			r := load(t, ok, c.config)
			check := func(got *float64, want float64) {
				if math.IsNaN(want) {
					assert.Nil(t, got)
				} else if assert.NotNil(t, got) {
					assert.InDelta(t, want, *got, 1e-9)
				}
			}
			check(r.RampS, c.ramp)
			check(r.BenchEndS, c.bench)
		})
	}
	r := load(t, ok, "")
	assert.Contains(t, strings.Join(r.Notes, "\n"), "no "+FileJSON)
}

// decodeRecord reads what encoding/json reads of a line: escapes in keys
// and strings, nulls, numbers written as floats, blanks, fields in any
// order, nested values skipped.
func TestDecodeRecord(t *testing.T) {
	line := ` { "error" : null, "metrics": {"x": {"value": [1, {"a": "]}\""}], "unit": "ms"},
		"time_to_first_token": {"unit": "s", "value": 0.25}, "request_latency": null},
		"metadata": {"x_correlation_id": "s\u00e9\"1", "conv\u0065rsation_id": "c\\1", "turn_index": 2.0,
		"request_start_ns": 1796357517000000000, "request_end_ns": 1796357517000000001, "agent_depth": 1,
		"parent_correlation_id": null, "nested": {"deep": [[[]]]}} } `
	var r record
	require.NoError(t, decodeRecord([]byte(line), &r))
	assert.Equal(t, "sé\"1", string(r.correlation))
	assert.Equal(t, `c\1`, string(r.conversation))
	assert.Equal(t, int64(2), r.turn)
	assert.Equal(t, int64(1796357517000000000), r.start)
	assert.Equal(t, int64(1796357517000000001), r.end)
	assert.True(t, r.hasStart && r.hasEnd && r.hasTurn)
	assert.InDelta(t, 250, r.ttft.ms(), 1e-6)
	assert.False(t, r.latency.ok)
	assert.Nil(t, r.parent)
	assert.Equal(t, 1.0, r.depth)
	assert.Equal(t, "", errorText(r.err))
}
