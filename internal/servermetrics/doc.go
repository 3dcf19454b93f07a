// Package servermetrics collects the inference server's own account of a
// run: it scrapes Prometheus endpoints (the server's /metrics, a DCGM
// exporter's GPU telemetry) while the load runs, with one scrape right
// before and right after each profiling phase, and reduces every series
// per phase: gauges to statistics over time, counters to their delta and
// rate, histograms to the delta of their count and sum and quantiles
// estimated from the bucket deltas.
//
// # Collection
//
// Start scrapes every endpoint once (the baseline) and then each on its
// own goroutine every Interval (333 ms, AIPerf's default), with its own
// HTTP client: never the benchmark's connection pool, no proxy from the
// environment, a timeout per scrape and a bounded body. Scrapes of one
// endpoint never overlap, so its samples are in the order the server
// produced them. Mark scrapes every endpoint at once at a phase's
// boundaries, waiting at most MarkTimeout (a periodic scrape in flight
// included): the counters' deltas then cover exactly the phase. A scrape
// never delays a request and is not a request of the benchmark. An
// endpoint that answers 404, times out or returns what is not Prometheus
// text gives one warning; its scrapes go on.
//
// Bodies are parsed with the Prometheus project's expfmt text parser, in
// time linear in the body: the text format 0.0.4, and OpenMetrics 1.0 when
// the Content-Type says so, rewritten as text first (omText; the body as
// it is when that is refused, as AIPerf falls back to the text parser).
// Scrapes ask for the text format only. expfmt's own OpenMetrics parser
// costs more than linear in a line's length (minutes for a line with a
// 4 KiB label), and is not used. A parse ends with its scrape's context
// (its timeout, the collector's Stop). A body whose parsing takes more
// than a quarter of the interval (and 20 ms) is warned about once. A counter is named as AIPerf's Python parser names
// it, without the _total of its samples (AIPerfName), in both formats; the
// _created samples of OpenMetrics and Python clients are
// dropped, gauge histograms are ignored, and a histogram sample with a
// value that is not finite is dropped whole (as AIPerf does).
//
// # Memory
//
// A series keeps one float64 per retained scrape (a histogram: count, sum
// and one per bucket), aligned with its endpoint's scrapes (NaN where it
// was absent). An endpoint retains at most 4 Mi values (32 MiB), and
// between 64 and 4,096 scrapes; at the cap every other scrape is dropped
// except the marks' and the latest, so a long run keeps its shape at half
// the resolution each time, and its counters' totals exactly. A vLLM
// endpoint (about 50 families, 1,000 values a scrape) keeps 4,096 scrapes,
// 23 minutes at 333 ms, before thinning; an exporter of 10,000 gauges
// keeps 419.
//
// An endpoint keeps at most Options.MaxSeries series (DefaultMaxSeries,
// 20,000; --server-metrics-max-series), counted as Prometheus counts them
// (a histogram's bucket, sum and count are three): capSeries cuts a larger
// body before the parser sees the rest, never inside a histogram's or
// summary's lines, and a series first seen once the endpoint holds that
// many is dropped, so that labels that change every scrape cannot grow it.
// One warning says so as it happens and one at the end how much was
// dropped. An exporter of 10^6 series then costs a tenth of a second and
// tens of megabytes, not seconds and gigabytes, a scrape.
//
// # Reduction
//
// Each marked phase is a window [begin, end] on the run's clock, and so is
// the profiling span (Result.Span): the only profiling phase, or PhaseSpan
// from the first profiling phase's begin to the last one's end. Per series:
//
//   - gauge (and untyped): avg, min, max, std (n−1), p1 … p99 (numpy's
//     linear percentiles) over the samples taken in the window, marks
//     included, as AIPerf computes them (each sample counts once, however
//     long it held); and time_weighted_avg (StatTimeWeightedAvg), the
//     average over time from the begin mark to the end mark, each scrape
//     between them holding until the next and the first also from the
//     begin mark (the marks are the state before the first request and
//     after the last reply, at the window's edges, and hold for no time).
//     The console and compare show the latter as a gauge's avg; the
//     exports, in AIPerf's shape, the former;
//   - counter: total = its increase from the begin mark's scrape to the end
//     mark's (without a mark: the last scrape before the window, the last in
//     it), a fall being a reset from 0 as in Prometheus's increase(); a
//     series absent from the reference scrape starts from its last sample
//     before it (refused, impossible, when that is further before the
//     window than two intervals or a tenth of it), or from 0 when it had
//     none (first seen in the window); rate = total per second between
//     those scrapes;
//   - histogram: count, sum, avg and their rates from the same deltas, and
//     p*_estimate by linear interpolation inside the bucket that holds the
//     rank (Prometheus's histogram_quantile), with the bucket deltas;
//   - summary: count and sum deltas and the last scrape's quantiles (they
//     cover the server's lifetime, so AIPerf's exports leave summaries out).
//
// With Options.SliceDuration each series also gets AIPerf's time slices,
// and a counter the rate_avg, rate_min, rate_max and rate_std of its
// complete slices.
//
// # Exports
//
// WriteJSON, WriteCSV and WriteJSONL write AIPerf's server_metrics_export
// files; WriteGPUJSON, WriteGPUCSV and WriteGPUJSONL its GPU telemetry
// (the telemetry_data object and the CSV section of its profile export,
// and gpu_telemetry_export.jsonl). They name every family by AIPerfName,
// a counter without its _total, as AIPerf's exports do and as the store,
// compare and the console do (one name per counter; compare accepts both
// spellings, and the store reads the _total of older runs as this name).
// The time-series
// exports need the retained samples, which only the collecting process
// has (ErrNoSamples otherwise).
//
// Headline picks the console's Server and GPU rows from the known families
// (knownFamilies: vLLM, SGLang, TensorRT-LLM, Dynamo, llama.cpp, DCGM);
// ResetEvidence reads the prefix-cache counters from the PhaseReset mark,
// made right after a KV-cache reset.
package servermetrics
