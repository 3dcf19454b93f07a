// Package metrics turns measured requests (Record) into AIPerf's metrics: the
// per-request values (RecordMetrics), their distributions (Compute, with
// numpy's linear-interpolated percentiles and population std) and the run
// summary (Summarize, Errors). Everything here is a pure function over
// records; rendering and exporting live in package report.
package metrics
