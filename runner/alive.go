package runner

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
)

// PIDFile records, in a trial directory, the pid of the trial child the
// Local executor runs there: removed when it has ended, left behind by a
// parent that died first, so that the next run of the sweep knows whether
// that child still runs (TrialRunning).
const PIDFile = "trial.pid"

// TrialRunning returns the pid of the trial child an earlier run of the
// sweep left running in dir (its parent died first), if any: a resume must
// not start the trial again while it still writes there. Where a process's
// command line cannot be read (not Linux), none is known to run.
func TrialRunning(dir string) (pid int, running bool) {
	b, err := os.ReadFile(filepath.Join(dir, PIDFile))
	if err != nil {
		return 0, false
	}
	pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 || pid == os.Getpid() {
		return 0, false
	}
	return pid, runsTrial(pid, dir)
}

// ParentFDEnv names, in a local trial child's environment, the descriptor
// of the pipe its sweep parent holds open while it lives: the parent writes
// a byte on it before it interrupts the child, and the child reads EOF
// when the parent has died, however it died.
const ParentFDEnv = "AIPERF_SWEEP_PARENT_FD"

// ExitWithParent makes a trial child exit at once, calling exit, when its
// sweep parent dies after interrupting it: the parent exits at once on a
// second Ctrl-C (or a SIGTERM after the first), and the child would
// otherwise finish its clean stop unattended (a profiler stop that hangs,
// say) while a --resume may run the same trial in its directory. A parent
// that dies before interrupting it (killed outright) still leaves it its
// clean stop (the kernel interrupts it: orphanSignal). Without the pipe
// (ParentFDEnv: a Kubernetes trial, or not a trial) it does nothing. stop
// ends the watch.
func ExitWithParent(exit func()) (stop func()) {
	fd, err := strconv.Atoi(os.Getenv(ParentFDEnv))
	if err != nil || fd < 3 {
		return func() {}
	}
	os.Unsetenv(ParentFDEnv) // the child's own children (workers) have no such pipe
	closeOnExec(fd)
	f := os.NewFile(uintptr(fd), "sweep parent")
	var stopped atomic.Bool
	go func() {
		interrupted := false
		b := make([]byte, 1)
		for {
			if _, err := f.Read(b); err != nil {
				if errors.Is(err, io.EOF) && interrupted && !stopped.Load() {
					exit()
				}
				return
			}
			interrupted = true
		}
	}()
	return func() { stopped.Store(true) }
}
