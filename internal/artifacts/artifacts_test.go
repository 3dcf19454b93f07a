package artifacts

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

// exportJSON is a profile_export_aiperf.json as this tool writes it.
func exportJSON(model string, concurrency int) string {
	return fmt.Sprintf(`{"schema_version":"1.5","time_to_first_token":{"unit":"ms","avg":20,"p99":31.5,"count":3},
"request_throughput":{"unit":"requests/sec","avg":12.5},"output_token_throughput":{"unit":"tokens/sec","avg":100},
"telemetry_data":{"summary":{},"endpoints":{"h:9400":{"gpus":{"gpu_0":{},"gpu_1":{}}}}},
"control_hooks":[{"hook":"reset_kv_cache","ok":true,"started_at_ns":999}],
"input_config":{"models":{"items":[{"name":%q}]},"phases":[{"name":"warmup","concurrency":1},{"name":"profiling","concurrency":%d}],
"aiperf_go":{"slice_duration":0.5}}}`, model, concurrency)
}

// jsonlLine is a profile_export.jsonl line: sent at start ms, ttft and
// latency ms, osl tokens; failed lines carry an error.
func jsonl(start, ttft, latency float64, osl int, failed bool) string {
	ns := func(ms float64) int64 { return 1_700_000_000_000_000_000 + int64(ms*1e6) }
	if failed {
		return fmt.Sprintf(`{"metadata":{"request_start_ns":%d,"request_end_ns":%d,"benchmark_phase":"profiling"},"metrics":{},`+
			`"error":{"code":500,"type":"Internal Server Error","message":"boom"}}`+"\n", ns(start), ns(start+latency))
	}
	return fmt.Sprintf(`{"metadata":{"request_start_ns":%d,"request_end_ns":%d,"benchmark_phase":"profiling"},"metrics":{`+
		`"time_to_first_token":{"value":%g,"unit":"ms"},"inter_token_latency":{"value":%g,"unit":"ms"},`+
		`"request_latency":{"value":%g,"unit":"ms"},"output_sequence_length":{"value":%d,"unit":"tokens"},`+
		`"inter_chunk_latency":{"value":[1,2,3],"unit":"ms"}},"error":null}`+"\n",
		ns(start), ns(start+latency), ttft, (latency-ttft)/float64(max(osl-1, 1)), latency, osl)
}

// runDir writes a run's two marker files (and what extra asks) into dir.
func runDir(t *testing.T, dir string, concurrency int) {
	t.Helper()
	write(t, filepath.Join(dir, FileJSON), exportJSON("m", concurrency))
	write(t, filepath.Join(dir, FileJSONL), jsonl(0, 10, 40, 4, false)+jsonl(5, 12, 45, 4, false))
}

func aggregateFile(t *testing.T, dir string, concurrency int) {
	t.Helper()
	write(t, filepath.Join(dir, FileAggregate), fmt.Sprintf(`{"schema_version":"1.0","metadata":{"aggregation_type":"confidence",
"num_profile_runs":3,"num_successful_runs":3,"parameters":[{"name":"concurrency","value":%d}]},
"metrics":{"time_to_first_token_p99":{"mean":30,"ci_low":28,"ci_high":32,"unit":"ms"},
"request_throughput_avg":{"mean":12,"ci_low":null,"ci_high":null,"unit":"requests/sec"},
"custom_metric":{"mean":9,"unit":"x"}}}`, concurrency))
}

func found(t *testing.T, paths ...string) []string {
	t.Helper()
	fs, err := Find(paths)
	require.NoError(t, err)
	var out []string
	for _, f := range fs {
		rel, err := filepath.Rel(paths[f.Root], f.Dir)
		require.NoError(t, err)
		out = append(out, fmt.Sprintf("%d:%s", f.Root, filepath.ToSlash(rel)))
	}
	return out
}

func TestFindLayouts(t *testing.T) {
	root := t.TempDir()
	// A single run.
	one := filepath.Join(root, "one")
	runDir(t, one, 4)
	write(t, filepath.Join(one, "plots", "x.png"), "")
	assert.Equal(t, []string{"0:."}, found(t, one))

	// A comma-list sweep of one trial: the aggregate shadows are not runs.
	sw := filepath.Join(root, "sweep")
	for _, c := range []int{1, 2} {
		runDir(t, filepath.Join(sw, fmt.Sprintf("concurrency_%d", c)), c)
		aggregateFile(t, filepath.Join(sw, "aggregate", fmt.Sprintf("concurrency_%d", c)), c)
	}
	assert.Equal(t, []string{"0:concurrency_1", "0:concurrency_2"}, found(t, sw))

	// Repeated trials: aggregate/<cell>, profile_runs/trial_N/<cell>.
	rep := filepath.Join(root, "repeated")
	for _, c := range []string{"concurrency_1", "concurrency_2"} {
		aggregateFile(t, filepath.Join(rep, "aggregate", c), 1)
		for _, tr := range []string{"trial_0001", "trial_0002"} {
			runDir(t, filepath.Join(rep, "profile_runs", tr, c), 1)
		}
	}
	assert.Equal(t, []string{"0:aggregate/concurrency_1", "0:aggregate/concurrency_2"}, found(t, rep))
	// Asking for the trials themselves gives them.
	assert.Len(t, found(t, filepath.Join(rep, "profile_runs")), 4)

	// Independent trials and --num-profile-runs: <cell>/aggregate, <cell>/profile_runs/*.
	ind := filepath.Join(root, "independent")
	aggregateFile(t, filepath.Join(ind, "c1", "aggregate"), 1)
	runDir(t, filepath.Join(ind, "c1", "profile_runs", "run_0001"), 1)
	runDir(t, filepath.Join(ind, "c1", "profile_runs", "run_0002"), 1)
	assert.Equal(t, []string{"0:c1/aggregate"}, found(t, ind))

	// An `aiperf sweep` cell: the aggregate beside its trial_NNNN.
	ours := filepath.Join(root, "ours", "scan")
	aggregateFile(t, filepath.Join(ours, "concurrency_4"), 4)
	runDir(t, filepath.Join(ours, "concurrency_4", "trial_0001"), 4)
	runDir(t, filepath.Join(ours, "concurrency_4", "trial_0002"), 4)
	assert.Equal(t, []string{"0:concurrency_4"}, found(t, ours))

	// Several paths: in path order, each run once.
	assert.Equal(t, []string{"0:concurrency_1", "0:concurrency_2", "1:."}, found(t, sw, one, one))
}

func TestFindErrors(t *testing.T) {
	root := t.TempDir()
	_, err := Find([]string{filepath.Join(root, "nope")})
	assert.ErrorContains(t, err, "nope: no such directory")
	write(t, filepath.Join(root, "file"), "x")
	_, err = Find([]string{filepath.Join(root, "file")})
	assert.ErrorContains(t, err, "is not a directory")
	empty := filepath.Join(root, "empty")
	require.NoError(t, os.MkdirAll(filepath.Join(empty, "sub"), 0o755))
	_, err = Find([]string{empty})
	assert.ErrorContains(t, err, "holds no run: a run's directory has profile_export.jsonl and profile_export_aiperf.json")
	// A run with only the JSONL is not one (AIPerf needs both).
	write(t, filepath.Join(empty, "sub", FileJSONL), jsonl(0, 1, 2, 2, false))
	_, err = Find([]string{empty})
	assert.ErrorContains(t, err, "holds no run")
	zst := filepath.Join(root, "zst")
	write(t, filepath.Join(zst, FileJSONL+".zst"), "x")
	_, err = Find([]string{zst})
	assert.ErrorContains(t, err, "compressed (.zst)")

	// A symlink loop ends.
	loop := filepath.Join(root, "loop")
	runDir(t, filepath.Join(loop, "a"), 1)
	require.NoError(t, os.Symlink(loop, filepath.Join(loop, "a", "back")))
	assert.Equal(t, []string{"0:a"}, found(t, loop))
}

func TestLoadRun(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, FileJSON), exportJSON("mock-model", 8))
	write(t, filepath.Join(dir, FileJSONL), jsonl(0, 10, 40, 4, false)+jsonl(5, 20, 50, 6, false)+
		jsonl(7, 0, 3, 0, true)+"\n"+`{"metadata":{"request_start_ns":`) // a torn last line
	write(t, filepath.Join(dir, sliceCSV), "Timeslice,Metric,Unit,Stat,Value\r\n0,Time to First Token,ms,avg,12.50\r\n"+
		"1,Time to First Token,ms,avg,14.00\r\n1,Request Count,requests,avg,3\r\nbad,row,,,\r\n")
	write(t, filepath.Join(dir, gpuJSONL), `{"gpu_index":0,"gpu_uuid":"GPU-a","timestamp_ns":5,"telemetry_data":{"nvidia_gpu_utilization":40,"nvidia_memory_used":null}}
{"gpu_index":1,"gpu_uuid":"GPU-b","timestamp_ns":5,"telemetry_data":{"nvidia_gpu_utilization":60}}
`)
	r, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, "mock-model", r.Model)
	assert.Equal(t, 8, r.Concurrency, "the profiling phase's")
	assert.Equal(t, 2, r.GPUs)
	assert.Equal(t, 0.5, r.SliceSeconds)
	assert.Equal(t, []Hook{{Hook: "reset_kv_cache", OK: true, StartedAtNs: 999}}, r.Hooks)
	v, ok := r.Stat("time_to_first_token", "p99")
	require.True(t, ok)
	assert.Equal(t, 31.5, v.Mean)
	assert.True(t, math.IsNaN(v.Low), "a run's value has no interval")
	v, ok = r.Stat("request_throughput", "value")
	require.True(t, ok, "a derived metric's avg answers value")
	assert.Equal(t, 12.5, v.Mean)
	assert.Equal(t, "ms", r.Units["time_to_first_token"])

	require.Len(t, r.Requests, 3)
	q := r.Requests[1]
	assert.True(t, q.Timed)
	assert.EqualValues(t, 5e6, q.StartNs-r.Requests[0].StartNs)
	assert.EqualValues(t, 50e6, q.EndNs-q.StartNs)
	assert.Equal(t, 20.0, q.TTFTMs)
	assert.Equal(t, 6.0, q.ITLMs)
	assert.Equal(t, 50.0, q.LatencyMs)
	assert.Equal(t, 6.0, q.OSL)
	assert.True(t, r.Requests[2].Failed)
	assert.True(t, math.IsNaN(r.Requests[2].TTFTMs))
	require.Len(t, r.Notes, 2)
	assert.Contains(t, r.Notes[0], "profile_export.jsonl: skipped 1 line(s) that are not records (line 5:")
	assert.Contains(t, r.Notes[1], "profile_export_aiperf_timeslices.csv: skipped 1 line(s)")

	assert.Equal(t, []SliceRow{{0, "Time to First Token", "ms", "avg", 12.5}, {1, "Time to First Token", "ms", "avg", 14},
		{1, "Request Count", "requests", "avg", 3}}, r.Slices)
	require.Len(t, r.GPU, 2)
	assert.Equal(t, GPUSample{TimestampNs: 5, GPU: "GPU-a", Values: map[string]float64{"nvidia_gpu_utilization": 40}}, r.GPU[0])
}

func TestLoadAggregate(t *testing.T) {
	rep := t.TempDir()
	cell := filepath.Join(rep, "aggregate", "concurrency_2")
	aggregateFile(t, cell, 2)
	runDir(t, filepath.Join(rep, "profile_runs", "trial_0002", "concurrency_2"), 2)
	runDir(t, filepath.Join(rep, "profile_runs", "trial_0001", "concurrency_2"), 2)
	runDir(t, filepath.Join(rep, "profile_runs", "trial_0001", "concurrency_1"), 1)
	r, err := Load(cell)
	require.NoError(t, err)
	assert.True(t, r.Aggregate)
	assert.Equal(t, 3, r.N)
	assert.Equal(t, 2, r.Concurrency)
	assert.Equal(t, "m", r.Model, "from its trials")
	assert.Equal(t, 2, r.GPUs)
	assert.Equal(t, Value{30, 28, 32}, r.Stats["time_to_first_token.p99"])
	v := r.Stats["request_throughput.avg"]
	assert.Equal(t, 12.0, v.Mean)
	assert.False(t, !math.IsNaN(v.Low), "no interval when the file has none")
	assert.Equal(t, 9.0, r.Stats["custom_metric.avg"].Mean, "a key without a stat suffix is its avg")
	require.Len(t, r.Trials, 2, "the cell's trials, not the other cell's")
	assert.True(t, strings.HasSuffix(r.Trials[0].Dir, filepath.Join("trial_0001", "concurrency_2")))
	assert.Len(t, r.Trials[1].Requests, 2)
	assert.Empty(t, r.Requests)
}

func TestLoadBounds(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, FileJSON), exportJSON("m", 1))
	long := `{"metadata":{},"metrics":{"inter_chunk_latency":{"value":[` + strings.Repeat("1,", MaxLineBytes/2) + `1]}}}`
	write(t, filepath.Join(dir, FileJSONL), jsonl(0, 1, 2, 2, false)+long+"\n")
	_, err := Load(dir)
	assert.ErrorContains(t, err, "line 2 is longer than 16777216 bytes")

	write(t, filepath.Join(dir, FileJSON), `{"time_to_first_token":`)
	_, err = Load(dir)
	assert.ErrorContains(t, err, "profile_export_aiperf.json: unexpected end of JSON input")

	write(t, filepath.Join(dir, FileJSON), exportJSON("m", 1))
	write(t, filepath.Join(dir, FileJSONL), jsonl(0, 1, 2, 2, false))
	write(t, filepath.Join(dir, sliceCSV), "Timeslice,Metric\n0,x\n")
	_, err = Load(dir)
	assert.ErrorContains(t, err, `no "Unit" column`)
}

// BenchmarkLoad reads a run of 100,000 requests: the reader is one pass
// over the file, linear in its lines.
func BenchmarkLoad(b *testing.B) {
	dir := b.TempDir()
	var sb strings.Builder
	for i := range 100_000 {
		sb.WriteString(jsonl(float64(i), 10, 40, 16, i%100 == 0))
	}
	if err := os.WriteFile(filepath.Join(dir, FileJSONL), []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, FileJSON), []byte(exportJSON("m", 1)), 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(sb.Len()))
	for b.Loop() {
		r, err := Load(dir)
		if err != nil || len(r.Requests) != 100_000 {
			b.Fatal(err)
		}
	}
}
