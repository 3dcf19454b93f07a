package kube_test

import (
	"context"
	"errors"
	"io"
	"os"
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
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/runner"
	"github.com/aiperf-go/aiperf/runner/kube"
)

// launchWithin runs the trial, failing the test should it not end within
// a bound far above every wait the test sets (a hang, not a slow machine).
func launchWithin(t *testing.T, e *kube.Executor, dir string) (*result.Run, error) {
	t.Helper()
	type ret struct {
		run *result.Run
		err error
	}
	done := make(chan ret, 1)
	go func() {
		run, err := e.Launch(context.Background(), trialSpec(""), dir)
		done <- ret{run, err}
	}()
	select {
	case r := <-done:
		return r.run, r.err
	case <-time.After(2 * time.Minute):
		t.Fatal("the trial hangs")
		return nil, nil
	}
}

// deletedJob says whether a Job was deleted.
func deletedJob(c *cluster) bool {
	for _, a := range c.cs.Actions() {
		if a.GetVerb() == "delete" && a.GetResource().Resource == "jobs" {
			return true
		}
	}
	return false
}

// onStart makes the cluster hold, once a Job is started, its pod
// (<job>-x1, on node when not "") with status, and events about the pod
// (their InvolvedObject.Name set to it).
func (c *cluster) onStart(node string, status corev1.PodStatus, events ...corev1.Event) {
	c.cs.PrependReactor("patch", "jobs", func(a k8stesting.Action) (bool, runtime.Object, error) {
		name := a.(k8stesting.PatchAction).GetName()
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name + "-x1", Namespace: ns,
			Labels: map[string]string{batchv1.JobNameLabel: name}}, Spec: corev1.PodSpec{NodeName: node}, Status: status}
		if err := c.cs.Tracker().Add(pod); err != nil { // a reactor may not call the client: the tracker holds the objects
			return true, nil, err
		}
		for i, ev := range events {
			ev.Name, ev.Namespace = pod.Name+"."+string(rune('a'+i)), ns
			ev.InvolvedObject = corev1.ObjectReference{Kind: "Pod", Name: pod.Name}
			if err := c.cs.Tracker().Add(&ev); err != nil {
				return true, nil, err
			}
		}
		return false, nil, nil
	})
}

// endAtOnce makes every Job end as soon as it is read, failed or not.
func (c *cluster) endAtOnce(failed bool) {
	c.cs.PrependReactor("get", "jobs", func(a k8stesting.Action) (bool, runtime.Object, error) {
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: a.(k8stesting.GetAction).GetName(), Namespace: ns},
			Status: batchv1.JobStatus{Succeeded: 1}}
		if failed {
			job.Status = batchv1.JobStatus{Failed: 1, Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailed,
				Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit"}}}
		}
		return true, job, nil
	})
}

func waiting(reason, msg string) corev1.PodStatus {
	return corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: "aiperf",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}}}}
}

var running = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "aiperf",
	State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}

// A pod bound to a node whose container never starts (its image cannot be
// pulled, its config is wrong) fails after --schedule-timeout, naming the
// waiting reason and the events.
func TestPodBoundButNotStartedTimesOut(t *testing.T) {
	for reason, msg := range map[string]string{
		"ImagePullBackOff":           `Back-off pulling image "ghcr.io/acme/aiperf:nope"`,
		"CreateContainerConfigError": `secret "gone" not found`,
	} {
		t.Run(reason, func(t *testing.T) {
			c := newCluster(t, "")
			c.onStart("node-1", waiting(reason, msg), corev1.Event{Reason: "Failed", Message: "Error: " + reason})
			e := c.executor(t, kube.Config{ScheduleTimeout: 300 * time.Millisecond})
			run, err := launchWithin(t, e, t.TempDir())
			assert.Nil(t, run)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "its pod did not start within 300ms (--schedule-timeout)")
			assert.Contains(t, err.Error(), "container aiperf waiting: "+reason+": "+msg)
			assert.Contains(t, err.Error(), "-x1 Failed: Error: "+reason)
			assertDeleted(t, c, only[*batchv1.Job](t, c, "jobs").Name)
		})
	}
}

// Reading the Job refused for want of rights fails the trial at once with
// the API's message, not after a timeout with another cause.
func TestJobReadRefusedFailsAtOnce(t *testing.T) {
	for name, refusal := range map[string]error{
		"forbidden":    apierrors.NewForbidden(schema.GroupResource{Group: "batch", Resource: "jobs"}, "x", errors.New("no get")),
		"unauthorized": apierrors.NewUnauthorized("token expired"),
	} {
		t.Run(name, func(t *testing.T) {
			c := newCluster(t, "")
			c.onStart("node-1", running)
			c.cs.PrependReactor("get", "jobs", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, refusal })
			e := c.executor(t, kube.Config{ScheduleTimeout: time.Hour}) // no timeout can explain it
			_, err := launchWithin(t, e, t.TempDir())
			require.Error(t, err)
			assert.Contains(t, err.Error(), "read the job: "+refusal.Error())
			assert.Contains(t, err.Error(), "see RBAC in docs/kubernetes.md")
			assert.True(t, deletedJob(c), "the job is deleted")
		})
	}
}

// A Job the API keeps failing to read is retried, then fails the trial:
// until the start deadline before its pod started, for the retry bound in
// a row after.
func TestJobReadFailingForGoodFailsTheTrial(t *testing.T) {
	broken := func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewInternalError(errors.New("etcd is down"))
	}
	t.Run("started", func(t *testing.T) {
		c := newCluster(t, "")
		c.onStart("node-1", running)
		gets := 0
		c.cs.PrependReactor("get", "jobs", func(a k8stesting.Action) (bool, runtime.Object, error) {
			if gets++; gets <= 2 { // read, its pod seen started, then the API breaks
				return false, nil, nil
			}
			return broken(a)
		})
		e := c.executor(t, kube.Config{ScheduleTimeout: time.Hour})
		kube.SetLimits(e, 200*time.Millisecond, time.Minute, kube.MaxPodLog, 1<<20)
		_, err := launchWithin(t, e, t.TempDir())
		require.Error(t, err)
		assert.Contains(t, err.Error(), "the API failed for")
		assert.Contains(t, err.Error(), "in a row, the job is deleted: read the job: Internal error occurred: etcd is down")
	})
	t.Run("not started", func(t *testing.T) {
		c := newCluster(t, "")
		c.cs.PrependReactor("get", "jobs", broken)
		e := c.executor(t, kube.Config{ScheduleTimeout: 300 * time.Millisecond})
		_, err := launchWithin(t, e, t.TempDir())
		require.Error(t, err)
		assert.Contains(t, err.Error(), "its pod could not be seen to start within 300ms (--schedule-timeout)")
		assert.Contains(t, err.Error(), "the API failed: read the job: Internal error occurred: etcd is down")
	})
}

// A pod list refused fails the trial with that refusal, not as a pod that
// was not scheduled.
func TestPodListRefusedIsReportedAsSuch(t *testing.T) {
	c := newCluster(t, "")
	c.onStart("node-1", running)
	c.cs.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New("no list"))
	})
	e := c.executor(t, kube.Config{ScheduleTimeout: time.Hour})
	_, err := launchWithin(t, e, t.TempDir())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "list the job's pods: pods is forbidden")
	assert.NotContains(t, err.Error(), "not scheduled")
}

// A failed Job is named with how its pod ended: OOMKilled with its exit
// code, or evicted and why, before the log's last line.
func TestFailedJobNamesHowItsPodEnded(t *testing.T) {
	t.Run("oomkilled", func(t *testing.T) {
		c := newCluster(t, "")
		c.onStart("node-1", corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{
			Name: "aiperf", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				Reason: "OOMKilled", ExitCode: 137}}}}})
		c.endAtOnce(true)
		e := c.executor(t, kube.Config{})
		e.Logs = func(context.Context, string, string) (io.ReadCloser, error) {
			return io.NopCloser(strings.NewReader("loading the dataset\n")), nil
		}
		_, err := launchWithin(t, e, t.TempDir())
		require.Error(t, err)
		assert.Regexp(t, `failed \(BackoffLimitExceeded: Job has reached the specified backoff limit; pod \S+-x1: `+
			`container aiperf terminated \(OOMKilled\) with exit code 137\) without a result: .*: loading the dataset$`, err.Error())
	})
	t.Run("evicted", func(t *testing.T) {
		c := newCluster(t, "")
		c.onStart("node-1", corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted",
			Message: "The node was low on resource: memory."})
		c.endAtOnce(true)
		e := c.executor(t, kube.Config{})
		e.Logs = func(context.Context, string, string) (io.ReadCloser, error) {
			return nil, errors.New("the pod's log is gone with its node")
		}
		_, err := launchWithin(t, e, t.TempDir())
		require.Error(t, err)
		assert.Regexp(t, `failed \(BackoffLimitExceeded: .*; pod \S+-x1: Evicted: The node was low on resource: memory\.\); `+
			`its result could not be read: read the log of pod \S+-x1: the pod's log is gone with its node`, err.Error())
	})
}

// endless is a pod log stream that says a line and never ends, until
// closed.
type endless struct {
	said bool
	done chan struct{}
}

func (r *endless) Read(p []byte) (int, error) {
	if !r.said {
		r.said = true
		return copy(p, "starting\n"), nil
	}
	<-r.done
	return 0, io.ErrClosedPipe
}

func (r *endless) Close() error {
	select {
	case <-r.done:
	default:
		close(r.done)
	}
	return nil
}

// The log of a finished Job that never ends fails the trial once the log
// wait is over, keeping what was read.
func TestEndlessPodLogIsBounded(t *testing.T) {
	c := newCluster(t, "")
	c.onStart("node-1", corev1.PodStatus{Phase: corev1.PodSucceeded})
	c.endAtOnce(false)
	e := c.executor(t, kube.Config{})
	kube.SetLimits(e, time.Minute, 300*time.Millisecond, kube.MaxPodLog, 1<<20) // it never ends: no machine is too slow
	e.Logs = func(context.Context, string, string) (io.ReadCloser, error) {
		return &endless{done: make(chan struct{})}, nil
	}
	dir := t.TempDir()
	_, err := launchWithin(t, e, dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "succeeded; its result could not be read: the log of pod")
	assert.Contains(t, err.Error(), "did not end (9 bytes read)")
	assert.Contains(t, err.Error(), "(the log is read within 300ms of the job's end)")
	kept, rerr := os.ReadFile(filepath.Join(dir, runner.LogFile))
	require.NoError(t, rerr)
	assert.Equal(t, "starting\n", string(kept))
}

// A pod log over the most read fails the trial, and only its end is kept.
func TestHugePodLogFailsAndOnlyItsEndIsKept(t *testing.T) {
	c := newCluster(t, "")
	c.onStart("node-1", corev1.PodStatus{Phase: corev1.PodSucceeded})
	c.endAtOnce(false)
	e := c.executor(t, kube.Config{})
	kube.SetLimits(e, time.Minute, time.Minute, 1<<20, 64<<10)
	e.Logs = func(context.Context, string, string) (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(strings.Repeat("a chatty pod says this again\n", 5<<20/29) + "the last line\n")), nil
	}
	dir := t.TempDir()
	run, err := launchWithin(t, e, dir)
	assert.Nil(t, run)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "exceeds 1 MiB, the most a trial's log may hold; its end is kept in aiperf.log")
	kept, rerr := os.ReadFile(filepath.Join(dir, runner.LogFile))
	require.NoError(t, rerr)
	assert.LessOrEqual(t, len(kept), 64<<10+100)
	assert.True(t, strings.HasPrefix(string(kept), "[aiperf: the pod log exceeds 1 MiB: only its end is kept]\na chatty pod"),
		"the note, then whole lines")
	assert.True(t, strings.HasSuffix(string(kept), "the last line\n"), "its end")
}

// A result frame that is not a run's, or is another trial's, fails the
// trial and nothing is kept as its result.
func TestResultThatIsNotTheTrialsIsRefused(t *testing.T) {
	for mode, want := range map[string]string{
		"hollow": "the result frame is not a run's result: it names no model",
		"other":  `the result frame is not this trial's: it names sweep 7 ("5f0c6a52-0000-4000-8000-000000000001") cell "c0ffee1234567890" trial 3`,
	} {
		t.Run(mode, func(t *testing.T) {
			c := newCluster(t, mode)
			dir := t.TempDir()
			run, err := launchWithin(t, c.executor(t, kube.Config{}), dir)
			assert.Nil(t, run)
			require.Error(t, err)
			assert.Contains(t, err.Error(), want)
			assert.NoFileExists(t, filepath.Join(dir, runner.ResultFile))
		})
	}
}

// An object another owns under the trial's name (AlreadyExists) is left
// alone: the trial deletes only what it created.
func TestCleanupDeletesOnlyWhatTheTrialCreated(t *testing.T) {
	for _, resource := range []string{"jobs", "configmaps"} {
		t.Run(resource, func(t *testing.T) {
			c := newCluster(t, "")
			c.cs.PrependReactor("create", resource, func(a k8stesting.Action) (bool, runtime.Object, error) {
				obj := a.(k8stesting.CreateAction).GetObject().(metav1.Object)
				return true, nil, apierrors.NewAlreadyExists(schema.GroupResource{Resource: resource}, obj.GetName())
			})
			_, err := launchWithin(t, c.executor(t, kube.Config{}), t.TempDir())
			require.Error(t, err)
			assert.Contains(t, err.Error(), "already exists")
			deleted := map[string]bool{}
			for _, a := range c.cs.Actions() {
				if a.GetVerb() == "delete" {
					deleted[a.GetResource().Resource] = true
				}
			}
			assert.False(t, deleted[resource], "another's %s is not deleted", resource)
			assert.Equal(t, resource == "configmaps", deleted["jobs"], "the job is deleted when the trial created it")
		})
	}
}

// A worker that does not join in time is reported with its pod's state and
// events, read before its Job (and so its pod) is deleted.
func TestWorkerNotJoinedNamesItsPodsEvents(t *testing.T) {
	c := newCluster(t, "")
	c.onStart("node-1", waiting("ImagePullBackOff", "Back-off pulling image"),
		corev1.Event{Reason: "Failed", Message: "Failed to pull image: not found"})
	c.cs.PrependReactor("delete", "jobs", func(a k8stesting.Action) (bool, runtime.Object, error) {
		name := a.(k8stesting.DeleteAction).GetName() // the pod goes with its Job
		_ = c.cs.Tracker().Delete(schema.GroupVersionResource{Version: "v1", Resource: "pods"}, ns, name+"-x1")
		return false, nil, nil
	})
	e := c.executor(t, kube.Config{ScheduleTimeout: 300 * time.Millisecond})
	w, err := e.Workers(1, "127.0.0.1:0", nil)
	require.NoError(t, err)
	_, err = w.Start(context.Background(), 0)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "did not connect within 300ms (--schedule-timeout)")
	assert.Contains(t, err.Error(), "container aiperf waiting: ImagePullBackOff: Back-off pulling image")
	assert.Contains(t, err.Error(), "-x1 Failed: Failed to pull image: not found")
}
