// Package compare computes and renders what `aiperf compare` shows, from runs
// loaded out of the store: groups of runs side by side with deltas against
// the first (the baseline) and a verdict per metric (Welch's t-test, and two
// one-sided tests against a practical-effect threshold: judge.go,
// threshold.go), a sweep as a row per cell with confidence intervals,
// Pareto-optimal cells and the best cell per metric, and two sweeps matched
// cell by cell. Statistics are the client's (time_to_first_token.p99) or the
// server's own, scraped during the run (server.vllm:kv_cache_usage_perc.max,
// or an alias such as server.ttft.p50; see serverkey.go), judged alike.
//
// The functions here are pure (store rows in, a report out); the command
// fetches the rows. Reports render as a table (olekukonko/tablewriter),
// markdown, CSV or JSON.
package compare
