package kube

import (
	"context"
	"fmt"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aiperf-go/aiperf/internal/termsafe"
)

// pods lists the pods of the Job.
func (e *Executor) pods(ctx context.Context, job string) ([]corev1.Pod, error) {
	l, err := e.Client.CoreV1().Pods(e.Namespace).List(ctx, metav1.ListOptions{LabelSelector: batchv1.JobNameLabel + "=" + job})
	if err != nil {
		return nil, fmt.Errorf("list the job's pods: %w", err)
	}
	return l.Items, nil
}

// latest is the pod created last (a Job that retried has several).
func latest(pods []corev1.Pod) corev1.Pod {
	pod := pods[0]
	for _, p := range pods[1:] {
		if p.CreationTimestamp.After(pod.CreationTimestamp.Time) {
			pod = p
		}
	}
	return pod
}

// podStarted says whether the pod's containers started: one is running or
// has ended, or the pod has. A pod bound to a node whose container waits
// (ImagePullBackOff, CreateContainerConfigError, ...) has not.
func podStarted(p corev1.Pod) bool {
	if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return true
	}
	if len(p.Status.ContainerStatuses) == 0 {
		return p.Status.Phase == corev1.PodRunning // a status without containers' detail
	}
	return slices.ContainsFunc(p.Status.ContainerStatuses, func(c corev1.ContainerStatus) bool {
		return c.State.Running != nil || c.State.Terminated != nil
	})
}

// podsWaiting says why the pods' containers wait, e.g. "pod p: container
// aiperf waiting: ImagePullBackOff: Back-off pulling image ..." ("" when
// none says).
func podsWaiting(pods []corev1.Pod) string {
	var msgs []string
	for _, p := range pods {
		for _, c := range slices.Concat(p.Status.InitContainerStatuses, p.Status.ContainerStatuses) {
			if w := c.State.Waiting; w != nil && w.Reason != "" {
				msgs = append(msgs, strings.TrimSuffix(fmt.Sprintf("pod %s: container %s waiting: %s: %s", p.Name, c.Name,
					w.Reason, clip(w.Message)), ": "))
			}
		}
	}
	return strings.Join(msgs, "; ")
}

// podFailure says how the Job's last pod ended, for a failed Job: evicted
// (and why), a container OOMKilled, its exit code or signal. It reads the
// pods within reportTimeout of ctx ("" when there is nothing to say).
func (e *Executor) podFailure(ctx context.Context, job string) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), reportTimeout)
	defer cancel()
	pods, err := e.pods(ctx, job)
	if err != nil {
		return "; its pod could not be read: " + err.Error()
	}
	if len(pods) == 0 {
		return ""
	}
	p := latest(pods)
	var msgs []string
	if p.Status.Reason != "" {
		msgs = append(msgs, strings.TrimSuffix(fmt.Sprintf("%s: %s", p.Status.Reason, clip(p.Status.Message)), ": "))
	}
	for _, c := range slices.Concat(p.Status.InitContainerStatuses, p.Status.ContainerStatuses) {
		if t := c.State.Terminated; t != nil && (t.ExitCode != 0 || t.Signal != 0 || t.Reason == "OOMKilled") {
			m := fmt.Sprintf("container %s terminated", c.Name)
			if t.Reason != "" {
				m += " (" + t.Reason + ")"
			}
			m += fmt.Sprintf(" with exit code %d", t.ExitCode)
			if t.Signal != 0 {
				m += fmt.Sprintf(", signal %d", t.Signal)
			}
			if t.Message != "" {
				m += ": " + clip(t.Message)
			}
			msgs = append(msgs, m)
		}
	}
	if len(msgs) == 0 {
		return ""
	}
	return fmt.Sprintf("; pod %s: %s", p.Name, strings.Join(msgs, "; "))
}

// events says what the cluster reported about the Job's pods (or the Job,
// when it has none): the scheduler's reasons, an image that cannot be
// pulled, a quota; or why they could not be read.
func (e *Executor) events(ctx context.Context, job string) string {
	names := []string{job}
	pods, perr := e.pods(ctx, job)
	for _, p := range pods {
		names = append(names, p.Name)
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
			m := fmt.Sprintf("%s %s: %s", ev.InvolvedObject.Name, ev.Reason, clip(ev.Message))
			if !slices.Contains(msgs, m) && len(msgs) < maxEvents {
				msgs = append(msgs, m)
			}
		}
	}
	s := "no events were reported about it or its pod"
	if len(msgs) > 0 {
		s = "events: " + strings.Join(msgs, "; ")
	}
	if perr != nil {
		s += " (its pods' events are missing: " + perr.Error() + ")"
	}
	return s
}

// maxEvents and maxMessage bound what an error quotes of the cluster.
const (
	maxEvents  = 20
	maxMessage = 500
)

// clip trims a message the cluster sent, cuts it to maxMessage bytes and
// escapes what a terminal would act on.
func clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > maxMessage {
		s = strings.ToValidUTF8(s[:maxMessage], "") + "…"
	}
	return termsafe.Text(s)
}

// notJoined says why a worker's pod did not join in time: its containers'
// waiting reasons and its events, read within reportTimeout.
func (e *Executor) notJoined(ctx context.Context, job string) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), reportTimeout)
	defer cancel()
	pods, err := e.pods(ctx, job)
	if err != nil {
		return e.events(ctx, job)
	}
	if s := podsWaiting(pods); s != "" {
		return s + "; " + e.events(ctx, job)
	}
	return e.events(ctx, job)
}
