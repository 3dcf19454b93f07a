package config

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// TestNonFiniteNumbersAreRefused: YAML's .nan and .inf are refused where
// they are read, with the line and the key, like any other bad value.
func TestNonFiniteNumbersAreRefused(t *testing.T) {
	t.Parallel()
	f, err := parse(
		"random_seed: .nan",
		"benchmark:",
		"  model: m",
		"  endpoint:",
		"    url: http://127.0.0.1:8000",
		"    timeout: .inf",
		"    reset_kv_cache: {timeout_seconds: -.Inf, max_retry_seconds: .NaN}",
		"    server_profiler: {timeout_seconds: .INF}",
		"    extra: {temperature: .nan}",
		"  dataset: {prompts: {isl: {mean: 16, stddev: .nan}, osl: {mean: 4, stddev: .inf}}}",
		"  phases:",
		"    - {name: p, rate: .inf, duration: .nan, grace_period: -.inf}",
	)
	require.Error(t, err)
	assert.Nil(t, f)
	assert.Equal(t, []string{
		`bench.yaml:1: random_seed: expected int, got float .nan`,
		`bench.yaml:6: benchmark.endpoint.timeout: expected a finite number, got float .inf`,
		`bench.yaml:7: benchmark.endpoint.reset_kv_cache.timeout_seconds: expected a finite number, got float -.Inf`,
		`bench.yaml:7: benchmark.endpoint.reset_kv_cache.max_retry_seconds: expected a finite number, got float .NaN`,
		`bench.yaml:8: benchmark.endpoint.server_profiler.timeout_seconds: expected a finite number, got float .INF`,
		`bench.yaml:9: benchmark.endpoint.extra.temperature: cannot be sent as JSON: json: unsupported value: NaN`,
		`bench.yaml:10: benchmark.dataset.prompts.isl.stddev: expected a finite number, got float .nan`,
		`bench.yaml:10: benchmark.dataset.prompts.osl.stddev: expected a finite number, got float .inf`,
		`bench.yaml:12: benchmark.phases[0].rate: expected a finite number, got float .inf`,
		`bench.yaml:12: benchmark.phases[0].duration: expected a finite number, got float .nan`,
		`bench.yaml:12: benchmark.phases[0].grace_period: expected a finite number, got float -.inf`,
	}, strings.Split(err.Error(), "\n"))
}

// TestAbsurdNumbersReachCheck: finite but absurd values load, and Check
// refuses them as it does the same flags.
func TestAbsurdNumbersReachCheck(t *testing.T) {
	t.Parallel()
	f, err := parse(
		"benchmark:",
		"  model: m",
		"  endpoint: {url: http://127.0.0.1:8000, timeout: 1e12}",
		"  dataset: {entries: 2000000}",
		"  phases:",
		"    - {name: p, rate: 1e12, concurrency: 9999999, duration: 1e300}",
	)
	require.NoError(t, err)
	var got []string
	for _, fe := range plan.FieldErrors(f.Profile.Check()) {
		got = append(got, fe.Error())
	}
	assert.Equal(t, []string{
		"--request-timeout-seconds must be at most 31536000 seconds (one year), got 1e+12",
		"--num-dataset-entries must be at most 1048576, got 2000000",
		"phases[0].concurrency must be at most 1048576, got 9999999",
		"phases[0].rate must be at most 1e+09 requests/s (one per nanosecond), got 1e+12",
		"phases[0].duration must be at most 31536000 seconds (one year), got 1e+300",
	}, got)
}

// TestSyntaxErrorsCarryALine: yaml.v3 gives no line for a problem on the
// first line or for a byte YAML does not allow; the error still has one.
func TestSyntaxErrorsCarryALine(t *testing.T) {
	t.Parallel()
	for data, want := range map[string]string{
		`"`:                     `bench.yaml:1: invalid YAML: found unexpected end of stream`,
		"a: 1\nb: 2\nc: \x01\n": `bench.yaml:3: invalid YAML: control characters are not allowed`,
		"a: 1\nb: \xff\n":       `bench.yaml:2: invalid YAML: invalid leading UTF-8 octet`,
	} {
		_, err := Parse("bench.yaml", []byte(data))
		var ce *Error
		require.ErrorAs(t, err, &ce, "%q", data)
		assert.Equal(t, want, err.Error(), "%q", data)
	}
}
