package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// A sweep of the load against a trace that replays a fixed schedule
// (auto-promoted from its timestamps, or --fixed-schedule) is refused with
// exit 2 before any request, as AIPerf refuses it: every cell would run
// the same schedule. A config file's sweep of a phase's load is refused
// the same way.
func TestSweepRefusedOverFixedSchedule(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	writeFile(t, dir, "trace.jsonl", sessionTrace([]int{0}, []int{10}, []int{20}))
	writeFile(t, dir, "sweep.yaml", strings.Join([]string{
		"sweep:",
		"  parameters:",
		"    phases.profiling.concurrency: [1, 2]",
		"benchmark:",
		"  model: m",
		"  endpoint: {url: " + m.URL + "}",
		"  dataset: {type: file, path: trace.jsonl, format: mooncake_trace}",
		"  phases:",
		"    - {name: profiling, type: concurrency, concurrency: 1, requests: 3}",
	}, "\n")+"\n")
	base := []string{"profile", "-m", "m", "--url", m.URL, "--no-store", "--ui", "none",
		"--input-file", "trace.jsonl", "--custom-dataset-type", "mooncake_trace"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{append(base, "--concurrency", "1,2"), "--concurrency: a parameter sweep (--concurrency 1,2) cannot run against a " +
			"fixed schedule (the records of trace.jsonl carry timestamps"},
		{append(base, "--fixed-schedule", "--request-count=3,6"), "--request-count: a parameter sweep (--request-count 3,6) " +
			"cannot run against a fixed schedule (--fixed-schedule)"},
		{[]string{"profile", "--config", "sweep.yaml", "--no-store", "--ui", "none"},
			"sweep.parameters.phases.profiling.concurrency: a sweep of the load cannot run against a fixed schedule"},
	} {
		inv := cli(t, dir, tc.args...)
		assert.Equal(t, ExitUsage, inv.code, "%v: %s", tc.args, inv.stderr)
		assert.Contains(t, inv.stderr, tc.want)
		assert.Contains(t, inv.stderr, "--no-fixed-schedule")
	}
	assert.Zero(t, m.control().InferenceRequests, "nothing was sent")
}

// profile_export_aiperf.json's input_config.phases describes a fixed
// schedule as AIPerf's fixed_schedule phase, with no invented request
// count, and a session-bounded run by its sessions.
func TestExportPhasesDescribeWhatRan(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	writeFile(t, dir, "trace.jsonl", sessionTrace([]int{0}, []int{10}, []int{20}))
	inv := cli(t, dir, "profile", "-m", "m", "--url", m.URL, "--no-store", "--ui", "none", "--artifact-dir", "fixed",
		"--input-file", "trace.jsonl", "--custom-dataset-type", "mooncake_trace", "--fixed-schedule")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	phases := readJSON(t, filepath.Join(dir, "fixed", "profile_export_aiperf.json"))["input_config"].(map[string]any)["phases"]
	assert.Equal(t, []any{map[string]any{"name": "profiling", "kind": "profiling", "type": "fixed_schedule",
		"auto_offset": false}}, phases)
	assert.Equal(t, 3, m.control().InferenceRequests)

	inv = cli(t, dir, append(quick(m.URL, "--artifact-dir", "sessions", "--no-store"), "--num-conversations", "2")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	phases = readJSON(t, filepath.Join(dir, "sessions", "profile_export_aiperf.json"))["input_config"].(map[string]any)["phases"]
	assert.Equal(t, []any{map[string]any{"name": "profiling", "kind": "profiling", "type": "concurrency",
		"concurrency": 1.0, "sessions": 2.0}}, phases)
}
