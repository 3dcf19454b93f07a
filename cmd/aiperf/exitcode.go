package main

// Exit codes, documented in docs/exit-codes.md.
const (
	ExitOK          = 0   // success
	ExitFailure     = 1   // runtime failure (server unreachable, reset failed, every request failed, ...)
	ExitUsage       = 2   // invalid flag, config, script or combination; nothing was sent
	ExitSomeFailed  = 3   // a sweep finished but at least one trial failed
	ExitInterrupted = 130 // interrupted by Ctrl-C (SIGINT), SIGTERM or SIGHUP
	ExitQuit        = 131 // SIGQUIT (Ctrl-\): exited at once (128 + 3, the shell's code for it)
)
