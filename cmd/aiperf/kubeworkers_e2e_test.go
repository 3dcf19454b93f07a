package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/shard"
	"github.com/aiperf-go/aiperf/runner/kube"
)

// TestWorkersAsKubernetesPods shards one cell across 3 worker Jobs of a
// fake cluster, whose pods (this test binary acting as aiperf, run by the
// kubetest kubelet) dial back to 127.0.0.1 and join with the cell's token:
// every request sent once, one KV reset and one profiler bracket from the
// coordinator, each Job made as the trial Jobs are (the token in a Secret,
// never in plain args or env) and deleted at the end.
func TestWorkersAsKubernetesPods(t *testing.T) {
	cs := fakeCluster(t)
	const secret = "sk-kube-workers-secret-3"
	m := startMock(t, mock.Config{TTFT: 2, ITL: 1, APIKey: secret})
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--tokenizer", tinyTokenizer(t), "--api-key", secret, "--concurrency", "6",
		"--request-count", "31", "--workers", "3", "--executor", "kubernetes", "--coordinator-address", "127.0.0.1:0",
		"--namespace", "bench", "--image", "ghcr.io/acme/aiperf:1.2", "--cpu", "1", "--memory", "256Mi",
		"--reset-kv-cache", "--server-profiler", "--artifact-dir", filepath.Join(dir, "k3"))...)
	require.Equal(t, ExitOK, inv.code, "stdout:\n%s\nstderr:\n%s", inv.stdout, inv.stderr)
	assert.NotContains(t, inv.stdout+inv.stderr, secret)

	c := m.control()
	assert.Equal(t, 1, c.ResetCount, "one reset, from the coordinator")
	assert.Equal(t, 1, c.ProfilerStarts)
	assert.Equal(t, 1, c.ProfilerStops)
	assert.Equal(t, 31, c.InferenceRequests)
	lines := jsonlLines(t, filepath.Join(dir, "k3", "profile_export.jsonl"))
	require.Len(t, lines, 31)
	workers := map[string]int{}
	for _, l := range lines {
		workers[l.Metadata.WorkerID]++
	}
	assert.Len(t, workers, 3, "every worker pod sent")
	assert.Equal(t, 31.0, readJSON(t, filepath.Join(dir, "k3", "profile_export_aiperf.json"))["request_count"].(map[string]any)["avg"])
	assert.Regexp(t, `Workers: 3 processes`, inv.stdout)

	var jobs []*batchv1.Job
	var tokens, keys []string
	for _, a := range cs.Actions() {
		if a.GetVerb() != "create" {
			continue
		}
		switch o := a.(k8stesting.CreateAction).GetObject().(type) {
		case *batchv1.Job:
			assert.Equal(t, "bench", a.GetNamespace())
			jobs = append(jobs, o)
		case *corev1.Secret:
			tokens = append(tokens, string(o.Data["worker-token"]))
			keys = append(keys, string(o.Data["api-key"]))
		}
	}
	require.Len(t, jobs, 3, "a Job per worker")
	require.Len(t, tokens, 3, "a Secret per worker Job")
	assert.Len(t, tokens[0], 32)
	assert.Equal(t, tokens[0], tokens[2], "one token for the cell")
	assert.Equal(t, []string{secret, secret, secret}, keys, "the API key reaches each pod in its Secret, not over the channel")
	for i, job := range jobs {
		assert.Equal(t, "worker", job.Labels["app.kubernetes.io/component"])
		assert.Equal(t, string(rune('0'+i)), job.Labels[kube.LabelWorker])
		assert.Equal(t, jobs[0].Labels[kube.LabelShard], job.Labels[kube.LabelShard])
		require.NotNil(t, job.Spec.BackoffLimit)
		assert.Zero(t, *job.Spec.BackoffLimit)
		pod := job.Spec.Template.Spec
		assert.Equal(t, corev1.RestartPolicyNever, pod.RestartPolicy)
		ctr := pod.Containers[0]
		assert.Equal(t, "ghcr.io/acme/aiperf:1.2", ctr.Image)
		assert.Equal(t, "1", ctr.Resources.Requests.Cpu().String())
		assert.Equal(t, "256Mi", ctr.Resources.Requests.Memory().String())
		require.Len(t, ctr.Args, 5)
		assert.Equal(t, []string{"worker", "--connect"}, ctr.Args[:2])
		assert.Regexp(t, `^127\.0\.0\.1:\d+$`, ctr.Args[2], "the port listened on, not 0")
		assert.NotEqual(t, "127.0.0.1:0", ctr.Args[2])
		assert.Equal(t, []string{"--worker-index", string(rune('0' + i))}, ctr.Args[3:])
		all := strings.Join(ctr.Args, " ")
		i := slices.IndexFunc(ctr.Env, func(e corev1.EnvVar) bool { return e.Name == kube.WorkerTokenEnv })
		require.GreaterOrEqual(t, i, 0, "the token comes from the Secret")
		require.NotNil(t, ctr.Env[i].ValueFrom.SecretKeyRef)
		assert.Equal(t, job.Name, ctr.Env[i].ValueFrom.SecretKeyRef.Name)
		for _, e := range ctr.Env {
			all += " " + e.Value
		}
		assert.NotContains(t, all, tokens[0], "no token in plain args or env")
		assert.NotContains(t, all, secret)
	}
	deleted := map[string]bool{}
	for _, a := range cs.Actions() {
		if d, ok := a.(k8stesting.DeleteAction); ok && d.GetResource().Resource == "jobs" {
			p := d.GetDeleteOptions().PropagationPolicy
			deleted[d.GetName()] = p != nil && *p == metav1.DeletePropagationBackground
		}
	}
	for _, job := range jobs {
		assert.True(t, deleted[job.Name], "job %s deleted with propagation Background", job.Name)
	}
	assertNoKubeObjects(t, cs)
}

// TestWorkerWithAWrongTokenIsRefused: aiperf worker --connect joining with
// a token that is not the cell's is refused by the coordinator and fails,
// the token it presented never echoed.
func TestWorkerWithAWrongTokenIsRefused(t *testing.T) {
	l, err := shard.Listen("127.0.0.1:0", shard.NewToken(), 1, nil)
	require.NoError(t, err)
	defer l.Close()
	addr := fmt.Sprintf("127.0.0.1:%d", l.Port())
	t.Setenv(kube.WorkerTokenEnv, "guessed-token-123")
	inv := cli(t, t.TempDir(), "worker", "--connect", addr, "--worker-index", "0")
	assert.NotEqual(t, ExitOK, inv.code)
	assert.Contains(t, inv.stderr, "the coordinator refused this worker")
	assert.Contains(t, inv.stderr, "wrong token")
	assert.NotContains(t, inv.stderr, "guessed-token-123")

	t.Setenv(kube.WorkerTokenEnv, "")
	inv = cli(t, t.TempDir(), "worker", "--connect", addr)
	assert.NotEqual(t, ExitOK, inv.code)
	assert.Contains(t, inv.stderr, "$AIPERF_WORKER_TOKEN holds no token")
}

// assertNoKubeObjects checks that every Job and Secret of the cell is gone.
func assertNoKubeObjects(t *testing.T, cs *fake.Clientset) {
	t.Helper()
	left, err := cs.BatchV1().Jobs("bench").List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	assert.Empty(t, left.Items, "every Job deleted")
	secrets, err := cs.CoreV1().Secrets("bench").List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	assert.Empty(t, secrets.Items, "every Secret deleted")
}

// TestKubernetesWorkerThatNeverConnects: with no node to run the worker
// pods, the cell fails after --schedule-timeout naming the worker, before
// anything is sent, and its Jobs are deleted.
func TestKubernetesWorkerThatNeverConnects(t *testing.T) {
	cs := fake.NewClientset() // no kubelet: the Jobs never run
	prev := connectKube
	connectKube = func(string) (kube.Cluster, error) { return kube.Cluster{Client: cs, Namespace: "bench"}, nil }
	t.Cleanup(func() { connectKube = prev })
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--concurrency", "2", "--request-count", "4", "--workers", "2", "--executor", "kubernetes",
		"--coordinator-address", "127.0.0.1:0", "--image", "x", "--schedule-timeout", "400ms", "--no-store")...)
	assert.NotEqual(t, ExitOK, inv.code)
	assert.Regexp(t, `worker 0 \(job bench/aiperf-worker-[0-9a-f]{6}-0\) did not connect within 400ms \(--schedule-timeout\)`, inv.stderr)
	assert.Contains(t, inv.stderr, "nothing was sent")
	c := m.control()
	assert.Zero(t, c.InferenceRequests)
	assertNoKubeObjects(t, cs)
}

func TestKubernetesWorkersFlagsRefused(t *testing.T) {
	dir := t.TempDir()
	base := quick("http://127.0.0.1:1", "--concurrency", "2", "--request-count", "4")
	t.Setenv("POD_IP", "")
	for args, want := range map[string]string{
		"--workers 2 --executor kubernetes --image x":                                                                "--coordinator-address is required",
		"--workers 2 --executor kubernetes --image x --coordinator-address 0.0.0.0:0":                                "not a wildcard",
		"--workers 2 --coordinator-address 127.0.0.1:0":                                                              "--coordinator-address is for --workers N --executor kubernetes",
		"--workers 2 --image x":                                                                                      "--image is for --executor kubernetes",
		"--workers 2 --executor kubernetes --num-profile-runs 2 --image x":                                           "shards one cell run once",
		"--workers 2 --executor kubernetes --image x --coordinator-address 127.0.0.1:0 --header X-Api-Key:sk-hdr-77": "would cross the network",
	} {
		fakeClusterless(t)
		inv := cli(t, dir, append(slices.Clone(base), strings.Fields(args)...)...)
		assert.Equal(t, ExitUsage, inv.code, args)
		assert.Contains(t, inv.stderr, want, args)
	}
}

// fakeClusterless makes --executor kubernetes find an empty fake cluster.
func fakeClusterless(t *testing.T) {
	prev := connectKube
	connectKube = func(string) (kube.Cluster, error) {
		return kube.Cluster{Client: fake.NewClientset(), Namespace: "bench"}, nil
	}
	t.Cleanup(func() { connectKube = prev })
}
