// Package artifacts reads runs back from their artifact directories, the
// files AIPerf (or this tool, which writes the same ones) leaves behind:
// Find walks paths for run directories as `aiperf plot` discovers them (a
// directory with profile_export.jsonl and profile_export_aiperf.json, or a
// sweep cell's profile_export_aiperf_aggregate.json), and Load reads one:
// its requests from profile_export.jsonl, its statistics, model,
// concurrency and GPU count from profile_export_aiperf.json (or the
// aggregate's means and confidence intervals), the timeslice CSV, the GPU
// telemetry time series (gpu_telemetry_export.jsonl) and our control-hook
// calls.
//
// Every file is read in one pass with bounded lines, counts and sizes; a
// line that is not a record is skipped and counted (a run killed while it
// wrote leaves a torn last line), as AIPerf's loader does.
package artifacts
