// Package kube is the kubernetes executor of the sweep runner: each trial runs
// as a batch/v1 Job of the aiperf image (restartPolicy Never, backoffLimit 0),
// labelled with its sweep, cell and trial, with the trial's spec in a
// ConfigMap and the API key, if any, in a Secret the container reads through
// a secretKeyRef, never in plain env. The child prints its exports and its
// result as checksummed frames (runner.WriteExports, runner.WriteFrame) and
// the parent reads them back from the pod's log through the API, so the
// parent needs nothing but credentials, leaves the trial's directory as a
// local trial does and stores the result as it stores a local trial's. The Job, its ConfigMap and
// its Secret are deleted when the trial ends, is cancelled, or its pod does
// not start in time.
//
// Workers runs a sharded cell's workers (profile --workers N --executor
// kubernetes) as Jobs made the same way, whose pods dial the coordinator
// back over TCP and join with the cell's token, read from their Secret.
package kube
