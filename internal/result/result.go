// Package result defines Run, the complete outcome of one benchmark cell run:
// redacted configuration, per-request records, summaries, control-hook calls
// and the client's self-audit. bench produces it, report renders and exports
// it, store saves it, and a sweep child hands it to its parent as JSON.
package result

import (
	"fmt"
	"strings"
	"time"

	"github.com/aiperf-go/aiperf/hooks"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/servermetrics"
)

// Run statuses.
const (
	StatusComplete    = "complete"
	StatusFailed      = "failed"
	StatusInterrupted = "interrupted"
	// StatusRunning is never stored: the store reads it for a run whose
	// row it holds as interrupted while its process is still writing it.
	StatusRunning = "running"
)

// Outcomes of the KV-cache reset check (Audit.KVReset).
const (
	ResetVerified     = "verified"     // no prompt was served from the prefix cache on its first request
	ResetNotCleared   = "not cleared"  // some were: the reset did not clear the cache
	ResetUnverifiable = "unverifiable" // neither the server's usage nor its counters could tell
)

// Evidence the KV-cache reset check used (Audit.KVResetEvidence).
const (
	EvidenceCachedTokens   = "cached_tokens"   // usage.prompt_tokens_details.cached_tokens of the first requests
	EvidenceServerCounters = "server_counters" // the scraped prefix-cache hit and query counters
)

// WarnCacheDropped begins the warning of a run whose server reported
// prompt-cache read counts that could not be true (above the prompt tokens,
// negative), dropped as if not reported (Audit.CacheDropped): the console
// then does not give AIPerf's hint that the server reports none.
const WarnCacheDropped = "the server's prompt-cache read count could not be true"

// Run is one benchmark cell run (a standalone profile or one sweep trial).
type Run struct {
	BenchmarkID string       `json:"benchmark_id"`
	ToolVersion string       `json:"tool_version"`
	Host        string       `json:"host"`
	Config      plan.Profile `json:"config"` // secrets redacted
	CLICommand  string       `json:"cli_command,omitempty"`
	Name        string       `json:"name,omitempty"` // --name, for compare
	Info        TrialInfo    `json:"run_info"`

	StartTime    time.Time `json:"start_time"`
	EndTime      time.Time `json:"end_time"`
	Status       string    `json:"status"`
	Error        string    `json:"error,omitempty"`
	WasCancelled bool      `json:"was_cancelled"`

	Profiling metrics.Summary  `json:"profiling"`
	Warmup    *metrics.Summary `json:"warmup,omitempty"`
	// Timeslices are the profiling metrics per --slice-duration window
	// (nil without it).
	Timeslices   []metrics.Slice      `json:"timeslices,omitempty"`
	ErrorSummary []metrics.ErrorCount `json:"error_summary"`
	// Phases are each named phase's own summary, warmups included, when the
	// profile names its phases (AIPerf's phase-scoped artifacts); nil
	// otherwise.
	Phases       []PhaseResult `json:"phases,omitempty"`
	ControlHooks []hooks.Call  `json:"control_hooks"`
	Audit        Audit         `json:"audit"`
	// Server is the server's own metrics and GPU telemetry, scraped during
	// the run and reduced per phase (nil when collection was off).
	Server *servermetrics.Result `json:"server_metrics,omitempty"`
	// Network is the network calibration (nil without --network-latency-*).
	Network *Network         `json:"network_latency,omitempty"`
	Records []metrics.Record `json:"records"`
	// Exports say where the run was streamed or logged beyond its files
	// (OpenTelemetry, MLflow, the live Prometheus endpoint).
	Exports []Export `json:"exports,omitempty"`
	// StoredProfiling is, for a run read back from the store that was never
	// summarised (its process ended before it finished: no end time), how
	// many profiling records the store holds of it.
	StoredProfiling int `json:"-"`
	// StreamedJSONL is the partial file the run wrote profile_export.jsonl
	// to while it went ("" for none); the exports rename it into place.
	StreamedJSONL string `json:"-"`
}

// PhaseResult is one named phase's own figures: its index among the run's
// phases (and among its profiling phases, -1 for a warmup), its name and
// kind, and the summary and error counts of its requests alone.
type PhaseResult struct {
	Index          int                  `json:"phase_index"`
	ProfilingIndex int                  `json:"profiling_index"`
	Name           string               `json:"phase_name"`
	Kind           string               `json:"phase_kind"`
	Summary        metrics.Summary      `json:"summary"`
	ErrorSummary   []metrics.ErrorCount `json:"error_summary"`
	// NeverBegan says the phase sent nothing because the run ended before
	// it began (its profiler start failed, an earlier phase failed, a
	// Ctrl-C): it has no figures, not zero ones.
	NeverBegan bool `json:"never_began,omitempty"`
}

// Export is one place a run was sent: Kind is otel, mlflow or prometheus;
// Target the collector, tracking server or listen address (credentials
// redacted); Ref the MLflow run id; Detail what was delivered, dropped or
// failed.
type Export struct {
	Kind   string `json:"kind"`
	Target string `json:"target"`
	Ref    string `json:"ref,omitempty"`
	Parent string `json:"parent,omitempty"` // the MLflow parent run (a sweep's)
	OK     bool   `json:"ok"`
	Detail string `json:"detail,omitempty"`
}

// TrialInfo places a run inside a sweep; empty for a standalone profile.
type TrialInfo struct {
	Sweep     string       `json:"sweep,omitempty"`
	SweepID   int64        `json:"sweep_id,omitempty"`
	CellID    string       `json:"cell_id,omitempty"`
	CellLabel string       `json:"cell_label,omitempty"`
	Params    []plan.Param `json:"params,omitempty"`
	Trial     int          `json:"trial,omitempty"` // from 1 (AIPerf's run_info.trial is this − 1)
	// SweepUUID is AIPerf's run_info.sweep_id: a random UUID shared by
	// every trial of one sweep or multi-run invocation.
	SweepUUID string `json:"sweep_uuid,omitempty"`
	Variation int    `json:"variation,omitempty"` // the cell's index in its sweep (AIPerf's variation_index)
}

// RunLabel is AIPerf's label of trial n (counted from 1): run_0001 for the
// first, and for a standalone run.
func RunLabel(n int) string { return fmt.Sprintf("run_%04d", max(n, 1)) }

// Health is what the client measured of itself over the profiling phases
// (package selfcheck): how long its goroutines waited to run, which delays
// every timestamp, and how busy it and its host were.
type Health struct {
	SchedLatencyP50Ms float64  `json:"sched_latency_p50_ms"`
	SchedLatencyP99Ms float64  `json:"sched_latency_p99_ms"`
	SchedLatencyMaxMs float64  `json:"sched_latency_max_ms"`
	ProcessCPUPct     float64  `json:"process_cpu_pct"` // of Cores
	Cores             int      `json:"cores"`           // GOMAXPROCS
	HostCPUPct        *float64 `json:"host_cpu_pct,omitempty"`
}

// Audit is the client's report on itself: did it deliver the load it was
// asked for, or was the client (not the server) the bottleneck?
type Audit struct {
	Mode       string  `json:"mode"`                  // "concurrency", "rate", "user_centric" or "fixed" (a replayed schedule)
	TargetRate float64 `json:"target_rate,omitempty"` // requests/s asked for (rate mode)
	// AchievedRate is the send rate: profiling requests started per second
	// between the first and the last send. It is not request_throughput,
	// which counts successful requests per second of benchmark duration
	// (first send to last response).
	AchievedRate float64 `json:"achieved_rate"`
	// ScheduledRate is the schedule's own rate (rate, user-centric and
	// fixed modes): its profiling sends per second between the first and
	// the last scheduled send. A random schedule of a few requests is
	// off its target by chance; the send rate is judged against this.
	ScheduledRate float64        `json:"scheduled_rate,omitempty"`
	SendLagMs     *metrics.Stats `json:"send_lag_ms,omitempty"` // sent − scheduled
	// Health is the client process's own account of the profiling phases;
	// nil when it was not measured.
	Health     *Health `json:"client_health,omitempty"`
	CapDelayed int     `json:"cap_delayed,omitempty"` // sends that waited for the in-flight cap
	CapSkipped int     `json:"cap_skipped,omitempty"` // rate sends dropped at a full in-flight cap (AIPerf's policy)
	// Branches counts a DAG run's forks and spawns in the profiling phases
	// (nil: none started); the JSON export's top-level branch_stats.
	Branches       *metrics.BranchStats `json:"branches,omitempty"`
	Retried        int                  `json:"retried,omitempty"` // reused-connection retries
	PrecisePacing  bool                 `json:"precise_pacing,omitempty"`
	Cut            int                  `json:"cut,omitempty"`              // requests cut before they ended: cancelled, excluded (why: below)
	CutGracePeriod int                  `json:"cut_grace_period,omitempty"` // of them, still in flight when the grace period ended
	CutInterrupt   int                  `json:"cut_interrupt,omitempty"`    // of them, in flight when the run was interrupted
	CutOnPurpose   int                  `json:"cut_on_purpose,omitempty"`   // of them, aborted by --request-cancellation-rate
	// CutStopped: of them, in flight on a worker (--workers) stopped
	// because another worker or a control hook failed.
	CutStopped     int    `json:"cut_stopped,omitempty"`
	ClientErrors   int    `json:"client_errors,omitempty"`    // requests failed for the client host's own limits (file descriptors, ports)
	Bursts         int    `json:"bursts,omitempty"`           // streamed requests whose tokens all arrived in one read (ITL 0)
	NotStreamed    int    `json:"not_streamed,omitempty"`     // replies under --streaming that arrived as one whole body (metrics.Record.NotStreamed)
	Malformed      int    `json:"malformed_chunks,omitempty"` // stream lines that were not response chunks, skipped
	UsageUntrusted int    `json:"usage_untrusted,omitempty"`  // requests whose server usage was implausible: client counts used
	ClientBound    bool   `json:"client_bound"`               // the client could not keep up
	KVReset        string `json:"kv_reset,omitempty"`         // ResetVerified, ResetNotCleared or ResetUnverifiable; "" without a reset
	KVResetDetail  string `json:"kv_reset_detail,omitempty"`  // what the check saw
	// KVResetEvidence is what the verdict rests on: EvidenceCachedTokens,
	// EvidenceServerCounters, both, or none (unverifiable).
	KVResetEvidence []string `json:"kv_reset_evidence,omitempty"`
	// ServerResetEvidence is what the server's own prefix-cache counters
	// said after the reset, per endpoint ("cold: ...", "warm: ..."); empty
	// when it exposes none.
	ServerResetEvidence []string `json:"server_reset_evidence,omitempty"`
	Warnings            []string `json:"warnings,omitempty"`
	// TokensCountedWith names the tokenizer that counted ISL and OSL (and
	// the chat template, with --apply-chat-template).
	TokensCountedWith string `json:"tokens_counted_with,omitempty"`
	// Workers are the worker processes of a sharded cell (--workers), in
	// order; empty when the load came from this process.
	Workers []Worker `json:"workers,omitempty"`
	// RxCoalesceUsecs is the receive coalescing window the client read
	// with (--rx-coalesce-usecs, or its default for the client's cores);
	// 0: off.
	RxCoalesceUsecs int `json:"rx_coalesce_usecs,omitempty"`
	// VideoUntrusted counts the video jobs whose reported figures were
	// implausible and left out; VideoUntrustedFirst is the first's reason.
	VideoUntrusted      int    `json:"video_untrusted,omitempty"`
	VideoUntrustedFirst string `json:"video_untrusted_first,omitempty"`
	// CacheDropped counts the successful requests whose prompt-cache read
	// count could not be true and was dropped (metrics.Usage.CacheDropped);
	// CacheDroppedFirst is the first's reason. A warning beginning with
	// WarnCacheDropped words them.
	CacheDropped      int    `json:"cache_dropped,omitempty"`
	CacheDroppedFirst string `json:"cache_dropped_first,omitempty"`
}

// CutWhy says why the Cut requests were cut, by cause ("2 still in flight
// at the end of the grace period, 1 in flight when the run was
// interrupted"): a grace period is named only when one ended with requests
// in flight.
func (a *Audit) CutWhy() string {
	var parts []string
	add := func(n int, why string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, why))
		}
	}
	add(a.CutGracePeriod, "still in flight at the end of the grace period")
	add(a.CutInterrupt, "in flight when the run was interrupted")
	add(a.CutOnPurpose, "cancelled on purpose (--request-cancellation-rate)")
	add(a.CutStopped, "in flight on a worker stopped because another worker or a control hook failed")
	add(a.Cut-a.CutGracePeriod-a.CutInterrupt-a.CutOnPurpose-a.CutStopped, "cut for a reason not recorded")
	return strings.Join(parts, ", ")
}

// Worker is one worker process of a sharded cell: its clock as the
// coordinator measured it (its records were moved onto the coordinator's
// clock with it) and its own audit.
type Worker struct {
	Name          string   `json:"name"`
	ClockOffsetNs int64    `json:"clock_offset_ns"` // its wall clock minus the coordinator's
	ClockRTTNs    int64    `json:"clock_rtt_ns"`    // round trip of the ping the offset rests on
	Records       int      `json:"records"`         // records received from it
	ClientBound   bool     `json:"client_bound"`
	AchievedRate  float64  `json:"achieved_rate,omitempty"`
	Health        *Health  `json:"client_health,omitempty"`
	Warnings      []string `json:"warnings,omitempty"`
	Error         string   `json:"error,omitempty"`
}
