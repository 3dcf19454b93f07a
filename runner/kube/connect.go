package kube

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// LogReader opens the log of the aiperf container of a pod.
type LogReader func(ctx context.Context, namespace, pod string) (io.ReadCloser, error)

// Cluster is where the executor runs Jobs.
type Cluster struct {
	Client    kubernetes.Interface
	Namespace string    // the kubeconfig context's, or the pod's own in-cluster
	Logs      LogReader // nil: the pod log through the API
}

// serviceAccountNamespace is where a pod finds its own namespace.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// Connect finds the cluster: the kubeconfig file given, else the in-cluster
// configuration when running in a pod, else $KUBECONFIG or ~/.kube/config.
func Connect(kubeconfig string) (Cluster, error) {
	if kubeconfig == "" {
		if cfg, err := rest.InClusterConfig(); err == nil {
			ns := "default"
			if b, err := os.ReadFile(serviceAccountNamespace); err == nil && strings.TrimSpace(string(b)) != "" {
				ns = strings.TrimSpace(string(b))
			}
			return newCluster(cfg, ns, "in-cluster configuration")
		}
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return Cluster{}, fmt.Errorf("load kubeconfig (--kubeconfig, $KUBECONFIG or ~/.kube/config; in a pod, its service account): %w", err)
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return Cluster{}, fmt.Errorf("read the kubeconfig's namespace: %w", err)
	}
	return newCluster(cfg, ns, "kubeconfig")
}

func newCluster(cfg *rest.Config, ns, from string) (Cluster, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return Cluster{}, fmt.Errorf("connect to kubernetes with the %s: %w", from, err)
	}
	return Cluster{Client: cs, Namespace: ns}, nil
}

// podLog opens the log of pod's aiperf container.
func (c Cluster) podLog(ctx context.Context, pod string) (io.ReadCloser, error) {
	if c.Logs != nil {
		return c.Logs(ctx, c.Namespace, pod)
	}
	return c.Client.CoreV1().Pods(c.Namespace).GetLogs(pod, &corev1.PodLogOptions{Container: container}).Stream(ctx)
}
