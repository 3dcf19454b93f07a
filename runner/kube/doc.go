// Package kube is the kubernetes executor of the sweep runner: each trial runs
// as a batch/v1 Job of the aiperf image (restartPolicy Never, backoffLimit 0),
// labelled with its sweep, cell and trial, with the trial's spec in a
// ConfigMap and the API key, if any, in a Secret the container reads through
// a secretKeyRef, never in plain env. The child prints its result as a
// checksummed frame (runner.WriteFrame) and the parent reads it back from the
// pod's log through the API, so the parent needs nothing but credentials and
// stores the result as it stores a local trial's. The Job, its ConfigMap and
// its Secret are deleted when the trial ends, is cancelled, or its pod is
// not scheduled in time.
package kube
