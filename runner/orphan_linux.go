package runner

import "syscall"

// orphanSignal makes the kernel send the trial child SIGINT if the parent
// dies without interrupting it (killed with SIGKILL, say): the child then
// stops its profiler and exits instead of running on unattended.
func orphanSignal() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGINT}
}
