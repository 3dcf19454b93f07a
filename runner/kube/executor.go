package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/runner"
)

// Executor runs each trial as a Job in Cluster.Namespace.
type Executor struct {
	Cluster
	Config
}

var _ runner.Executor = (*Executor)(nil)

// New checks cfg (naming the flag at fault) and returns the executor.
func New(c Cluster, cfg Config) (*Executor, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if c.Namespace == "" {
		return nil, errors.New("--namespace is required: the kubeconfig's context names none")
	}
	if cfg.ScheduleTimeout == 0 {
		cfg.ScheduleTimeout = 5 * time.Minute
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 2 * time.Second
	}
	return &Executor{Cluster: c, Config: cfg}, nil
}

// Launch runs one trial as a Job, waits for it, reads its result from the
// pod's log (kept, redacted, as the trial's LogFile in dir) and deletes the
// Job, its pod, ConfigMap and Secret, whatever happened, ctx cancelled
// included.
func (e *Executor) Launch(ctx context.Context, spec runner.Spec, dir string) (run *result.Run, err error) {
	remote, apiKey, err := runner.RemoteSpec(spec)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create trial dir: %w", err)
	}
	redact := spec.Profile.Redactor()
	name := jobName(spec)
	o, err := e.objects(name, remote, apiKey)
	if err != nil {
		return nil, err
	}
	where := fmt.Sprintf("trial job %s/%s", e.Namespace, name)
	defer func() {
		if cerr := e.cleanup(ctx, name); cerr != nil {
			if run != nil {
				run.Audit.Warnings = append(run.Audit.Warnings, cerr.Error())
			} else {
				err = errors.Join(err, cerr)
			}
		}
		err = redact.Error(err)
	}()
	job, err := e.start(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	job, err = e.wait(ctx, job.Name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	logPath := filepath.Join(dir, runner.LogFile)
	log, err := e.readLog(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if err := os.WriteFile(logPath, []byte(redact.Redact(string(runner.StripFrameData(log)))), 0o644); err != nil {
		return nil, fmt.Errorf("write trial log: %w", err)
	}
	run, err = runner.ReadFrame(bytes.NewReader(log))
	if err != nil {
		how := "succeeded"
		if failed, why := jobFailed(job); failed {
			how = "failed (" + why + ")"
		}
		return nil, fmt.Errorf("%s %s without a result: %w%s", where, how, err, runner.LogTail(logPath))
	}
	return e.ingest(run.Redacted(redact), log, dir, where)
}

// ingest brings the trial's exports back from its log into dir and keeps
// its result there, as a local trial leaves them (a later --resume reads
// it, whatever executor runs then). An export that fails its checksum or
// is missing fails the trial: its result is not ingested.
func (e *Executor) ingest(run *result.Run, log []byte, dir, where string) (*result.Run, error) {
	warnings, err := runner.ReadExports(log, dir)
	if err != nil {
		return nil, fmt.Errorf("%s: bring its exports back: %w", where, err)
	}
	run.Audit.Warnings = append(slices.Clone(run.Audit.Warnings), warnings...)
	if err := runner.WriteResult(filepath.Join(dir, runner.ResultFile), run); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return run, nil
}

// start creates the Job suspended, then its ConfigMap and Secret owned by
// it, then lets it run.
func (e *Executor) start(ctx context.Context, o trialObjects) (*batchv1.Job, error) {
	jobs := e.Client.BatchV1().Jobs(e.Namespace)
	job, err := jobs.Create(ctx, o.job, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create job: %w", err)
	}
	o.ownedBy(job)
	if o.spec != nil {
		if _, err := e.Client.CoreV1().ConfigMaps(e.Namespace).Create(ctx, o.spec, metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("create the trial spec's configmap: %w", err)
		}
	}
	if o.secret != nil {
		if _, err := e.Client.CoreV1().Secrets(e.Namespace).Create(ctx, o.secret, metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("create the job's secret: %w", err)
		}
	}
	job, err = jobs.Patch(ctx, job.Name, types.MergePatchType, []byte(`{"spec":{"suspend":false}}`), metav1.PatchOptions{})
	if err != nil {
		return nil, fmt.Errorf("start job: %w", err)
	}
	return job, nil
}

// cleanup deletes the trial's objects; the Job's pod goes with it
// (propagation Background). It is not cut short by ctx: a cancelled sweep
// deletes its Jobs too.
func (e *Executor) cleanup(ctx context.Context, name string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	bg := metav1.DeletePropagationBackground
	del := metav1.DeleteOptions{PropagationPolicy: &bg}
	var errs []error
	for what, f := range map[string]func() error{
		"job":       func() error { return e.Client.BatchV1().Jobs(e.Namespace).Delete(ctx, name, del) },
		"configmap": func() error { return e.Client.CoreV1().ConfigMaps(e.Namespace).Delete(ctx, name, del) },
		"secret":    func() error { return e.Client.CoreV1().Secrets(e.Namespace).Delete(ctx, name, del) },
	} {
		if err := f(); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete %s %s/%s: %w", what, e.Namespace, name, err))
		}
	}
	return errors.Join(errs...)
}

// readLog reads the log of the Job's pod (the latest, should there be more).
func (e *Executor) readLog(ctx context.Context, job string) ([]byte, error) {
	pods, err := e.pods(ctx, job)
	if err != nil {
		return nil, err
	}
	if len(pods) == 0 {
		return nil, errors.New("the job ended without a pod to read the result from")
	}
	pod := pods[0]
	for _, p := range pods[1:] {
		if p.CreationTimestamp.After(pod.CreationTimestamp.Time) {
			pod = p
		}
	}
	rc, err := e.podLog(ctx, pod.Name)
	if err != nil {
		return nil, fmt.Errorf("read the log of pod %s: %w", pod.Name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return nil, fmt.Errorf("read the log of pod %s: %w", pod.Name, err)
	}
	return b, nil
}

// pods lists the pods of the Job.
func (e *Executor) pods(ctx context.Context, job string) ([]corev1.Pod, error) {
	l, err := e.Client.CoreV1().Pods(e.Namespace).List(ctx, metav1.ListOptions{LabelSelector: batchv1.JobNameLabel + "=" + job})
	if err != nil {
		return nil, fmt.Errorf("list the job's pods: %w", err)
	}
	return l.Items, nil
}
