// Package hooks sends the control-plane POSTs that surround a benchmark cell:
// a KV/prefix-cache reset before any load, and server-profiler start/stop
// calls around profiling phases (AIPerf's endpoint.reset_kv_cache and
// endpoint.server_profiler).
//
// A Client owns its own HTTP transport, separate from the benchmark pool and
// blind to HTTP(S)_PROXY. Every POST has an empty body; any 2xx answer is a
// success once its body has arrived whole (within the timeout, at most
// 64 KiB). A route that cannot be sent as written is refused unsent. A
// llama.cpp server has no reset route: its reset lists the slots (GET /slots,
// at most 1,024) and erases each (POST /slots/{id}?action=erase). Reset
// retries transport errors and 409/423/429/503 with a doubling backoff inside
// a time budget, and the first origin that fails aborts it.
// Profiler start is all-or-nothing (a partial start, or one interrupted, is
// undone in reverse order on every origin that may have started); profiler
// stop tries every origin and reports failures together. A profiler can leave
// a Mark on disk while it may be running, so that a process outliving a dead
// one stops it (Client.StopMarked). Every POST is recorded as a Call for the
// exports; a failure's error quotes a short excerpt of the reply, and the
// values of secret headers are never recorded, logged or put into errors,
// even when a server echoes them back.
package hooks
