package main

import (
	"fmt"
	"os"
	"time"

	"github.com/aiperf-go/aiperf/internal/bench"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/runner"
	"github.com/aiperf-go/aiperf/runner/kube"
)

// ExecutorArgs choose where `aiperf sweep` runs its trials.
type ExecutorArgs struct {
	Executor        string        `name:"executor" enum:"local,kubernetes" default:"local" group:"Executor" help:"Where trials run: local (a subprocess each) or kubernetes (a Job each, its result read back from the pod log) (default ${default})."`
	Namespace       string        `name:"namespace" group:"Executor" placeholder:"NS" help:"Namespace of the trial Jobs (default: the kubeconfig context's, or the pod's own in-cluster)."`
	Image           string        `name:"image" group:"Executor" placeholder:"IMAGE" help:"The aiperf image the trial Jobs run (--executor kubernetes)."`
	Kubeconfig      string        `name:"kubeconfig" group:"Executor" placeholder:"FILE" help:"Kubeconfig file (default: the in-cluster configuration, then $KUBECONFIG or ~/.kube/config)."`
	CPU             string        `name:"cpu" group:"Executor" placeholder:"QUANTITY" help:"CPU request of each trial pod (e.g. 4, 500m)."`
	Memory          string        `name:"memory" group:"Executor" placeholder:"QUANTITY" help:"Memory request of each trial pod (e.g. 2Gi)."`
	ScheduleTimeout time.Duration `name:"schedule-timeout" default:"5m" group:"Executor" placeholder:"DURATION" help:"Fail a trial whose pod is not scheduled within this long, with the pod's events (default ${default})."`
	Workers         int           `name:"workers" default:"1" group:"Executor" placeholder:"N" help:"Send each trial's load from N worker processes of its child (profile --workers; --executor local) (default ${default})."`
}

// checkWorkers refuses --workers that cannot be honoured, before anything
// is sent: fewer than one, with a kubernetes executor (not there yet), or
// more than a phase's concurrency or request count.
func checkWorkers(workers int, executor string, profiles ...plan.Profile) error {
	if workers < 1 {
		return fmt.Errorf("--workers must be at least 1, got %d (nothing was sent)", workers)
	}
	if workers == 1 {
		return nil
	}
	if executor == "kubernetes" {
		return fmt.Errorf("--workers %d with --executor kubernetes is not supported yet: shard a cell across local "+
			"worker processes with --executor local (nothing was sent)", workers)
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
	if err := checkWorkers(a.Workers, a.Executor, profiles...); err != nil {
		return nil, usageErr(err)
	}
	if a.Executor != "kubernetes" {
		for flag, v := range map[string]string{"--namespace": a.Namespace, "--image": a.Image, "--kubeconfig": a.Kubeconfig,
			"--cpu": a.CPU, "--memory": a.Memory} {
			if v != "" {
				return nil, usageErr(fmt.Errorf("%s is for --executor kubernetes; trials run locally (nothing was sent)", flag))
			}
		}
		if a.Workers > 1 {
			self, err := os.Executable()
			if err != nil {
				return nil, fmt.Errorf("find the aiperf executable for trial subprocesses: %w", err)
			}
			return runner.Local{Binary: self, Workers: a.Workers}, nil
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
	cluster, err := connectKube(a.Kubeconfig)
	if err != nil {
		return nil, usageErr(fmt.Errorf("--executor kubernetes: %w (nothing was sent)", err))
	}
	if a.Namespace != "" {
		cluster.Namespace = a.Namespace
	}
	e, err := kube.New(cluster, kube.Config{Image: a.Image, CPU: a.CPU, Memory: a.Memory, ScheduleTimeout: a.ScheduleTimeout})
	if err != nil {
		return nil, usageErr(fmt.Errorf("--executor kubernetes: %w (nothing was sent)", err))
	}
	return e, nil
}
