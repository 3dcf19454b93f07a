package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// problems are the lines of an "invalid configuration" error after its
// header: one per problem.
func problems(t *testing.T, stderr string) []string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	require.Equal(t, "aiperf: error: invalid configuration (nothing was sent):", lines[0], stderr)
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return lines[1:]
}

// TestProfileRefusesNonFiniteAndAbsurdValues: NaN, ±Inf and magnitudes past
// which a conversion overflows or memory runs out are refused for every
// float (and bounded int) flag: exit 2, one line naming the flag and the
// value, and the server sees nothing, control hooks included.
func TestProfileRefusesNonFiniteAndAbsurdValues(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--request-rate", "inf"}, "--request-rate must be a finite number, got +Inf"},
		{[]string{"--request-rate", "NaN"}, "--request-rate must be a finite number, got NaN"},
		{[]string{"--benchmark-duration", "NaN"}, "--benchmark-duration must be a finite number, got NaN"},
		{[]string{"--request-timeout-seconds", "+Inf"}, "--request-timeout-seconds must be a finite number, got +Inf"},
		{[]string{"--warmup-duration", "inf"}, "--warmup-duration must be a finite number, got +Inf"},
		{[]string{"--isl-stddev", "nan"}, "--synthetic-input-tokens-stddev must be a finite number, got NaN"},
		{[]string{"--osl-stddev", "inf"}, "--output-tokens-stddev must be a finite number, got +Inf"},
		{[]string{"--reset-kv-cache-timeout-seconds", "inf"}, "--reset-kv-cache-timeout-seconds must be a finite number, got +Inf"},
		{[]string{"--reset-kv-cache-max-retry-seconds=-inf"}, "--reset-kv-cache-max-retry-seconds must be a finite number, got -Inf"},
		{[]string{"--server-profiler-timeout-seconds", "nan"}, "--server-profiler-timeout-seconds must be a finite number, got NaN"},
		{[]string{"--confidence-level", "nan"}, "--confidence-level must be a finite number, got NaN"},
		{[]string{"--confidence-level", "0"}, "--confidence-level must be between 0 and 1 (exclusive), got 0"},
		{[]string{"--num-profile-runs", "2", "--profile-run-cooldown-seconds", "inf"}, "--profile-run-cooldown-seconds must be a finite number, got +Inf"},
		{[]string{"--profile-run-cooldown-seconds", "1e12"}, "--profile-run-cooldown-seconds must be at most 31536000 seconds (one year), got 1e+12"},
		{[]string{"--request-rate", "2e9"}, "--request-rate must be at most 1e+09 requests/s (one per nanosecond), got 2e+09"},
		{[]string{"--request-rate", "1e-12"}, "--request-rate must be at least 3.17e-08 requests/s (one a year), got 1e-12"},
		{[]string{"--benchmark-duration", "1e12"}, "--benchmark-duration must be at most 31536000 seconds (one year), got 1e+12"},
		{[]string{"--request-timeout-seconds", "1e300"}, "--request-timeout-seconds must be at most 31536000 seconds (one year), got 1e+300"},
		{[]string{"--concurrency", "2000000"}, "--concurrency must be at most 1048576, got 2000000"},
		{[]string{"--request-count", "1000000000000"}, "--request-count must be at most 1000000000, got 1000000000000"},
		{[]string{"--num-dataset-entries", "1048576", "--isl", "4096"}, "--num-dataset-entries × --synthetic-input-tokens-mean is 4294967296 prompt tokens"},
		{[]string{"-m", ""}, "--model is required: name the served model, e.g. --model my-model"},
		{[]string{"-m", " "}, "--model must not be empty: name the served model, e.g. --model my-model"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			args := append(quick(m.URL, "--no-store"), tc.args...)
			if tc.args[0] == "-m" { // the only model given is empty
				args = append([]string{"profile", "-u", m.URL, "--ui", "none", "--no-store"}, tc.args...)
			}
			inv := cli(t, "", args...)
			assert.Equal(t, ExitUsage, inv.code, inv.stderr)
			got := problems(t, inv.stderr)
			require.Len(t, got, 1, "one problem, one line:\n%s", inv.stderr)
			assert.Contains(t, got[0], tc.want)
			assert.Empty(t, inv.stdout)
		})
	}
	assert.Zero(t, m.control().InferenceRequests, "nothing was sent")
	assert.Empty(t, m.kinds(), "no control hook was called")
}

// TestYAMLRefusesNonFiniteAndAbsurdValues: the config file reaches the same
// checks; non-finite numbers are refused where they are read, with the line.
func TestYAMLRefusesNonFiniteAndAbsurdValues(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	cases := []struct {
		name, phases string
		want         []string
	}{
		{"non-finite", "  phases:\n    - {name: p, rate: .inf, duration: .nan, grace_period: 5}\n",
			[]string{"bench.yaml:10: benchmark.phases[0].rate: expected a finite number, got float .inf",
				"bench.yaml:10: benchmark.phases[0].duration: expected a finite number, got float .nan"}},
		{"absurd", "  phases:\n    - {name: p, rate: 1e12, duration: 1e300}\n",
			[]string{"phases[0].rate must be at most 1e+09 requests/s", "phases[0].duration must be at most 31536000 seconds"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, "bench.yaml", hookBenchYAML(m.URL, "\n    reset_kv_cache: true", tc.phases))
			inv := cli(t, dir, "profile", "-f", "bench.yaml", "--ui", "none")
			assert.Equal(t, ExitUsage, inv.code, inv.stderr)
			for _, w := range tc.want {
				assert.Contains(t, inv.stderr, w)
			}
			assert.NoFileExists(t, filepath.Join(dir, "aiperf.db"))
		})
	}
	assert.Zero(t, m.control().InferenceRequests, "nothing was sent")
	assert.Empty(t, m.kinds(), "no control hook was called")
}

// TestStarlarkRefusesNonFiniteValues: float("nan") and float("inf") in a
// script are refused by plan and sweep alike, before any trial.
func TestStarlarkRefusesNonFiniteValues(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	base := `base = profile(model = "m", url = vars["url"], request_count = 2, %s)
sweep(name = "s", base = base%s)
`
	cases := []struct {
		name, option, sweepArgs, want string
	}{
		{"rate", `request_rate = float("inf")`, "", `main.star:2:6: sweep "s" cell base: --request-rate must be a finite number, got +Inf`},
		{"timeout", `request_timeout_seconds = float("nan")`, "", `main.star:2:6: sweep "s" cell base: --request-timeout-seconds must be a finite number, got NaN`},
		{"matrix", `concurrency = 1`, `, matrix = {"benchmark_duration": [1, float("inf")]}`, "--benchmark-duration must be a finite number, got +Inf"},
		{"int from a huge float", `concurrency = 1e300`, "", `profile: concurrency: want int, got float 1e+300`},
		{"cooldown", `concurrency = 1`, `, cooldown_seconds = float("nan")`, "sweep: cooldown_seconds must be a finite number, got NaN"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			script := writeFile(t, dir, "main.star", strings.Replace(strings.Replace(base, "%s", tc.option, 1), "%s", tc.sweepArgs, 1))
			for _, cmd := range []string{"plan", "sweep"} {
				inv := cli(t, dir, cmd, script, "--set", "url="+m.URL)
				assert.Equal(t, ExitUsage, inv.code, "%s: %s", cmd, inv.stderr)
				assert.Contains(t, inv.stderr, tc.want, cmd)
				assert.Empty(t, inv.stdout, cmd)
			}
			assert.NoFileExists(t, filepath.Join(dir, "aiperf.db"), "nothing was stored")
		})
	}
	assert.Zero(t, m.control().InferenceRequests, "nothing was sent")
}

// TestSweepRefusesBadConfidence: --confidence-level is in (0, 1) and finite
// for sweep as for profile and compare.
func TestSweepRefusesBadConfidence(t *testing.T) {
	dir := t.TempDir()
	script := writeFile(t, dir, "main.star", `sweep(name = "s", base = profile(model = "m", url = "http://127.0.0.1:9"))`+"\n")
	for _, level := range []string{"nan", "inf", "0", "1"} {
		inv := cli(t, dir, "sweep", script, "--confidence-level", level)
		assert.Equal(t, ExitUsage, inv.code, inv.stderr)
		assert.Len(t, problems(t, inv.stderr), 1)
		assert.Contains(t, inv.stderr, "--confidence-level must be")
	}
	assert.NoFileExists(t, filepath.Join(dir, "aiperf.db"))
}

// TestCompareRefusesUnknownMetrics: an unknown metric is exit 2 with one
// line listing the known metrics and statistics, and nothing on stdout.
func TestCompareRefusesUnknownMetrics(t *testing.T) {
	t.Parallel()
	path := seededStore(t)
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"--metric", "nosuch.p99"}, []string{`--metric nosuch.p99: unknown metric "nosuch"; the metrics are time_to_first_token, `,
			"request_latency", "(statistics avg, min, max, p1, p5, p10, p25, p50, p75, p90, p95, p99, std, count, sum)",
			"request_throughput", "(a single value: avg)"}},
		{[]string{"--metric", "time_to_first_token.avg,request_latncy.p99"}, []string{`unknown metric "request_latncy" (did you mean "request_latency"?)`}},
		{[]string{"--metric", "request_throughput.p99"}, []string{"request_throughput has a single value: use request_throughput.avg"}},
		{[]string{"--metric", "time_to_first_token.value"}, []string{"time_to_first_token is a distribution: use one of avg, "}},
		{[]string{"--confidence-level", "nan"}, []string{"--confidence-level must be a finite number, got NaN"}},
		{[]string{"--confidence-level", "0"}, []string{"--confidence-level must be between 0 and 1 (exclusive), got 0"}},
	}
	for _, tc := range cases {
		code, out, errOut := aiperf(t, append([]string{"--store", path, "compare", "fast", "slow"}, tc.args...)...)
		assert.Equal(t, ExitUsage, code, errOut)
		assert.Empty(t, out, tc.args)
		assert.Equal(t, 1, strings.Count(strings.TrimSpace(errOut), "\n")+1, "one line: %s", errOut)
		for _, w := range tc.want {
			assert.Contains(t, errOut, w, tc.args)
		}
	}
	code, out, errOut := aiperf(t, "--store", path, "compare", "fast", "slow", "--metric", "request_throughput.value,error_request_count.avg")
	require.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "request_throughput")
}

// TestTraceBeyondHorizonRefused: a trace whose timestamp lies 31,710 years
// after its first is refused before any traffic (exit 2), naming the file
// and the line; it used to be replayed, its schedule overflowing.
func TestTraceBeyondHorizonRefused(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	trace := writeFile(t, dir, "trace.jsonl", `{"timestamp": 0, "input_length": 10, "output_length": 2}`+"\n"+
		`{"timestamp": 1e15, "input_length": 10, "output_length": 2}`+"\n")
	inv := cli(t, dir, quick(m.URL, "--input-file", trace, "--custom-dataset-type", "mooncake_trace", "--fixed-schedule-auto-offset")...)
	assert.Equal(t, ExitUsage, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, trace+":2: timestamp: timestamp 1e+15 is 31710 years after the schedule's zero")
	assert.Zero(t, m.control().InferenceRequests, "nothing was sent")
}

// TestStarlarkRefusesRunawayAllocation: a script that would build a list of
// 10^9 elements (16 GiB) is refused at the operation, by plan and sweep
// alike, before anything runs.
func TestStarlarkRefusesRunawayAllocation(t *testing.T) {
	dir := t.TempDir()
	script := writeFile(t, dir, "main.star", "x = [0] * 1000000000\n")
	for _, cmd := range []string{"plan", "sweep"} {
		inv := cli(t, dir, cmd, script)
		assert.Equal(t, ExitUsage, inv.code, "%s: %s", cmd, inv.stderr)
		assert.Contains(t, inv.stderr, "main.star:1:9: repeat would build 1000000000 elements, more than the 1048576 a script may build in one operation", cmd)
	}
}
