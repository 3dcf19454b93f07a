//go:build !linux

package runner

import "syscall"

// orphanSignal is a no-op where the kernel has no parent-death signal.
func orphanSignal() *syscall.SysProcAttr { return nil }

// runsTrial is false where a process's command line cannot be read
// cheaply: a trial's process is not known to run.
func runsTrial(int, string) bool { return false }

// closeOnExec is a no-op here: the pipe only keeps its read end open longer.
func closeOnExec(int) {}
