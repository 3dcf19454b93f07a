// Package shard runs one cell's load from several worker processes: the
// control channel between the coordinator (the process that owns the cell)
// and its workers, and the exact split of a cell's load among them.
//
// The channel is newline-delimited JSON messages over an io.Reader and an
// io.Writer on each side (Conn), whatever carries them: a local worker's
// stdin and stdout, or a TCP connection a worker pod dialled and joined
// with the cell's token (Listen, Dial). A worker process writes
// nothing else on its channel (its log goes elsewhere); a pipe is reliable
// and ordered, so messages need no checksum, and each record travels as its
// own line as soon as the worker finished it, so a worker that dies leaves
// the coordinator every record it finished before.
//
// The protocol, per worker:
//
//	coordinator → worker   spec     the worker's share of the cell (Spec)
//	worker → coordinator   beat     every Spec.HeartbeatNs from then on, whatever else it does
//	worker → coordinator   hello    the worker prepared (tokenizer, dataset), with its clock's start
//	coordinator → worker   ping     ×pings, each answered by a pong with the worker's wall time
//	coordinator → worker   clock    the worker's offset (NTP-style estimate, the min-RTT ping)
//	then for each phase:
//	worker → coordinator   ready    the worker is about to send the phase
//	coordinator → worker   start    once every worker is ready: a common instant, in the coordinator's wall time
//	worker → coordinator   rec      every finished record, while the load goes
//	worker → coordinator   drained  every request of the phase returned
//	and at the end:
//	worker → coordinator   done     the worker's phase reports, audit and stalls
//
// At any time the coordinator may send halt (stop issuing, let the requests
// in flight finish: the failed-request threshold) or stop (Ctrl-C, or
// another worker failed: cut everything; the message says why when it is
// not an interrupt, and the records its stop cut are marked with that
// cause, CutWorkerFailed, instead of an interrupt's); a worker whose
// channel closes stops. The coordinator alone
// calls control hooks: between every worker's ready and the start it
// broadcasts, and after every worker drained (Coordinator.Hooks), so the
// server's profiler brackets the profiling phase once; workers never do.
//
// Records are stamped on each worker's monotonic clock; the coordinator
// moves them onto its own timebase with the worker's clock start and
// offset, and numbers them so that indexes and sessions stay unique.
//
// A worker is not trusted. A line is at most MaxMessage bytes; each record
// is range-checked once on the coordinator's timebase (check.go), and
// tallied per worker and phase: a duplicate, a request beyond the worker's
// share, or a done report that does not account for what arrived is
// refused (tally.go); a worker that breaks the protocol, sends an
// impossible record or an impossible account is killed, named in the
// cell's error, and nothing more of it is taken. Nor is a worker
// waited on for ever (Deadlines): one silent past the silence deadline
// (not even a beat), not prepared within the handshake deadline, or going
// on with a phase another worker drained past the drain deadline is
// killed and named the same way, and the others are told to stop; workers
// told to stop that have not ended a grace period later are killed.
package shard
