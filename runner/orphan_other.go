//go:build !linux

package runner

import "syscall"

// orphanSignal is a no-op where the kernel has no parent-death signal.
func orphanSignal() *syscall.SysProcAttr { return nil }
