package main

import (
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/report"
)

// longDigits is a run of digits no sane table cell holds: a huge value
// written out in full.
var longDigits = regexp.MustCompile(`\d{25}`)

// TestHugeValuesInScientificNotation: a hostile server's /metrics gauges of
// 1e300, and a stored statistic of 1e300, show in scientific notation in the
// console's Server table and its KV-cache warning (each line still fits 120
// columns), server_metrics_export.csv (4 decimals of the mantissa, as of
// its ordinary values), runs list and runs show; never as 300 digits.
func TestHugeValuesInScientificNotation(t *testing.T) {
	m := startMock(t, mock.Config{})
	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc 1e300\n"+
			"# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 6e300\n")
	}))
	t.Cleanup(hostile.Close)
	dir := t.TempDir()
	inv := cliRun(t.Context(), t, dir, quick(m.URL, "--request-count", "4", "--ui", "simple",
		"--server-metrics", hostile.URL+"/metrics", "--artifact-dir", "a")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	out := inv.stdout + inv.stderr
	assert.Contains(t, out, "6.00e+300", "the Server table's value")
	assert.Contains(t, out, "KV-cache usage max is 1.00e+302 %", "the warning's (a percentage)")
	assert.NotRegexp(t, longDigits, out)
	for line := range strings.SplitSeq(inv.stdout, "\n") {
		assert.LessOrEqual(t, utf8.RuneCountInString(line), report.MaxWidth, "%q", line)
	}

	b, err := os.ReadFile(filepath.Join(dir, "a", "server_metrics_export.csv"))
	require.NoError(t, err)
	assert.Contains(t, string(b), "1.0000e+300")
	assert.Contains(t, string(b), "6.0000e+300")
	assert.NotRegexp(t, longDigits, string(b))
	r := csv.NewReader(strings.NewReader(string(b)))
	r.FieldsPerRecord = -1 // sections of different widths
	_, err = r.ReadAll()
	assert.NoError(t, err, "still a CSV")

	db, err := sql.Open("sqlite3", filepath.Join(dir, "aiperf.db"))
	require.NoError(t, err)
	_, err = db.Exec(`UPDATE run_stats SET value = 1e300 WHERE run_id = 1 AND metric = 'time_to_first_token' AND stat = 'p99'`)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	list := cli(t, dir, "runs", "list")
	require.Equal(t, ExitOK, list.code, list.stderr)
	assert.Contains(t, list.stdout, "1.00e+300", "runs list's ttft p99")
	assert.NotRegexp(t, longDigits, list.stdout)
	show := cli(t, dir, "runs", "show", "1")
	require.Equal(t, ExitOK, show.code, show.stderr)
	assert.Contains(t, show.stdout, "1.00e+300")
	assert.NotRegexp(t, longDigits, show.stdout)
}

// TestNonFiniteStoredStatisticsAreNotZero: statistics a store holds as
// ±Inf (another tool wrote them) show as n/a in runs show and the CSV
// export, as null in the JSON export and runs show --format json, never as
// 0, and the metric whose only value is -Inf is still there.
func TestNonFiniteStoredStatisticsAreNotZero(t *testing.T) {
	m := startMock(t, mock.Config{})
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--request-count", "4", "--no-server-metrics")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	db, err := sql.Open("sqlite3", filepath.Join(dir, "aiperf.db"))
	require.NoError(t, err)
	_, err = db.Exec(`UPDATE run_stats SET value = 9e999 WHERE run_id = 1 AND metric = 'time_to_first_token' AND stat IN ('avg', 'p99', 'max')`)
	require.NoError(t, err)
	_, err = db.Exec(`UPDATE run_stats SET value = -9e999 WHERE run_id = 1 AND metric = 'output_token_throughput'`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	show := cli(t, dir, "runs", "show", "1")
	require.Equal(t, ExitOK, show.code, show.stderr)
	row := lineContaining(t, show.stdout, "Time to First Token (ms)")
	cells := strings.Split(row, "│")
	require.GreaterOrEqual(t, len(cells), 8, row)
	assert.Equal(t, []string{"n/a", "n/a"}, []string{strings.TrimSpace(cells[2]), strings.TrimSpace(cells[4])}, "avg, max: %s", row)
	assert.Equal(t, "n/a", strings.TrimSpace(cells[5]), "p99: %s", row)
	assert.NotEqual(t, "0.00", strings.TrimSpace(cells[3]), "min is kept: %s", row)
	assert.Contains(t, lineContaining(t, show.stdout, "Output Token Throughput (tokens/sec)"), "n/a")

	exp := cli(t, dir, "runs", "export", "1", "--format", "csv")
	require.Equal(t, ExitOK, exp.code, exp.stderr)
	r := csv.NewReader(strings.NewReader(exp.stdout))
	r.FieldsPerRecord = -1 // the two sections have different widths
	rows, err := r.ReadAll()
	require.NoError(t, err)
	byName := map[string][]string{}
	for _, r := range rows {
		byName[r[0]] = r
	}
	ttft := byName["Time to First Token (ms)"]
	require.NotNil(t, ttft, exp.stdout)
	assert.Equal(t, []string{"n/a", "n/a"}, []string{ttft[1], ttft[3]}, "avg, max")
	assert.Equal(t, "n/a", ttft[13], "p99")
	assert.Equal(t, []string{"Output Token Throughput (tokens/sec)", "n/a"}, byName["Output Token Throughput (tokens/sec)"])

	for _, args := range [][]string{{"runs", "export", "1", "--format", "json"}, {"runs", "show", "1", "--format", "json"}} {
		js := cli(t, dir, args...)
		require.Equal(t, ExitOK, js.code, js.stderr)
		var doc map[string]any
		require.NoError(t, json.Unmarshal([]byte(js.stdout), &doc), js.stdout)
		var ttft, throughput map[string]any
		if args[1] == "export" {
			ttft, _ = doc["time_to_first_token"].(map[string]any)
			throughput, _ = doc["output_token_throughput"].(map[string]any)
			require.NotNil(t, throughput, "the -Inf metric is not dropped")
			assert.Contains(t, throughput, "avg")
			assert.Nil(t, throughput["avg"])
		} else {
			for _, m := range doc["profiling"].(map[string]any)["metrics"].([]any) {
				m := m.(map[string]any)
				switch m["tag"] {
				case "time_to_first_token":
					ttft = m["stats"].(map[string]any)
				case "output_token_throughput":
					throughput = m
				}
			}
			require.NotNil(t, throughput, "the -Inf metric is not dropped")
			assert.Contains(t, throughput, "value")
			assert.Nil(t, throughput["value"])
		}
		require.NotNil(t, ttft, js.stdout)
		for _, stat := range []string{"avg", "p99", "max"} {
			assert.Contains(t, ttft, stat)
			assert.Nil(t, ttft[stat], "%v: %s is null, not 0", args, stat)
		}
		assert.NotNil(t, ttft["min"], "the finite statistics are kept")
	}
}
