// Package kubetest plays the part of a cluster's nodes for a fake clientset
// (k8s.io/client-go/kubernetes/fake): its Kubelet runs each Job's container
// as a local process, the way a kubelet would run it in a pod, so that the
// kubernetes executor runs end to end in tests.
package kubetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// Kubelet runs the Jobs of one namespace. For each Job that is not
// suspended it materialises the pod's volumes (a ConfigMap's keys as files,
// an emptyDir as a directory) in a temporary directory, resolves the
// container's env (values, Secret and ConfigMap keys), creates the Job's pod,
// runs Command with the container's args (mount paths rewritten to the
// volumes' directories) and the pod's env, keeps its stdout and stderr as
// the pod's log, and records the outcome in the pod's status (its container
// running, then terminated with the exit code) and the Job's.
// Deleting the Job interrupts its process, as deleting a pod does.
type Kubelet struct {
	Client    kubernetes.Interface
	Namespace string
	Command   []string // the image's executable, e.g. the test binary
	Env       []string // added to this process's environment
	Dir       string   // where volumes are materialised

	mu      sync.Mutex
	logs    map[string]*bytes.Buffer      // pod name → its output
	running map[string]context.CancelFunc // job name → stops its process
	wg      sync.WaitGroup
}

// Start watches the namespace's Jobs until ctx ends; Wait waits for the
// processes it started.
func (k *Kubelet) Start(ctx context.Context) error {
	k.logs, k.running = map[string]*bytes.Buffer{}, map[string]context.CancelFunc{}
	w, err := k.Client.BatchV1().Jobs(k.Namespace).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("watch jobs: %w", err)
	}
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		defer w.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.ResultChan():
				if !ok {
					return
				}
				if job, isJob := ev.Object.(*batchv1.Job); isJob {
					k.handle(ctx, ev.Type, job)
				}
			}
		}
	}()
	return nil
}

// Wait waits for every process the kubelet started and its watch to end.
func (k *Kubelet) Wait() { k.wg.Wait() }

func (k *Kubelet) handle(ctx context.Context, t watch.EventType, job *batchv1.Job) {
	k.mu.Lock()
	defer k.mu.Unlock()
	stop, seen := k.running[job.Name]
	switch {
	case t == watch.Deleted && seen:
		stop()
	case t != watch.Deleted && !seen && (job.Spec.Suspend == nil || !*job.Spec.Suspend):
		pctx, cancel := context.WithCancel(ctx)
		k.running[job.Name] = cancel
		out := &bytes.Buffer{}
		k.logs[job.Name+"-pod"] = out
		k.wg.Add(1)
		go func() {
			defer k.wg.Done()
			defer cancel()
			k.run(pctx, job, out)
		}()
	}
}

// Logs is a kube.LogReader: the output of the pod's process so far.
func (k *Kubelet) Logs(_ context.Context, _, pod string) (io.ReadCloser, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	b, ok := k.logs[pod]
	if !ok {
		return nil, fmt.Errorf("pod %s has no log", pod)
	}
	return io.NopCloser(bytes.NewReader(bytes.Clone(b.Bytes()))), nil
}

// run plays the pod of job: its process's output goes to out, under k.mu.
func (k *Kubelet) run(ctx context.Context, job *batchv1.Job, out *bytes.Buffer) {
	bg := context.WithoutCancel(ctx)
	pod, err := k.createPod(bg, job)
	var code error
	if err == nil {
		code = k.exec(ctx, job, out)
	} else {
		code = err
	}
	phase := corev1.PodSucceeded
	if code != nil {
		phase = corev1.PodFailed
		k.mu.Lock()
		fmt.Fprintf(out, "kubelet: %v\n", code)
		k.mu.Unlock()
	}
	if pod != nil {
		pod.Status.Phase = phase
		exit := int32(0)
		if ee := (*exec.ExitError)(nil); errors.As(code, &ee) {
			exit = int32(ee.ExitCode())
		} else if code != nil {
			exit = 128
		}
		for i := range pod.Status.ContainerStatuses {
			pod.Status.ContainerStatuses[i].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: exit, Reason: map[bool]string{true: "Completed", false: "Error"}[exit == 0]}}
		}
		_, _ = k.Client.CoreV1().Pods(k.Namespace).UpdateStatus(bg, pod, metav1.UpdateOptions{})
	}
	cur, err := k.Client.BatchV1().Jobs(k.Namespace).Get(bg, job.Name, metav1.GetOptions{})
	if err != nil {
		return // deleted
	}
	cond := batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}
	if code != nil {
		cur.Status.Failed = 1
		cond.Type, cond.Reason, cond.Message = batchv1.JobFailed, "BackoffLimitExceeded", "Job has reached the specified backoff limit"
	} else {
		cur.Status.Succeeded = 1
	}
	cur.Status.Conditions = append(cur.Status.Conditions, cond)
	_, _ = k.Client.BatchV1().Jobs(k.Namespace).UpdateStatus(bg, cur, metav1.UpdateOptions{})
}

func (k *Kubelet) createPod(ctx context.Context, job *batchv1.Job) (*corev1.Pod, error) {
	labels := map[string]string{batchv1.JobNameLabel: job.Name, "job-name": job.Name}
	for l, v := range job.Spec.Template.Labels {
		labels[l] = v
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: job.Name + "-pod", Labels: labels, CreationTimestamp: metav1.Now()},
		Spec:       *job.Spec.Template.Spec.DeepCopy(),
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	for _, c := range job.Spec.Template.Spec.Containers {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{Name: c.Name,
			Image: c.Image, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}})
	}
	pod.Spec.NodeName = "kubetest-node"
	return k.Client.CoreV1().Pods(k.Namespace).Create(ctx, pod, metav1.CreateOptions{})
}

// exec runs the job's first container.
func (k *Kubelet) exec(ctx context.Context, job *batchv1.Job, out *bytes.Buffer) error {
	spec := job.Spec.Template.Spec
	c := spec.Containers[0]
	root := filepath.Join(k.Dir, job.Name)
	paths := map[string]string{} // mount path → local directory
	for _, v := range spec.Volumes {
		dir := filepath.Join(root, v.Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if v.ConfigMap != nil {
			cm, err := k.Client.CoreV1().ConfigMaps(k.Namespace).Get(ctx, v.ConfigMap.Name, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("mount configmap %s: %w", v.ConfigMap.Name, err)
			}
			for key, val := range cm.Data {
				if err := os.WriteFile(filepath.Join(dir, key), []byte(val), 0o444); err != nil {
					return err
				}
			}
		}
		for _, m := range c.VolumeMounts {
			if m.Name == v.Name {
				paths[m.MountPath] = dir
			}
		}
	}
	env := append(os.Environ(), k.Env...)
	for _, e := range c.Env {
		val, err := k.envValue(ctx, e)
		if err != nil {
			return err
		}
		env = append(env, e.Name+"="+val)
	}
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		for mount, dir := range paths {
			if a == mount || strings.HasPrefix(a, mount+"/") {
				a = dir + a[len(mount):]
			}
		}
		args[i] = a
	}
	cmd := exec.CommandContext(ctx, k.Command[0], append(append([]string{}, k.Command[1:]...), args...)...)
	cmd.Env = env
	w := lockedWriter{&k.mu, out}
	cmd.Stdout, cmd.Stderr = w, w
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	return cmd.Run()
}

func (k *Kubelet) envValue(ctx context.Context, e corev1.EnvVar) (string, error) {
	switch {
	case e.ValueFrom == nil:
		return e.Value, nil
	case e.ValueFrom.SecretKeyRef != nil:
		ref := e.ValueFrom.SecretKeyRef
		s, err := k.Client.CoreV1().Secrets(k.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return "", fmt.Errorf("env %s: secret %s: %w", e.Name, ref.Name, err)
		}
		v, ok := s.Data[ref.Key]
		if !ok {
			return "", fmt.Errorf("env %s: secret %s has no key %s", e.Name, ref.Name, ref.Key)
		}
		return string(v), nil
	case e.ValueFrom.ConfigMapKeyRef != nil:
		ref := e.ValueFrom.ConfigMapKeyRef
		cm, err := k.Client.CoreV1().ConfigMaps(k.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return "", fmt.Errorf("env %s: configmap %s: %w", e.Name, ref.Name, err)
		}
		return cm.Data[ref.Key], nil
	}
	return "", fmt.Errorf("env %s: unsupported valueFrom", e.Name)
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
