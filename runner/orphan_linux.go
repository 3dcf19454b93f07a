package runner

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// orphanSignal makes the kernel send the trial child SIGINT if the parent
// dies without interrupting it (killed with SIGKILL, say): the child then
// stops its profiler and exits instead of running on unattended. A child a
// parent interrupted before it died exits at once (ExitWithParent).
func orphanSignal() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGINT}
}

// runsTrial reports whether process pid is alive and is the trial child
// that read its spec from dir (a pid reused by another process is not).
func runsTrial(pid int, dir string) bool {
	if err := syscall.Kill(pid, 0); err != nil && err != syscall.EPERM {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false // gone in between (or no /proc: not known to run)
	}
	args := strings.Split(string(b), "\x00")
	i := slices.Index(args, "--spec-file")
	if i < 0 || i+1 >= len(args) {
		return false
	}
	spec := args[i+1]
	if !filepath.IsAbs(spec) {
		cwd, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/cwd")
		if err != nil {
			return false
		}
		spec = filepath.Join(cwd, spec)
	}
	// The same directory, not the same name: a working directory reached
	// through a symlink names it otherwise than /proc's cwd does (and the
	// spec file itself is gone once the child read it).
	running, err1 := os.Stat(filepath.Dir(spec))
	ours, err2 := os.Stat(dir)
	return filepath.Base(spec) == SpecFile && err1 == nil && err2 == nil && os.SameFile(running, ours)
}

// closeOnExec keeps fd from the processes the child starts.
func closeOnExec(fd int) { syscall.CloseOnExec(fd) }
