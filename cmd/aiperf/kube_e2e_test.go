package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/runner"
	"github.com/aiperf-go/aiperf/runner/kube"
	"github.com/aiperf-go/aiperf/runner/kube/kubetest"
	"github.com/aiperf-go/aiperf/store"
)

// kubeScript is gridScript cut to 2×2 cells of one trial each.
var kubeScript = strings.NewReplacer(`name = "grid"`, `name = "kgrid"`, "[1, 2, 3]", "[1, 2]", "trials = 2", "trials = 1").
	Replace(gridScript)

// fakeCluster makes --executor kubernetes use a fake clientset whose Jobs a
// kubetest.Kubelet runs as this test binary acting as aiperf.
func fakeCluster(t *testing.T) *fake.Clientset {
	t.Helper()
	subprocesses(t)
	cs := fake.NewClientset()
	ctx, cancel := context.WithCancel(context.Background())
	k := &kubetest.Kubelet{Client: cs, Namespace: "bench", Command: []string{builtBinary(t, "aiperf")}, Dir: t.TempDir()}
	require.NoError(t, k.Start(ctx))
	t.Cleanup(func() { cancel(); k.Wait() })
	prev := connectKube
	connectKube = func(kubeconfig string) (kube.Cluster, error) {
		return kube.Cluster{Client: cs, Namespace: "default", Logs: k.Logs}, nil
	}
	t.Cleanup(func() { connectKube = prev })
	return cs
}

func TestSweepAsKubernetesJobs(t *testing.T) {
	cs := fakeCluster(t)
	const secret = "sk-kube-e2e-secret-7"
	m := startMock(t, mock.Config{Fast: true, APIKey: secret})
	dir := t.TempDir()
	script := writeFile(t, dir, "k.star", kubeScript)
	sw := cli(t, dir, "sweep", script, "--set", "url="+m.URL, "--set", "key="+secret, "--set", "tok="+tinyTokenizer(t),
		"--executor", "kubernetes", "--namespace", "bench", "--image", "ghcr.io/acme/aiperf:1.2", "--cpu", "1", "--memory", "512Mi")
	require.Equal(t, ExitOK, sw.code, "stdout:\n%s\nstderr:\n%s", sw.stdout, sw.stderr)
	assert.Contains(t, sw.stderr, "[4/4] kgrid concurrency_2__synthetic_input_tokens_mean_32 trial 1: complete")
	assert.NotContains(t, sw.stdout+sw.stderr, secret)

	ctl := m.control()
	assert.Equal(t, 4, ctl.ResetCount, "one reset per trial pod")
	assert.Equal(t, 16, ctl.InferenceRequests)
	assert.Equal(t, 4, ctl.ProfilerStarts, "each pod brackets its trial with the server profiler")
	assert.Equal(t, 4, ctl.ProfilerStops)

	db := openStore(t, dir)
	runs, err := db.ListRuns(context.Background(), store.RunFilter{Sweep: "kgrid"})
	require.NoError(t, err)
	require.Len(t, runs, 4, "4 trials stored, as local trials are")
	for _, r := range runs {
		assert.Equal(t, result.StatusComplete, r.Status, "run %d: %s", r.ID, r.Error)
		assert.Equal(t, 4, r.RecordCount)
	}

	jobs := 0
	for _, a := range cs.Actions() {
		if a.GetVerb() == "create" && a.GetResource().Resource == "jobs" {
			jobs++
			assert.Equal(t, "bench", a.GetNamespace())
		}
	}
	assert.Equal(t, 4, jobs, "a Job per trial")
	assertNoKubeObjects(t, cs)

	logs, err := filepath.Glob(filepath.Join(dir, "artifacts", "kgrid", "*", "trial_0001", runner.LogFile))
	require.NoError(t, err)
	require.Len(t, logs, 4, "each trial's pod log kept")
	for _, l := range logs {
		b, err := os.ReadFile(l)
		require.NoError(t, err)
		assert.NotContains(t, string(b), secret)
		assert.Contains(t, string(b), "AIPERF-RESULT-END")
		assert.NotContains(t, string(b), "-DATA ", "the log keeps no frame payload")
		assertKubeExports(t, filepath.Dir(l), 4)
	}
}

// assertKubeExports checks that a kubernetes trial's directory holds its
// exports, brought back from the pod, as a local trial's does.
func assertKubeExports(t *testing.T, dir string, records int) {
	t.Helper()
	for _, f := range []string{"profile_export_aiperf.json", "profile_export_aiperf.csv", "profile_export.jsonl", "inputs.json", runner.ResultFile} {
		assert.FileExists(t, filepath.Join(dir, f))
	}
	assert.Equal(t, records, countLines(t, filepath.Join(dir, "profile_export.jsonl")))
	export := readJSON(t, filepath.Join(dir, "profile_export_aiperf.json"))
	assert.Equal(t, float64(records), metricAvg(t, export, "request_count"))
	r, err := runner.ReadResult(filepath.Join(dir, runner.ResultFile))
	require.NoError(t, err)
	assert.Equal(t, result.StatusComplete, r.Status)
}

func TestKubernetesFlagsRefusedBeforeTraffic(t *testing.T) {
	dir := t.TempDir()
	script := writeFile(t, dir, "k.star", kubeScript)
	set := []string{"--set", "url=http://127.0.0.1:1", "--set", "key=k", "--set", "tok=x"}
	r := cli(t, dir, append([]string{"sweep", script, "--image", "x"}, set...)...)
	assert.Equal(t, ExitUsage, r.code)
	assert.Contains(t, r.stderr, "--image is for --executor kubernetes")

	fakeCluster(t)
	r = cli(t, dir, append([]string{"sweep", script, "--executor", "kubernetes"}, set...)...)
	assert.Equal(t, ExitUsage, r.code)
	assert.Contains(t, r.stderr, "--image is required")

	r = cli(t, dir, append([]string{"sweep", script, "--executor", "kubernetes", "--image", "x", "--cpu", "lots"}, set...)...)
	assert.Equal(t, ExitUsage, r.code)
	assert.Contains(t, r.stderr, `--cpu "lots"`)
	r = cli(t, dir, append([]string{"sweep", script, "--executor", "kubernetes", "--image", "x", "--workers", "2"}, set...)...)
	assert.Equal(t, ExitUsage, r.code)
	assert.Contains(t, r.stderr, "sweep --workers 2 with --executor kubernetes is not supported")
	assert.False(t, strings.Contains(r.stderr, "running"), "nothing ran")
}
