package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// Bounds of the API calls made while a trial runs.
const (
	// apiCallTimeout bounds one call once the trial's pod started.
	apiCallTimeout = 30 * time.Second
	// reportTimeout bounds the reads that explain a failure (the pod's
	// state, its events), made past the deadline that failed it.
	reportTimeout = 15 * time.Second
	// defaultAPIRetry is how long the calls may fail in a row, once the
	// pod started, before the trial fails.
	defaultAPIRetry = 2 * time.Minute
	// maxWarnings bounds the API failures a run records.
	maxWarnings = 10
)

// waiter follows one Job until it ends. Until its pod started (a container
// running or ended), every API call is bounded by the start deadline
// (--schedule-timeout), a 429's Retry-After included; after that, each call
// by apiCallTimeout. A call refused for want of rights (403, 401) fails the
// trial at once; other failures are retried until the deadline, or, once
// the pod started, for Executor.apiRetry in a row.
type waiter struct {
	e        *Executor
	name     string
	deadline time.Time // the start deadline
	started  bool

	failingFrom time.Time // when the calls began to fail in a row (zero: they do not)
	warnings    []string  // the API failures retried, for the run's record
}

// wait watches the Job until it succeeds or fails, checking it every Poll
// as well (a watch may miss events or close). A Job whose pod has not
// started by deadline fails, with why: its pod unscheduled, a container
// waiting (ImagePullBackOff: …), its events.
func (e *Executor) wait(ctx context.Context, name string, deadline time.Time) (*batchv1.Job, []string, error) {
	wt := &waiter{e: e, name: name, deadline: deadline}
	job, err := wt.run(ctx)
	return job, wt.warnings, err
}

func (wt *waiter) run(ctx context.Context) (*batchv1.Job, error) {
	wctx, stop := context.WithCancel(ctx)
	ended, refused := make(chan *batchv1.Job, 1), make(chan error, 1)
	watching := make(chan struct{})
	go func() {
		defer close(watching)
		wt.watch(wctx, ended, refused)
	}()
	defer func() { stop(); <-watching }()
	tick := time.NewTicker(wt.e.Poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("cancelled, the job is deleted: %w", ctx.Err())
		case job := <-ended:
			return job, nil
		case err := <-refused:
			return nil, fmt.Errorf("%w (the identity needs get, list and watch on jobs: see RBAC in docs/kubernetes.md)", err)
		case <-tick.C:
			job, err := wt.check(ctx)
			if job != nil || err != nil {
				return job, err
			}
		}
	}
}

// watch watches the Job until ctx ends, in its own goroutine (a call may
// wait out a 429's Retry-After), each watch for at most apiCallTimeout,
// again every Poll: it sends the Job once it ended to ended, a watch
// refused for want of rights to refused. Other failures are left to the
// polling, which reads the Job too.
func (wt *waiter) watch(ctx context.Context, ended chan<- *batchv1.Job, refused chan<- error) {
	jobs := wt.e.Client.BatchV1().Jobs(wt.e.Namespace)
	for ctx.Err() == nil {
		wctx, cancel := context.WithTimeout(ctx, apiCallTimeout)
		w, err := jobs.Watch(wctx, metav1.ListOptions{FieldSelector: "metadata.name=" + wt.name})
		if forbidden(err) {
			cancel()
			refused <- fmt.Errorf("watch the job: %w", err)
			return
		}
		if err == nil {
			job := watchUntil(wctx, w, wt.name)
			w.Stop()
			if job != nil {
				cancel()
				ended <- job
				return
			}
		}
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-time.After(wt.e.Poll):
		}
	}
}

// watchUntil returns the Job once w says it ended, or nil when w closes or
// ctx ends (a watcher may not close of itself when its ctx does).
func watchUntil(ctx context.Context, w watch.Interface, name string) *batchv1.Job {
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil
			}
			if job, isJob := ev.Object.(*batchv1.Job); isJob && job.Name == name && jobDone(job) {
				return job
			}
		}
	}
}

// check reads the Job (and, until it started, its pods) once: the Job if
// it ended, or an error that ends the wait.
func (wt *waiter) check(ctx context.Context) (*batchv1.Job, error) {
	cctx, cancel := wt.callCtx(ctx)
	defer cancel()
	job, err := wt.e.Client.BatchV1().Jobs(wt.e.Namespace).Get(cctx, wt.name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, errors.New("the job was deleted by someone else while it ran")
	case err != nil:
		return nil, wt.failed(ctx, fmt.Errorf("read the job: %w", err))
	case jobDone(job):
		return job, nil
	}
	wt.ok()
	if wt.started || jobStarted(job) {
		wt.started = true
		return nil, nil
	}
	pods, err := wt.e.pods(cctx, wt.name)
	if err != nil {
		return nil, wt.failed(ctx, err)
	}
	if slices.ContainsFunc(pods, podStarted) {
		wt.started = true
		return nil, nil
	}
	if time.Now().After(wt.deadline) {
		return nil, wt.notStarted(ctx, pods, nil)
	}
	return nil, nil
}

// callCtx bounds one API call: by the start deadline until the pod
// started (once it passed, by reportTimeout: a last look at the pod), by
// apiCallTimeout after.
func (wt *waiter) callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	switch {
	case wt.started:
		return context.WithTimeout(ctx, apiCallTimeout)
	case time.Now().After(wt.deadline):
		return context.WithTimeout(ctx, reportTimeout)
	}
	return context.WithDeadline(ctx, wt.deadline)
}

// ok notes a round of calls that succeeded.
func (wt *waiter) ok() { wt.failingFrom = time.Time{} }

// failed decides what a failed call means: a refusal for want of rights
// ends the wait at once; any other failure is retried, until the start
// deadline while the pod has not started, for apiRetry in a row after.
func (wt *waiter) failed(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("cancelled, the job is deleted: %w", ctx.Err())
	}
	if forbidden(err) {
		return fmt.Errorf("%w (the identity lacks a right the executor needs: see RBAC in docs/kubernetes.md)", err)
	}
	now := time.Now()
	if wt.failingFrom.IsZero() {
		wt.failingFrom = now
		if len(wt.warnings) < maxWarnings {
			wt.warnings = append(wt.warnings, fmt.Sprintf("job %s/%s: the API failed, retried: %v", wt.e.Namespace, wt.name, err))
		}
	}
	switch {
	case !wt.started && now.After(wt.deadline):
		return wt.notStarted(ctx, nil, err)
	case wt.started && now.Sub(wt.failingFrom) >= wt.e.apiRetry:
		return fmt.Errorf("the API failed for %s in a row, the job is deleted: %w", wt.e.apiRetry.Round(time.Second), err)
	}
	return nil
}

// forbidden says whether err is the API refusing the caller's identity or
// its rights: retrying cannot help.
func forbidden(err error) bool {
	return apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err)
}

// notStarted is the error of a Job whose pod did not start in time: its
// pods' state (unscheduled, a container waiting and why) and the events,
// or the API failure that kept them from being read.
func (wt *waiter) notStarted(ctx context.Context, pods []corev1.Pod, apiErr error) error {
	e := wt.e
	what := "its pod was not scheduled"
	if slices.ContainsFunc(pods, func(p corev1.Pod) bool { return p.Spec.NodeName != "" }) {
		what = "its pod did not start"
	}
	if apiErr != nil {
		what = "its pod could not be seen to start"
	}
	msg := fmt.Sprintf("%s within %s (--schedule-timeout); the job is deleted", what, e.ScheduleTimeout)
	if apiErr != nil {
		msg += fmt.Sprintf("; the API failed: %v", apiErr)
	}
	if s := podsWaiting(pods); s != "" {
		msg += "; " + s
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), reportTimeout)
	defer cancel()
	return errors.New(msg + "; " + e.events(rctx, wt.name))
}

// jobDone says whether the Job has ended, well or not.
func jobDone(job *batchv1.Job) bool {
	failed, _ := jobFailed(job)
	return failed || job.Status.Succeeded > 0 || condition(job, batchv1.JobComplete)
}

// jobStarted says whether the Job reports a pod ready (the aiperf container
// has no readiness probe: ready is running).
func jobStarted(job *batchv1.Job) bool {
	return job.Status.Ready != nil && *job.Status.Ready > 0
}

// jobFailed says whether the Job failed, and why.
func jobFailed(job *batchv1.Job) (bool, string) {
	for _, c := range job.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			return true, strings.TrimSpace(c.Reason + ": " + c.Message)
		}
	}
	return job.Status.Failed > 0, "its pod failed"
}

func condition(job *batchv1.Job, t batchv1.JobConditionType) bool {
	return slices.ContainsFunc(job.Status.Conditions, func(c batchv1.JobCondition) bool {
		return c.Type == t && c.Status == corev1.ConditionTrue
	})
}
