package main

import (
	"os"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// parseProfile parses a profile command line as run does, without running it.
func parseProfile(t *testing.T, args ...string) (plan.Profile, error) {
	t.Helper()
	var cli CLI
	parser, err := kong.New(&cli, append(parserOptions(), kong.Exit(func(int) { t.Fatal("kong exited") }))...)
	require.NoError(t, err)
	_, err = parser.Parse(append([]string{"profile"}, args...))
	return cli.Profile.Profile, err
}

// TestListFlagsTakeSpaceSeparatedValues: AIPerf's list flags take their
// values space-separated (server-metrics.md, gpu-telemetry.md) as well as
// repeated, and stop at the next flag.
func TestListFlagsTakeSpaceSeparatedValues(t *testing.T) {
	p, err := parseProfile(t, "-m", "m", "--server-metrics", "http://n1:8081/metrics", "n2:8081", "--concurrency", "3",
		"--url", "http://a:1", "http://b:1", "-u", "http://c:1", "--gpu-telemetry", "dashboard", "localhost:9400")
	require.NoError(t, err)
	assert.Equal(t, []string{"http://n1:8081/metrics", "n2:8081"}, p.ServerMetrics)
	assert.Equal(t, 3, *p.Concurrency, "the flag after the list is not swallowed")
	assert.Equal(t, []string{"http://a:1", "http://b:1", "http://c:1"}, p.URL, "space-separated and repeated add up")
	assert.Equal(t, []string{"dashboard", "localhost:9400"}, p.GPUTelemetry)

	p, err = parseProfile(t, "--url=http://a:1", "-uhttp://b:1", "--server-metrics=x:1")
	require.NoError(t, err)
	assert.Equal(t, []string{"http://a:1", "http://b:1"}, p.URL, "an inline value is one value")
	assert.Equal(t, []string{"x:1"}, p.ServerMetrics)

	p, err = parseProfile(t)
	require.NoError(t, err)
	assert.Equal(t, []string{"http://localhost:8000"}, p.URL, "the default stands when --url is not given")

	_, err = parseProfile(t, "--url=http://a:1", "http://b:1")
	require.Error(t, err, "after an inline value the next argument is not another URL")
	assert.Contains(t, err.Error(), "http://b:1")
}

// TestBareGPUTelemetry: --gpu-telemetry may be given bare (AIPerf's
// gpu-telemetry.md), at the end or before another flag; the other list
// flags need a value.
func TestBareGPUTelemetry(t *testing.T) {
	p, err := parseProfile(t, "-m", "m", "--gpu-telemetry")
	require.NoError(t, err)
	assert.Empty(t, p.GPUTelemetry)

	p, err = parseProfile(t, "--gpu-telemetry", "--request-count", "5")
	require.NoError(t, err)
	assert.Empty(t, p.GPUTelemetry)
	assert.Equal(t, 5, *p.RequestCount)

	for _, flag := range []string{"--server-metrics", "--url"} {
		_, err = parseProfile(t, flag, "--request-count", "5")
		require.Error(t, err, flag)
		assert.Contains(t, err.Error(), "expected a value", flag)
		assert.Contains(t, err.Error(), `"--request-count"`, flag)
	}
}

func TestURLStrategy(t *testing.T) {
	p, err := parseProfile(t, "--url", "http://a:1", "http://b:1", "--url-strategy", "round_robin")
	require.NoError(t, err)
	assert.Equal(t, "round_robin", p.URLStrategy)
	_, err = parseProfile(t, "--url-strategy", "random")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "round_robin")
}

// TestConsumeMultipleFlags: every flag AIPerf declares consume_multiple
// (its cli_config.py) takes space-separated values, as its cli-options.md
// shows (--extra-inputs temperature:0.7 top_p:0.9), adds up with the
// repeated form, stops at the next flag (a negative number included) and
// keeps its own separator.
func TestConsumeMultipleFlags(t *testing.T) {
	p, err := parseProfile(t, "-m", "m", "--extra-inputs", "temperature:0.7", "top_p:0.9", "--extra-inputs", "seed:1",
		"-H", "X-A:1", "X-B:2", "--header=X-C:3", "--concurrency", "2",
		"--stream", "metrics", "timing", "--otel-resource-attributes", "team=inference", "env=prod",
		"--mlflow-tag", "team:perf", "run:1", "--mlflow-artifact-glob", "*.json", "*.csv",
		"--server-metrics-formats", "json", "parquet,jsonl")
	require.NoError(t, err)
	assert.Equal(t, []string{"temperature:0.7", "top_p:0.9", "seed:1"}, p.ExtraInputs)
	assert.Equal(t, []string{"X-A:1", "X-B:2", "X-C:3"}, p.Header, "space-separated, then inline")
	assert.Equal(t, 2, *p.Concurrency, "the flag after a list is not swallowed")
	assert.Equal(t, []string{"metrics", "timing"}, p.Stream)
	assert.Equal(t, []string{"team=inference", "env=prod"}, p.OtelResourceAttributes)
	assert.Equal(t, []string{"team:perf", "run:1"}, p.MLflowTag)
	assert.Equal(t, []string{"*.json", "*.csv"}, p.MLflowArtifactGlob)
	assert.Equal(t, []string{"json", "parquet", "jsonl"}, p.ServerMetricsFormats, "comma lists still split")

	p, err = parseProfile(t, "--stream=metrics,timing", "--extra-inputs", `{"a": 1}`, "-HX-D:4")
	require.NoError(t, err)
	assert.Equal(t, []string{"metrics", "timing"}, p.Stream)
	assert.Equal(t, []string{`{"a": 1}`}, p.ExtraInputs)
	assert.Equal(t, []string{"X-D:4"}, p.Header)

	_, err = parseProfile(t, "--server-metrics-formats", "json", "xml")
	require.Error(t, err, "each value still meets the flag's enum")
	assert.Contains(t, err.Error(), `"xml"`)

	_, err = parseProfile(t, "--extra-inputs", "--concurrency", "2")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "expected a value")
}

// TestConsumeMultipleNotOnPositionalCommands: on a command that takes a
// positional argument (aiperf sweep SCRIPT) the list flags stay
// repeatable only, so the argument after one is still the script.
func TestConsumeMultipleNotOnPositionalCommands(t *testing.T) {
	script := t.TempDir() + "/s.star"
	require.NoError(t, os.WriteFile(script, nil, 0o600))
	var cli CLI
	parser, err := kong.New(&cli, append(parserOptions(), kong.Exit(func(int) { t.Fatal("kong exited") }))...)
	require.NoError(t, err)
	_, err = parser.Parse([]string{"sweep", "--mlflow-tag", "a:b", script})
	require.NoError(t, err)
	assert.Equal(t, []string{"a:b"}, cli.Sweep.MLflowTag)
	assert.Equal(t, script, cli.Sweep.Script)
}
