package main

import (
	"fmt"
	"os"
	"time"

	"github.com/aiperf-go/aiperf/internal/bench"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/shard"
	"github.com/aiperf-go/aiperf/runner"
	"github.com/aiperf-go/aiperf/runner/kube"
)

// executable finds the aiperf binary that trial and worker subprocesses
// run: this one. The end-to-end tests point it at a build without the race
// detector, so that the children cost what they cost a user.
var executable = os.Executable

// ExecutorArgs choose where `aiperf sweep` runs its trials.
type ExecutorArgs struct {
	Executor        string `name:"executor" enum:"local,kubernetes" default:"local" group:"Executor" help:"Where trials run: local (a subprocess each) or kubernetes (a Job each, its result read back from the pod log) (default ${default})."`
	KubeArgs        `embed:""`
	Workers         int `name:"workers" default:"1" group:"Executor" placeholder:"N" help:"Send each trial's load from N worker processes of its child (profile --workers; --executor local) (default ${default})."`
	WorkerDeadlines `embed:""`
}

// WorkerDeadlines bound a sharded cell's waits on its workers (--workers;
// docs/workers.md): a worker that misses one is killed and named, the
// others are stopped, the cell fails (exit 1) with the records that came.
type WorkerDeadlines struct {
	WorkerSilenceTimeout   time.Duration `name:"worker-silence-timeout" default:"30s" group:"Executor" placeholder:"DURATION" help:"Fail the cell when a worker (--workers) sends nothing, not even its heartbeat (every tenth of this), for this long: stopped, hung or cut off (default ${default})."`
	WorkerHandshakeTimeout time.Duration `name:"worker-handshake-timeout" default:"5m" group:"Executor" placeholder:"DURATION" help:"Fail the cell when a worker is not prepared (tokenizer, dataset, clock) within this long of its start (default ${default})."`
	WorkerDrainTimeout     time.Duration `name:"worker-drain-timeout" group:"Executor" placeholder:"DURATION" help:"Fail the cell when a worker goes on with a phase this long after another worker finished it, without sending a record (default: the phase's grace period + 30s when it has a duration, else --request-timeout-seconds + 30s)."`
}

// check refuses deadlines that are not positive.
func (d WorkerDeadlines) check() error {
	switch {
	case d.WorkerSilenceTimeout <= 0:
		return fmt.Errorf("--worker-silence-timeout must be positive, got %s (nothing was sent)", d.WorkerSilenceTimeout)
	case d.WorkerHandshakeTimeout <= 0:
		return fmt.Errorf("--worker-handshake-timeout must be positive, got %s (nothing was sent)", d.WorkerHandshakeTimeout)
	case d.WorkerDrainTimeout < 0:
		return fmt.Errorf("--worker-drain-timeout must not be negative, got %s (nothing was sent)", d.WorkerDrainTimeout)
	}
	return nil
}

// deadlines are the coordinator's.
func (d WorkerDeadlines) deadlines() shard.Deadlines {
	return shard.Deadlines{Silence: d.WorkerSilenceTimeout, Handshake: d.WorkerHandshakeTimeout, Drain: d.WorkerDrainTimeout}
}

// args are the flags that pass d on to a trial child.
func (d WorkerDeadlines) args() []string {
	args := []string{"--worker-silence-timeout", d.WorkerSilenceTimeout.String(),
		"--worker-handshake-timeout", d.WorkerHandshakeTimeout.String()}
	if d.WorkerDrainTimeout > 0 {
		args = append(args, "--worker-drain-timeout", d.WorkerDrainTimeout.String())
	}
	return args
}

// KubeArgs say how Jobs are made with --executor kubernetes: a sweep's
// trials, a sharded cell's workers.
type KubeArgs struct {
	Namespace       string        `name:"namespace" group:"Executor" placeholder:"NS" help:"Namespace of the Jobs (default: the kubeconfig context's, or the pod's own in-cluster)."`
	Image           string        `name:"image" group:"Executor" placeholder:"IMAGE" help:"The aiperf image the Jobs run (--executor kubernetes)."`
	Kubeconfig      string        `name:"kubeconfig" group:"Executor" placeholder:"FILE" help:"Kubeconfig file (default: the in-cluster configuration, then $KUBECONFIG or ~/.kube/config)."`
	CPU             string        `name:"cpu" group:"Executor" placeholder:"QUANTITY" help:"CPU request of each pod (e.g. 4, 500m)."`
	Memory          string        `name:"memory" group:"Executor" placeholder:"QUANTITY" help:"Memory request of each pod (e.g. 2Gi)."`
	ScheduleTimeout time.Duration `name:"schedule-timeout" default:"5m" group:"Executor" placeholder:"DURATION" help:"Fail a Job whose pod has not started (not scheduled, or its image not pulled; a worker: has not connected) within this long, with the pod's events (default ${default})."`
}

// checkLocal refuses the kubernetes flags when nothing runs there.
func (a KubeArgs) checkLocal() error {
	for flag, v := range map[string]string{"--namespace": a.Namespace, "--image": a.Image, "--kubeconfig": a.Kubeconfig,
		"--cpu": a.CPU, "--memory": a.Memory} {
		if v != "" {
			return fmt.Errorf("%s is for --executor kubernetes; this runs locally (nothing was sent)", flag)
		}
	}
	return nil
}

// kubeExecutor connects to the cluster and makes the executor the flags
// describe.
func (a KubeArgs) kubeExecutor() (*kube.Executor, error) {
	cluster, err := connectKube(a.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("--executor kubernetes: %w (nothing was sent)", err)
	}
	if a.Namespace != "" {
		cluster.Namespace = a.Namespace
	}
	e, err := kube.New(cluster, kube.Config{Image: a.Image, CPU: a.CPU, Memory: a.Memory, ScheduleTimeout: a.ScheduleTimeout})
	if err != nil {
		return nil, fmt.Errorf("--executor kubernetes: %w (nothing was sent)", err)
	}
	return e, nil
}

// checkWorkers refuses --workers that cannot be honoured, before anything
// is sent or allocated: fewer than one, more than shard.MaxWorkers, or more
// than a phase can share out (its concurrency, request count, ...).
func checkWorkers(workers int, profiles ...plan.Profile) error {
	if err := shard.CheckCount(workers); err != nil {
		return fmt.Errorf("%w (nothing was sent)", err)
	}
	if workers == 1 {
		return nil
	}
	for _, p := range profiles {
		if err := bench.CheckWorkers(p, workers); err != nil {
			return fmt.Errorf("%w (nothing was sent)", err)
		}
	}
	return nil
}

// connectKube finds the cluster (tests replace it with a fake one).
var connectKube = kube.Connect

// executor returns the executor the flags ask for (nil: the local one),
// every cell of sweeps checked for it, before anything is sent.
func (a ExecutorArgs) executor(sweeps []plan.Sweep) (runner.Executor, error) {
	var profiles []plan.Profile
	for _, sw := range sweeps {
		for _, c := range sw.Cells {
			profiles = append(profiles, c.Profile)
		}
	}
	if a.Workers > 1 && a.Executor == "kubernetes" {
		return nil, usageErr(fmt.Errorf("sweep --workers %d with --executor kubernetes is not supported: a trial pod's "+
			"workers would be pods of their own; shard one cell across worker pods with aiperf profile --workers N "+
			"--executor kubernetes (nothing was sent)", a.Workers))
	}
	if err := checkWorkers(a.Workers, profiles...); err != nil {
		return nil, usageErr(err)
	}
	if err := a.WorkerDeadlines.check(); err != nil {
		return nil, usageErr(err)
	}
	if a.Executor != "kubernetes" {
		if err := a.checkLocal(); err != nil {
			return nil, usageErr(err)
		}
		if a.Workers > 1 {
			self, err := executable()
			if err != nil {
				return nil, fmt.Errorf("find the aiperf executable for trial subprocesses: %w", err)
			}
			return runner.Local{Binary: self, Workers: a.Workers, WorkerArgs: a.WorkerDeadlines.args()}, nil
		}
		return nil, nil
	}
	for _, sw := range sweeps {
		for _, c := range sw.Cells {
			if _, _, err := runner.RemoteSpec(runner.Spec{Profile: c.Profile, Info: result.TrialInfo{CellLabel: c.Label}}); err != nil {
				return nil, usageErr(fmt.Errorf("sweep %q %w (nothing was sent)", sw.Name, err))
			}
		}
	}
	e, err := a.kubeExecutor()
	if err != nil {
		return nil, usageErr(err)
	}
	return e, nil
}
