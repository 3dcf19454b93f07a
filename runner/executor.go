package runner

import (
	"context"

	"github.com/aiperf-go/aiperf/internal/result"
)

// Executor runs one trial, an `aiperf profile` process given spec, and returns
// its result: the same result.Run whatever runs the process, which the runner
// stores alike. The result is nil only when the trial produced none (crash,
// spawn failure); err says why. dir is the trial's local directory: the
// executor leaves the trial's log there (LogFile), and the Local executor its
// exports too.
//
// On ctx cancellation an executor stops its trial (the Local executor
// interrupts the child, which writes an interrupted result; the Kubernetes
// executor deletes the Job) and returns.
type Executor interface {
	Launch(ctx context.Context, spec Spec, dir string) (*result.Run, error)
}

// Local runs trials as subprocesses of this machine.
var _ Executor = Local{}
