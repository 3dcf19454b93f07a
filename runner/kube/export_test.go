package kube

import "time"

// SetLimits sets the executor's bounds that tests shrink: how long API
// calls may fail in a row once a pod started, how long a finished pod's log
// may take to read, the most of it read and the most of it kept.
func SetLimits(e *Executor, apiRetry, logWait time.Duration, logMax, logKeep int) {
	e.apiRetry, e.logWait, e.logMax, e.logKeep = apiRetry, logWait, logMax, logKeep
}
