// Package dashboard is `--ui dashboard` (AIPerf's name): a live terminal
// view of a run drawn with Bubble Tea — phase and progress, requests in
// flight, achieved against target rate, TTFT and ITL percentiles, errors
// by type.
//
// It only reads: the load engine's progress counters (the atomics the
// simple progress line reads too) and the finished records the bench's
// finisher hands it, which it queues under its own lock and folds into
// streaming estimates on its own goroutine, a few times a second. Nothing
// on the path of a request waits for it. When stdout or stderr is not a
// terminal it is not used (Usable) and the simple progress line is shown
// instead.
package dashboard
