// Package load drives requests through phases on one monotonic clock.
//
// A Schedule is the pure rate model (absolute send offsets, constant or
// seeded Poisson); the Engine runs phases in order: concurrency mode keeps N
// requests in flight and sends the next the instant one ends, rate mode is
// open-loop with absolute send times from one start, gated by an optional
// in-flight cap (a send that finds it full is dropped, as AIPerf, or waits),
// and user-centric mode gives each user a fixed gap between its turns. Every request gets a Credit with its scheduled time; what the
// Sender returns is the record. Lateness is recorded, never hidden: late sends
// fire at once and keep their original scheduled time. A wait that is not
// the client's moves the schedule instead: a session's later turn whose
// time passed while it waited for the previous reply is scheduled at that
// reply's end (counted in PhaseReport.ReplyGated), so that the send lag
// measures the client only. A phase with a duration
// issues nothing after start + duration (a backlog held up by the cap is
// dropped, not flushed), and cancels what is still in flight at start +
// duration + grace period.
package load
