package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/runner"
)

// TestProfileSweepAggregate: every sweep profile runs in AIPerf's layout
// writes AIPerf's sweep aggregate (profile_export_aiperf_sweep.json and
// .csv) where AIPerf does: <dir>/sweep_aggregate/ for one trial and for
// independent trials, <dir>/aggregate/sweep_aggregate/ for repeated ones;
// each combination holds its cell's own numbers (a single trial's export,
// several trials' aggregate), and the best cells and the Pareto front are
// those of these numbers.
func TestProfileSweepAggregate(t *testing.T) {
	subprocesses(t)
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	tok := tinyTokenizer(t)
	run := func(out string, extra ...string) {
		t.Helper()
		inv := cli(t, dir, quick(m.URL, append([]string{"--tokenizer", tok, "--concurrency", "1,2", "--request-count", "4",
			"--artifact-dir", out}, extra...)...)...)
		require.Equal(t, ExitOK, inv.code, "stdout:\n%s\nstderr:\n%s", inv.stdout, inv.stderr)
	}

	run("one")
	sa := readSweepAggregate(t, filepath.Join(dir, "one", runner.AggregateDir), 2, 2)
	for i, c := range []string{"concurrency_1", "concurrency_2"} {
		exp := readJSON(t, filepath.Join(dir, "one", c, "profile_export_aiperf.json"))
		combo := sa.combos[i]
		assert.Equal(t, c, combo["cell"])
		assert.Equal(t, map[string]any{"concurrency": float64(i + 1)}, combo["parameters"])
		assert.InEpsilon(t, metricAvg(t, exp, "request_throughput"), sa.mean(i, "request_throughput_avg"), 1e-12)
		assert.InEpsilon(t, exp["time_to_first_token"].(map[string]any)["p99"], sa.mean(i, "time_to_first_token_p99"), 1e-12)
		assert.Equal(t, "requests/sec", sa.stat(i, "request_throughput_avg")["unit"])
		assert.Nil(t, sa.stat(i, "request_throughput_avg")["std"], "one trial measures no spread")
	}

	run("rep", "--num-profile-runs", "2")
	assert.NoDirExists(t, filepath.Join(dir, "rep", runner.AggregateDir))
	sa = readSweepAggregate(t, filepath.Join(dir, "rep", "aggregate", runner.AggregateDir), 4, 2)
	for i, c := range []string{"concurrency_1", "concurrency_2"} {
		agg := readJSON(t, filepath.Join(dir, "rep", "aggregate", c, runner.AggregateFile))
		assert.Equal(t, agg["metrics"], sa.combos[i]["metrics"], "the cell's aggregate over its trials")
	}

	run("ind", "--num-profile-runs", "2", "--parameter-sweep-mode", "independent")
	sa = readSweepAggregate(t, filepath.Join(dir, "ind", runner.AggregateDir), 4, 2)
	for i, c := range []string{"concurrency_1", "concurrency_2"} {
		agg := readJSON(t, filepath.Join(dir, "ind", c, "aggregate", runner.AggregateFile))
		assert.Equal(t, agg["metrics"], sa.combos[i]["metrics"])
	}
}

// sweepAggregate is a profile_export_aiperf_sweep.json read back.
type sweepAggregate struct {
	doc    map[string]any
	combos []map[string]any
}

func (s sweepAggregate) stat(i int, key string) map[string]any {
	return s.combos[i]["metrics"].(map[string]any)[key].(map[string]any)
}

func (s sweepAggregate) mean(i int, key string) float64 { return s.stat(i, key)["mean"].(float64) }

// numText is a number as AIPerf's sweep CSV writes a mean: two decimals.
func numText(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// readSweepAggregate reads the sweep aggregate in dir, checks AIPerf's
// shape, its counts (runs trials, combos combinations of --concurrency),
// the best configurations and the Pareto front against its combinations'
// numbers, and that the CSV says the same.
func readSweepAggregate(t *testing.T, dir string, runs, combos int) sweepAggregate {
	t.Helper()
	doc := readJSON(t, filepath.Join(dir, runner.SweepFile))
	assert.Equal(t, "sweep", doc["aggregation_type"])
	assert.Equal(t, float64(runs), doc["num_profile_runs"])
	assert.Equal(t, float64(runs), doc["num_successful_runs"])
	assert.Equal(t, []any{}, doc["failed_runs"])
	values := make([]any, combos)
	for i := range values {
		values[i] = float64(i + 1)
	}
	assert.Equal(t, map[string]any{"num_combinations": float64(combos),
		"sweep_parameters": []any{map[string]any{"name": "concurrency", "values": values}}}, doc["metadata"])
	s := sweepAggregate{doc: doc}
	for _, c := range doc["per_combination_metrics"].([]any) {
		s.combos = append(s.combos, c.(map[string]any))
	}
	require.Len(t, s.combos, combos)
	for _, key := range []string{"mean", "std", "min", "max", "cv", "se", "ci_low", "ci_high", "t_critical", "unit"} {
		assert.Contains(t, s.stat(0, "request_latency_p99"), key)
	}

	// The best cells and the Pareto front, from the means of the cells the
	// client drove (a cell with a CLIENT-BOUND trial, which a busy machine
	// can make of any, is listed but neither best nor on the front).
	tput := func(i int) float64 { return s.mean(i, "request_throughput_avg") }
	ttft := func(i int) float64 { return s.mean(i, "time_to_first_token_p99") }
	var driven []int
	hi, lo := -1, -1
	for i, c := range s.combos {
		if c["client_bound"] != true {
			driven = append(driven, i)
		}
	}
	if len(driven) == 0 {
		assert.Empty(t, doc["best_configurations"], "no cell the client drove: none is best")
	} else {
		hi, lo = driven[0], driven[0]
		var front []any
		for _, i := range driven {
			if tput(i) > tput(hi) {
				hi = i
			}
			if ttft(i) < ttft(lo) {
				lo = i
			}
			dominated := false
			for _, j := range driven {
				dominated = dominated || tput(j) >= tput(i) && ttft(j) <= ttft(i) && (tput(j) > tput(i) || ttft(j) < ttft(i))
			}
			if !dominated {
				front = append(front, s.combos[i]["parameters"])
			}
		}
		assert.Equal(t, map[string]any{
			"best_throughput":  map[string]any{"parameters": s.combos[hi]["parameters"], "metric": tput(hi), "unit": "requests/sec"},
			"best_latency_p99": map[string]any{"parameters": s.combos[lo]["parameters"], "metric": ttft(lo), "unit": "ms"},
		}, doc["best_configurations"])
		assert.Equal(t, front, doc["pareto_optimal"])
	}

	b, err := os.ReadFile(filepath.Join(dir, runner.SweepCSVFile))
	require.NoError(t, err)
	assert.Contains(t, string(b), "\r\n", "Python's csv line ends, as AIPerf's")
	r := csv.NewReader(strings.NewReader(string(b)))
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	require.NoError(t, err)
	header := rows[0]
	assert.Equal(t, "concurrency", header[0])
	col := slices.Index(header, "request_throughput_avg_mean")
	require.Positive(t, col, "%v", header)
	for i := range s.combos {
		assert.Equal(t, []string{"1", "2"}[i], rows[1+i][0])
		assert.Equal(t, numText(tput(i)), rows[1+i][col])
	}
	rest := rows[1+combos:] // the blank rows are skipped by the reader
	if hi >= 0 {
		assert.Equal(t, []string{"Best Configurations"}, rest[0])
		assert.Equal(t, []string{"Configuration", "concurrency", "Metric", "Unit"}, rest[1])
		assert.Equal(t, []string{"Best Throughput", []string{"1", "2"}[hi], numText(tput(hi)), "requests/sec"}, rest[2])
		assert.Equal(t, []string{"Best Latency P99", []string{"1", "2"}[lo], numText(ttft(lo)), "ms"}, rest[3])
		assert.Equal(t, []string{"Pareto Optimal Points"}, rest[4])
	}
	assert.Contains(t, rows, []string{"Number of Profile Runs", strconv.Itoa(runs)})
	assert.Contains(t, rows, []string{"Aggregation Type", "sweep"})
	return s
}
