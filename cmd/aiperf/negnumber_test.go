package main

import (
	"path/filepath"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// TestJoinNegativeValues: a number flag followed by a negative number gets
// it inline; anything else, and everything after "--", is left as given.
func TestJoinNegativeValues(t *testing.T) {
	var cli CLI
	parser, err := kong.New(&cli, parserOptions()...)
	require.NoError(t, err)
	for _, tc := range []struct{ in, want []string }{
		{[]string{"profile", "--concurrency", "-4", "-m", "x"}, []string{"profile", "--concurrency=-4", "-m", "x"}},
		{[]string{"profile", "--request-rate", "-.5"}, []string{"profile", "--request-rate=-.5"}},
		{[]string{"profile", "--num-requests", "-1e3"}, []string{"profile", "--num-requests=-1e3"}}, // an alias
		{[]string{"profile", "--concurrency", "-4,8"}, []string{"profile", "--concurrency=-4,8"}},
		{[]string{"profile", "--worker-silence-timeout", "-5s"}, []string{"profile", "--worker-silence-timeout=-5s"}},
		{[]string{"config", "expand", "f.yaml", "-i", "-1"}, []string{"config", "expand", "f.yaml", "-i-1"}},
		{[]string{"profile", "--concurrency", "4", "-v"}, []string{"profile", "--concurrency", "4", "-v"}},
		{[]string{"profile", "--name", "-4"}, []string{"profile", "--name", "-4"}},           // not a number flag
		{[]string{"profile", "--streaming", "-4"}, []string{"profile", "--streaming", "-4"}}, // takes no value
		{[]string{"profile", "--concurrency", "-v"}, []string{"profile", "--concurrency", "-v"}},
		{[]string{"profile", "--concurrency"}, []string{"profile", "--concurrency"}},
		{[]string{"x", "--", "--concurrency", "-4"}, []string{"x", "--", "--concurrency", "-4"}},
	} {
		assert.Equal(t, tc.want, joinNegativeValues(parser.Model, tc.in), "%q", tc.in)
	}
}

// TestNegativeNumberFlags: a negative value given to a number flag the
// usual way (--concurrency -4) is refused by the flag's own bound, exit 2,
// before anything is sent, instead of kong's "short flag" puzzle.
func TestNegativeNumberFlags(t *testing.T) {
	yaml, err := filepath.Abs(filepath.Join("testdata", "tutorial_isl_sweep.yaml")) // before cli changes directory
	require.NoError(t, err)
	m := startMock(t, mock.Config{Fast: true})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--concurrency", "-4"}, "--concurrency must be at least 1, got -4"},
		{[]string{"--request-rate", "-1"}, "--request-rate must be greater than 0, got -1"},
		{[]string{"--request-count", "-0"}, "--request-count must be at least 1, got 0"},
		{[]string{"--concurrency", "-4,8"}, "--concurrency must be at least 1, got -4"},
		{[]string{"--workers", "-2"}, "--workers must be at least 1, got -2"},
		{[]string{"--workers", "2", "--concurrency", "2", "--worker-silence-timeout", "-5s"},
			"--worker-silence-timeout must be positive, got -5s"},
	} {
		inv := cli(t, "", quick(m.URL, append(tc.args, "--no-store")...)...)
		assert.Equal(t, ExitUsage, inv.code, inv.stderr)
		assert.Contains(t, inv.stderr, tc.want)
		assert.Contains(t, inv.stderr, "nothing was sent")
		assert.NotContains(t, inv.stderr, "short flag")
	}
	assert.Zero(t, m.control().InferenceRequests)

	inv := cli(t, "", "config", "expand", yaml, "-i", "-1")
	assert.Equal(t, ExitUsage, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, "--index -1: the file declares 3 variations")

	inv = cli(t, "", "worker", "--worker-index", "-1")
	assert.Equal(t, ExitUsage, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, "--worker-index must be 0 or more, got -1")
}
