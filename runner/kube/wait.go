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

// wait watches the Job until it succeeds or fails, checking it every Poll
// as well (a watch may miss events or close). A Job whose pod is not
// scheduled within ScheduleTimeout fails, with the pod's events.
func (e *Executor) wait(ctx context.Context, name string) (*batchv1.Job, error) {
	jobs := e.Client.BatchV1().Jobs(e.Namespace)
	var w watch.Interface
	defer func() {
		if w != nil {
			w.Stop()
		}
	}()
	watchJob := func() <-chan watch.Event {
		if w != nil {
			w.Stop()
		}
		var err error
		if w, err = jobs.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name}); err != nil {
			w = nil
			return nil // the polling goes on; the next tick watches again
		}
		return w.ResultChan()
	}
	events := watchJob()
	tick := time.NewTicker(e.Poll)
	defer tick.Stop()
	deadline := time.Now().Add(e.ScheduleTimeout)
	scheduled := false
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("cancelled, the job is deleted: %w", ctx.Err())
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if job, isJob := ev.Object.(*batchv1.Job); isJob && job.Name == name && jobDone(job) {
				return job, nil
			}
		case <-tick.C:
			if events == nil {
				events = watchJob()
			}
			job, err := jobs.Get(ctx, name, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				return nil, errors.New("the job was deleted by someone else while it ran")
			case err == nil && jobDone(job):
				return job, nil
			}
			if !scheduled {
				if scheduled = e.scheduled(ctx, name); !scheduled && time.Now().After(deadline) {
					return nil, fmt.Errorf("its pod was not scheduled within %s (--schedule-timeout); the job is deleted; %s",
						e.ScheduleTimeout, e.events(ctx, name))
				}
			}
		}
	}
}

// jobDone says whether the Job has ended, well or not.
func jobDone(job *batchv1.Job) bool {
	failed, _ := jobFailed(job)
	return failed || job.Status.Succeeded > 0 || condition(job, batchv1.JobComplete)
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

// scheduled says whether a pod of the Job is bound to a node.
func (e *Executor) scheduled(ctx context.Context, job string) bool {
	pods, err := e.pods(ctx, job)
	if err != nil {
		return false
	}
	for _, p := range pods {
		if p.Spec.NodeName != "" || p.Status.Phase == corev1.PodRunning || p.Status.Phase == corev1.PodSucceeded ||
			p.Status.Phase == corev1.PodFailed {
			return true
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue {
				return true
			}
		}
	}
	return false
}

// events says what the cluster reported about the Job's pods (or the Job,
// when it has none): the scheduler's reasons, an image that cannot be
// pulled, a quota.
func (e *Executor) events(ctx context.Context, job string) string {
	names := []string{job}
	if pods, err := e.pods(ctx, job); err == nil {
		for _, p := range pods {
			names = append(names, p.Name)
		}
	}
	var msgs []string
	for _, name := range names {
		l, err := e.Client.CoreV1().Events(e.Namespace).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
		if err != nil {
			return "its events could not be read: " + err.Error()
		}
		for _, ev := range l.Items {
			if ev.InvolvedObject.Name != name { // a client that ignores the field selector
				continue
			}
			m := fmt.Sprintf("%s %s: %s", ev.InvolvedObject.Name, ev.Reason, strings.TrimSpace(ev.Message))
			if !slices.Contains(msgs, m) {
				msgs = append(msgs, m)
			}
		}
	}
	if len(msgs) == 0 {
		return "no events were reported about it or its pod"
	}
	return "events: " + strings.Join(msgs, "; ")
}
