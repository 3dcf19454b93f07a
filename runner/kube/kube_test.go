package kube_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/runner"
	"github.com/aiperf-go/aiperf/runner/kube"
	"github.com/aiperf-go/aiperf/runner/kube/kubetest"
)

// childMode makes the test binary play a trial child in the kubelet's pods:
// ok prints a result frame (naming the API key it was given in the run's
// cli_command, which the parent redacts) after printing the key, which the
// parent must redact from the kept log; sleep waits to be interrupted;
// noframe fails without a result; exports writes a file to its artifact
// directory and frames it before its result; corrupt does so with a frame
// altered on the way; hollow prints a frame of a result that is no run's;
// other prints another trial's result.
const childMode = "AIPERF_KUBE_TEST_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childMode); mode != "" {
		os.Exit(child(mode))
	}
	os.Exit(m.Run())
}

func child(mode string) int {
	var specPath, workDir string
	for i, a := range os.Args {
		switch {
		case i+1 == len(os.Args):
		case a == "--spec-file":
			specPath = os.Args[i+1]
		case a == "--artifact-dir":
			workDir = os.Args[i+1]
		}
	}
	spec, err := runner.ReadRemoteSpec(specPath)
	if err != nil {
		fmt.Println(err)
		return 2
	}
	switch mode {
	case "sleep":
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, os.Interrupt)
		fmt.Println("ready")
		<-ch
		return 130
	case "noframe":
		fmt.Println("boom: the endpoint refused the model")
		return 1
	}
	if mode == "exports" || mode == "corrupt" {
		if err := os.WriteFile(filepath.Join(workDir, "profile_export_aiperf.json"), []byte(exportJSON), 0o644); err != nil {
			fmt.Println(err)
			return 1
		}
		var b strings.Builder
		if err := runner.WriteExports(&b, workDir, runner.ExportFrameLimit); err != nil {
			fmt.Println(err)
			return 1
		}
		framed := b.String()
		if mode == "corrupt" { // one data character changed: still base64, no longer the file
			i := strings.Index(framed, "AIPERF-FILE-DATA ") + len("AIPERF-FILE-DATA ") + 40
			framed = framed[:i] + string(rune('A'+(framed[i]-'A'+1)%26)) + framed[i+1:]
		}
		fmt.Print(framed)
	}
	fmt.Printf("connecting with key %s\n", spec.Profile.APIKey)
	run := &result.Run{Status: result.StatusComplete, Info: spec.Info, CLICommand: "key=" + spec.Profile.APIKey,
		Config: spec.Profile.Redacted(), Profiling: metrics.Summary{Metrics: []metrics.Metric{{Tag: "request_count", Value: 8}}}}
	switch mode {
	case "hollow": // a valid frame holding no run
		run = &result.Run{Status: result.StatusComplete}
	case "other": // another trial's result
		run.Info.Trial++
	}
	if err := runner.WriteFrame(os.Stdout, run); err != nil {
		return 1
	}
	return 0
}

const ns = "bench"

// exportJSON is the export the exports child writes in its pod.
var exportJSON = `{"request_count": {"avg": 4}, "note": "` + strings.Repeat("brought back from the pod ", 200) + `"}`

// cluster is a fake cluster with a kubelet running the test binary in mode
// (none when mode is ""), and a record of every object created.
type cluster struct {
	cs      *fake.Clientset
	created map[string]runtime.Object // kind/name → object as created
	kubelet *kubetest.Kubelet
}

func newCluster(t *testing.T, mode string) *cluster {
	t.Helper()
	c := &cluster{cs: fake.NewClientset(), created: map[string]runtime.Object{}}
	c.cs.PrependReactor("create", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		obj := a.(k8stesting.CreateAction).GetObject()
		m, _ := obj.(metav1.Object)
		c.created[a.GetResource().Resource+"/"+m.GetName()] = obj.DeepCopyObject()
		return false, nil, nil
	})
	if mode != "" {
		ctx, cancel := context.WithCancel(context.Background())
		c.kubelet = &kubetest.Kubelet{Client: c.cs, Namespace: ns, Command: []string{os.Args[0]},
			Env: []string{childMode + "=" + mode}, Dir: t.TempDir()}
		require.NoError(t, c.kubelet.Start(ctx))
		t.Cleanup(func() { cancel(); c.kubelet.Wait() })
	}
	return c
}

func (c *cluster) executor(t *testing.T, cfg kube.Config) *kube.Executor {
	t.Helper()
	cfg.Image, cfg.Poll = "ghcr.io/acme/aiperf:1.2", 20*time.Millisecond
	if cfg.ScheduleTimeout == 0 {
		cfg.ScheduleTimeout = time.Minute
	}
	cl := kube.Cluster{Client: c.cs, Namespace: ns}
	if c.kubelet != nil {
		cl.Logs = c.kubelet.Logs
	}
	e, err := kube.New(cl, cfg)
	require.NoError(t, err)
	return e
}

func trialSpec(key string) runner.Spec {
	p := plan.NewProfile()
	p.Model, p.URL, p.APIKey = []string{"m"}, []string{"http://127.0.0.1:1"}, key
	return runner.Spec{Profile: p, Info: result.TrialInfo{Sweep: "Big Sweep!", SweepID: 7, CellID: "c0ffee1234567890",
		CellLabel: "concurrency_8", Trial: 2, SweepUUID: "5f0c6a52-0000-4000-8000-000000000001"}}
}

// only returns the single created object of resource.
func only[T runtime.Object](t *testing.T, c *cluster, resource string) T {
	t.Helper()
	var out []T
	for k, o := range c.created {
		if strings.HasPrefix(k, resource+"/") {
			out = append(out, o.(T))
		}
	}
	require.Len(t, out, 1, resource)
	return out[0]
}

func TestTrialRunsAsAJobWithItsSpecAndKeyApart(t *testing.T) {
	c := newCluster(t, "ok")
	e := c.executor(t, kube.Config{CPU: "500m", Memory: "1Gi"})
	dir := t.TempDir()
	const key = "sk-kube-secret-42"
	run, err := e.Launch(context.Background(), trialSpec(key), dir)
	require.NoError(t, err)
	assert.Equal(t, result.StatusComplete, run.Status)
	assert.Equal(t, 2, run.Info.Trial)
	assert.Equal(t, "key="+plan.Redacted, run.CLICommand, "the child got the key from the Secret; the parent redacts it from the result")

	job := only[*batchv1.Job](t, c, "jobs")
	name := job.Name
	assert.Regexp(t, `^aiperf-big-sweep-c0ffee12-t2-[0-9a-f]{6}$`, name)
	for _, labels := range []map[string]string{job.Labels, job.Spec.Template.Labels} {
		assert.Equal(t, "Big_Sweep", labels[kube.LabelSweep])
		assert.Equal(t, "7", labels[kube.LabelSweepID])
		assert.Equal(t, "c0ffee1234567890", labels[kube.LabelCell])
		assert.Equal(t, "2", labels[kube.LabelTrial])
		assert.Equal(t, "5f0c6a52-0000-4000-8000-000000000001", labels[kube.LabelSweepUUID])
	}
	pod := job.Spec.Template.Spec
	assert.Equal(t, corev1.RestartPolicyNever, pod.RestartPolicy)
	require.NotNil(t, job.Spec.BackoffLimit)
	assert.Zero(t, *job.Spec.BackoffLimit)
	require.NotNil(t, job.Spec.Suspend)
	assert.True(t, *job.Spec.Suspend, "created suspended, started once its configmap and secret exist")
	ctr := pod.Containers[0]
	assert.Equal(t, "ghcr.io/acme/aiperf:1.2", ctr.Image)
	assert.Equal(t, []string{"aiperf"}, ctr.Command)
	assert.Equal(t, "500m", ctr.Resources.Requests.Cpu().String())
	assert.Equal(t, "1Gi", ctr.Resources.Requests.Memory().String())
	var keyRef *corev1.SecretKeySelector
	for _, env := range ctr.Env {
		assert.NotContains(t, env.Value, key, "no key in plain env")
		if env.Name == runner.APIKeyEnv {
			require.NotNil(t, env.ValueFrom)
			keyRef = env.ValueFrom.SecretKeyRef
		}
	}
	require.NotNil(t, keyRef, "the key comes from a secretKeyRef")
	assert.Equal(t, name, keyRef.Name)
	assert.NotContains(t, strings.Join(ctr.Args, " "), key)

	cm := only[*corev1.ConfigMap](t, c, "configmaps")
	assert.NotContains(t, cm.Data[runner.SpecFile], key, "the spec holds no secret")
	assert.Contains(t, cm.Data[runner.SpecFile], `"cell_id":"c0ffee1234567890"`)
	secret := only[*corev1.Secret](t, c, "secrets")
	assert.Equal(t, key, string(secret.Data[keyRef.Key]))
	for _, owned := range []metav1.Object{cm, secret} {
		require.Len(t, owned.GetOwnerReferences(), 1)
		assert.Equal(t, "Job", owned.GetOwnerReferences()[0].Kind)
		assert.Equal(t, name, owned.GetOwnerReferences()[0].Name)
	}

	assertDeleted(t, c, name)
	log, err := os.ReadFile(filepath.Join(dir, runner.LogFile))
	require.NoError(t, err)
	assert.Contains(t, string(log), "connecting with key "+plan.Redacted, "the pod log is kept, redacted")
	assert.NotContains(t, string(log), key)
}

// assertDeleted checks that the trial's Job (with propagation Background),
// ConfigMap and Secret are gone.
func assertDeleted(t *testing.T, c *cluster, name string) {
	t.Helper()
	ctx := context.Background()
	_, err := c.cs.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "job deleted: %v", err)
	_, err = c.cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "configmap deleted: %v", err)
	_, err = c.cs.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "secret deleted: %v", err)
	var background bool
	for _, a := range c.cs.Actions() {
		if d, ok := a.(k8stesting.DeleteAction); ok && d.GetResource().Resource == "jobs" && d.GetName() == name {
			p := d.GetDeleteOptions().PropagationPolicy
			background = p != nil && *p == metav1.DeletePropagationBackground
		}
	}
	assert.True(t, background, "the job is deleted with propagation Background")
}

func TestExportsComeBackFromThePod(t *testing.T) {
	c := newCluster(t, "exports")
	dir := t.TempDir()
	run, err := c.executor(t, kube.Config{}).Launch(context.Background(), trialSpec(""), dir)
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(dir, "profile_export_aiperf.json"))
	require.NoError(t, err)
	assert.Equal(t, exportJSON, string(b), "the export as the pod wrote it")
	kept, err := runner.ReadResult(filepath.Join(dir, runner.ResultFile))
	require.NoError(t, err, "the result is kept in the trial's directory, as a local trial's")
	assert.Equal(t, run.Info, kept.Info)
	log, err := os.ReadFile(filepath.Join(dir, runner.LogFile))
	require.NoError(t, err)
	assert.NotContains(t, string(log), "AIPERF-FILE-DATA")
}

func TestCorruptExportFailsTheTrial(t *testing.T) {
	c := newCluster(t, "corrupt")
	dir := t.TempDir()
	run, err := c.executor(t, kube.Config{}).Launch(context.Background(), trialSpec(""), dir)
	assert.Nil(t, run, "no result ingested")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bring its exports back: export profile_export_aiperf.json:")
	assert.Regexp(t, "corrupt frame|checksum mismatch", err.Error())
	assert.NoFileExists(t, filepath.Join(dir, "profile_export_aiperf.json"))
	assert.NoFileExists(t, filepath.Join(dir, runner.ResultFile))
	assertDeleted(t, c, only[*batchv1.Job](t, c, "jobs").Name)
}

func TestJobWithoutResultFailsWithItsLog(t *testing.T) {
	c := newCluster(t, "noframe")
	e := c.executor(t, kube.Config{})
	run, err := e.Launch(context.Background(), trialSpec(""), t.TempDir())
	assert.Nil(t, run)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "failed (BackoffLimitExceeded")
	assert.Contains(t, err.Error(), "-pod: container aiperf terminated (Error) with exit code 1)", "how its pod ended")
	assert.Contains(t, err.Error(), "no result frame")
	assert.Contains(t, err.Error(), "kubelet: exit status 1", "the log's last line")
	assert.Empty(t, only[*batchv1.Job](t, c, "jobs").Spec.Template.Spec.Containers[0].Env[1:], "no key, no secret ref")
	assert.NotContains(t, c.created, "secrets/"+only[*batchv1.Job](t, c, "jobs").Name)
}

func TestCancellationDeletesTheJob(t *testing.T) {
	c := newCluster(t, "sleep")
	e := c.executor(t, kube.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { // cancel once the child is running
		for {
			if r, err := c.kubelet.Logs(ctx, ns, podName(c)); err == nil {
				b := make([]byte, 5)
				if n, _ := r.Read(b); string(b[:n]) == "ready" {
					cancel()
					return
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	run, err := e.Launch(ctx, trialSpec("sk-x"), t.TempDir())
	assert.Nil(t, run)
	assert.ErrorIs(t, err, context.Canceled)
	assertDeleted(t, c, only[*batchv1.Job](t, c, "jobs").Name)
}

func podName(c *cluster) string {
	l, err := c.cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil || len(l.Items) == 0 {
		return ""
	}
	return l.Items[0].Name
}

func TestUnscheduledPodTimesOutWithItsEvents(t *testing.T) {
	c := newCluster(t, "")
	// The scheduler finds no node: a pending pod and its event.
	c.cs.PrependReactor("patch", "jobs", func(a k8stesting.Action) (bool, runtime.Object, error) {
		name := a.(k8stesting.PatchAction).GetName()
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name + "-x1", Labels: map[string]string{batchv1.JobNameLabel: name}},
			Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable"}}}}
		ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name + "-x1.1"}, Reason: "FailedScheduling",
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: pod.Name},
			Message:        "0/3 nodes are available: 3 Insufficient cpu."}
		pod.Namespace, ev.Namespace = ns, ns // a reactor may not call the client: the tracker holds the objects
		if err := c.cs.Tracker().Add(pod); err != nil {
			return true, nil, err
		}
		return false, nil, c.cs.Tracker().Add(ev)
	})
	e := c.executor(t, kube.Config{CPU: "64", ScheduleTimeout: 300 * time.Millisecond})
	run, err := e.Launch(context.Background(), trialSpec(""), t.TempDir())
	assert.Nil(t, run)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not scheduled within 300ms")
	assert.Contains(t, err.Error(), "FailedScheduling: 0/3 nodes are available: 3 Insufficient cpu.")
	assertDeleted(t, c, only[*batchv1.Job](t, c, "jobs").Name)
}

func TestPodLogThroughTheAPI(t *testing.T) {
	c := newCluster(t, "")
	// A kubelet-less cluster where the Job succeeds at once: the log comes
	// from the API (the fake's "fake logs"), which holds no result.
	c.cs.PrependReactor("patch", "jobs", func(a k8stesting.Action) (bool, runtime.Object, error) {
		name := a.(k8stesting.PatchAction).GetName()
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name + "-x1", Labels: map[string]string{batchv1.JobNameLabel: name}},
			Spec: corev1.PodSpec{NodeName: "n1"}, Status: corev1.PodStatus{Phase: corev1.PodSucceeded}}
		pod.Namespace = ns
		if err := c.cs.Tracker().Add(pod); err != nil {
			return true, nil, err
		}
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Status: batchv1.JobStatus{Succeeded: 1}}
		return true, job, nil
	})
	c.cs.PrependReactor("get", "jobs", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: a.(k8stesting.GetAction).GetName()},
			Status: batchv1.JobStatus{Succeeded: 1}}, nil
	})
	e := c.executor(t, kube.Config{})
	_, err := e.Launch(context.Background(), trialSpec(""), t.TempDir())
	require.ErrorIs(t, err, runner.ErrNoFrame)
	assert.Contains(t, err.Error(), "succeeded without a result")
	assert.Contains(t, err.Error(), ": fake logs", "the log read through the API")
}

func TestConfigErrorsNameTheFlag(t *testing.T) {
	cl := kube.Cluster{Client: fake.NewClientset(), Namespace: ns}
	_, err := kube.New(cl, kube.Config{})
	assert.ErrorContains(t, err, "--image is required")
	_, err = kube.New(cl, kube.Config{Image: "x", CPU: "two"})
	assert.ErrorContains(t, err, `--cpu "two" is not a Kubernetes quantity`)
	_, err = kube.New(cl, kube.Config{Image: "x", Memory: "lots"})
	assert.ErrorContains(t, err, `--memory "lots"`)
	_, err = kube.New(kube.Cluster{Client: cl.Client}, kube.Config{Image: "x", ScheduleTimeout: time.Minute})
	assert.ErrorContains(t, err, "--namespace is required")
	for _, d := range []time.Duration{0, -time.Second} { // 0 is not "the default": the flag's default is 5m
		_, err = kube.New(cl, kube.Config{Image: "x", ScheduleTimeout: d})
		assert.ErrorContains(t, err, "--schedule-timeout must be positive", d)
	}

	spec := trialSpec("")
	spec.Profile.Header = []string{"Authorization: Bearer sk-in-a-header"}
	_, _, err = runner.RemoteSpec(spec)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cell concurrency_8")
	assert.NotContains(t, err.Error(), "sk-in-a-header")
}
