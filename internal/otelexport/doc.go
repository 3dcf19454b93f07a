// Package otelexport streams a run to an OpenTelemetry collector over
// OTLP/HTTP with the official Go SDK, as AIPerf's --otel-url does: the
// GenAI semantic conventions' client histograms (gen_ai.client.
// operation.duration, token.usage, operation.time_to_first_chunk and
// operation.time_per_output_chunk) with their gen_ai.* attributes and
// aiperf.* dimensions, and the aiperf.timing.* counters.
//
// It is off the request path: Record only puts the finished record on a
// bounded queue (dropping, and counting, what does not fit), a goroutine
// records it into the SDK's instruments, and the SDK's periodic reader
// exports them (cumulative, so a failed export loses nothing the next one
// does not carry). An unreachable collector is one warning, never a failed
// run; what was dropped or not delivered is in the Report.
package otelexport
