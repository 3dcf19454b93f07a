// Package swimlane draws `aiperf analyze swim-lane`, AIPerf's per-session
// view of a finished run: one horizontal lane per session slot, each
// request a bar from its start to its end, with the client's concurrency
// curve underneath.
//
// Load reads a run directory: profile_export.jsonl (a request per line, in
// AIPerf's shape; cancelled and untimed records left out, as AIPerf's
// loader does) and, when present, profile_export_aiperf.json for the
// concurrency ramp and the benchmark duration. NewLayout groups the
// requests into sessions (x_correlation_id, else conversation_id), nests a
// subagent session under its root's lane (root_correlation_id, else the
// parent_correlation_id chain), stacks a session's overlapping requests
// into rows of their own, and packs the lanes greedily into slots, a slot
// reused once its session has ended, as AIPerf's swim_lane.py does.
// Concurrency is the exact in-flight count, a sweep over the sorted starts
// and ends (ends first at a tie, as AIPerf's sweep line).
//
// A View puts it together for drawing: the PNG (or SVG) through
// gonum.org/v1/plot, and a self-contained interactive HTML viewer. A view
// draws at most MaxRows rows (the slots that started first); the
// concurrency curves always count every request, and the drawing merges
// what falls within a pixel, so a run of millions of requests draws in
// seconds.
package swimlane
