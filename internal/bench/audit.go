package bench

import (
	"cmp"
	"fmt"
	"math"
	"time"

	"github.com/aiperf-go/aiperf/internal/endpoint"
	"github.com/aiperf-go/aiperf/internal/load"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/selfcheck"
)

// Client-bound thresholds. They are deliberately loose: a flag means the
// client, not the server, shaped the numbers.
const (
	shortfallLimit = 0.95                  // achieved/scheduled rate below this is a shortfall
	lagLimit       = 10 * time.Millisecond // p99 send lag (rate mode, cap not involved)
	stallLimit     = 20 * time.Millisecond // p99 wake-up lateness of an idle goroutine
	// A goroutine that waited schedFloor to run delays its timestamps by
	// that much: beyond the larger of schedFloor and schedShare of the
	// typical TTFT or ITL (whichever is smaller), the client's own delay
	// is a visible part of the numbers. Calibrated on the development VM
	// against the mock's own timing: 0.2-0.4 ms p99 at concurrency 16-64
	// with a 4 ms ITL, 15-50 ms at 256-512.
	schedFloor = 2 * time.Millisecond
	schedShare = 0.10
	cpuLimit   = 90.0 // % of the process's cores
)

// audit is the client's verdict on itself over the profiling phases, with
// the notes of what their records and reports say beside it: turns that
// waited for their reply, the replies' tallies (bursts, malformed chunks,
// untrusted usage or video figures) and the cap's skips and delays.
func audit(p plan.Profile, reports []load.PhaseReport, prof []metrics.Record, stallP99, stallMax time.Duration) result.Audit {
	return judgeClient(p, reports, prof, stallP99, stallMax, true)
}

// workerAudit is a worker's verdict on itself over its share of a sharded
// cell (--workers): only whether it kept up (each warning one that flags it
// client-bound). The notes audit adds are facts of the cell, which the
// coordinator states over the merged records and reports: from one
// worker's part they would be said twice, and filed under the worker that
// could not keep up when it fell behind.
func workerAudit(p plan.Profile, reports []load.PhaseReport, prof []metrics.Record, stallP99, stallMax time.Duration) result.Audit {
	return judgeClient(p, reports, prof, stallP99, stallMax, false)
}

// judgeClient is audit, with its notes only when notes is set.
func judgeClient(p plan.Profile, reports []load.PhaseReport, prof []metrics.Record, stallP99, stallMax time.Duration,
	notes bool) result.Audit {
	a := result.Audit{Mode: "concurrency", PrecisePacing: p.PrecisePacing, RxCoalesceUsecs: int(p.RxCoalesce().Microseconds())}
	firstSched, lastSched, gated := auditPhases(&a, reports)
	if len(prof) == 0 {
		return a
	}
	if gated > 0 && notes {
		a.Warnings = append(a.Warnings, gatedNote(gated, len(prof)))
	}
	if w := notSentNote(reports); w != "" && notes {
		a.Warnings = append(a.Warnings, w)
	}
	lags := make([]float64, len(prof))
	firstSent, lastSent := prof[0].SentNs, prof[0].SentNs
	for i := range prof {
		r := &prof[i]
		lags[i] = float64(r.SentNs-r.ScheduledNs) / 1e6
		firstSent, lastSent = min(firstSent, r.SentNs), max(lastSent, r.SentNs)
		if r.Retried {
			a.Retried++
		}
		tally(&a, r, p.Streaming)
	}
	a.Warnings = append(a.Warnings, tallyWarnings(&a, notes)...)
	s := metrics.Compute(lags)
	a.SendLagMs = &s
	n := float64(len(prof))
	if span := sendSpan(&a, lastSent-firstSent, lastSched-firstSched); n >= 2 && span > 0 {
		a.AchievedRate = (n - 1) / (float64(span) / 1e9)
	}

	if a.Mode == "concurrency" && a.SendLagMs.P99 > float64(lagLimit)/1e6 {
		// A slot freed and the next request left that much later: the
		// client's own work between the two took that long.
		a.ClientBound = true
		a.Warnings = append(a.Warnings, fmt.Sprintf(
			"send lag p99 %.2f ms exceeds %v: requests left that long after their slot freed; the client could not keep up",
			a.SendLagMs.P99, lagLimit))
	}
	if (a.Mode == "rate" || a.Mode == "user_centric" || a.Mode == "fixed") && n >= 2 && lastSched > firstSched {
		scheduleVerdicts(&a, p, len(prof), lastSent-firstSent, lastSched-firstSched, notes)
	}
	if a.ClientErrors > 0 {
		a.ClientBound = true
	}
	if stallP99 > stallLimit {
		a.ClientBound = true
		a.Warnings = append(a.Warnings, fmt.Sprintf(
			"the client process stalled: timer wake-up lateness p99 %.1f ms, max %.1f ms (CPU-starved or GC-bound); latencies include client delay",
			float64(stallP99)/1e6, float64(stallMax)/1e6))
	}
	return a
}

// sendSpan is the span the send rate is taken over (sentNs and schedNs the
// spans of the actual sends and of the schedule): first to last send, or
// the schedule's span when the cap skipped sends of it and that is longer,
// so that the sends that went out are measured against the whole schedule,
// not the window they happened to fill (4 sends in the first 70 ms of a
// 5 s schedule are 0.6 req/s, not 43).
func sendSpan(a *result.Audit, sentNs, schedNs int64) int64 {
	if a.CapSkipped > 0 {
		return max(sentNs, schedNs)
	}
	return sentNs
}

// auditPhases reads the profiling phases' reports into a: the load mode,
// the target rate, the cap's skips and delays; it returns the first and
// last scheduled send (-1 and 0 when none was) and how many turns waited
// for their previous reply past their time (load.PhaseReport.ReplyGated).
func auditPhases(a *result.Audit, reports []load.PhaseReport) (firstSched, lastSched int64, gated int) {
	firstSched = -1
	rates := map[float64]bool{}
	for _, r := range reports {
		if r.Phase.Kind != plan.KindProfiling || r.Sent == 0 {
			continue
		}
		if r.Phase.Fixed {
			a.Mode = "fixed"
		}
		if r.Phase.Rate > 0 {
			a.Mode = "rate"
			if r.Phase.Users > 0 {
				a.Mode = "user_centric"
			}
			rates[r.Phase.Rate] = true
			// One target only when every rate phase asks for the same
			// rate; phases at several rates are judged by their schedule.
			a.TargetRate = r.Phase.Rate
			if len(rates) > 1 {
				a.TargetRate = 0
			}
		}
		a.CapDelayed += r.CapDelayed
		a.CapSkipped += r.CapSkipped
		gated += r.ReplyGated
		if r.Branches != nil {
			a.Branches = cmp.Or(a.Branches, &metrics.BranchStats{})
			a.Branches.Add(*r.Branches)
		}
		if firstSched < 0 || r.FirstSchedNs < firstSched {
			firstSched = r.FirstSchedNs
		}
		lastSched = max(lastSched, r.LastSchedNs)
	}
	return firstSched, lastSched, gated
}

// gatedNote words the turns of a replayed trace that waited for their
// previous reply past their timestamp: the server set their pace, not the
// client. Each was scheduled at that reply's end, so the send lag and the
// schedule's rate the client is judged by are what the replies allowed.
func gatedNote(gated, sent int) string {
	return fmt.Sprintf("%d of %d sends were later turns that waited for their previous reply past their timestamp "+
		"(open-loop replay): the server's replies, not the client, paced them, so the trace's own rate was not "+
		"reached; each is scheduled at the end of the reply it waited for (send lag and the schedule's rate count from there)",
		gated, sent)
}

// notSentNote words the profiling requests that came due before their
// phase's duration ended but could not go out before that end
// (load.PhaseReport.NotSent): "" when there were none.
func notSentNote(reports []load.PhaseReport) string {
	n := 0
	for _, r := range reports {
		if r.Phase.Kind == plan.KindProfiling {
			n += r.NotSent
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d requests came due before the --benchmark-duration ended but were not sent: they could not "+
		"go out before its end (the client fell behind its schedule, or a cap held them back) "+
		"and, as in AIPerf, nothing is sent once the duration has ended: only the requests sent before it are profiled", n)
}

// scheduleVerdicts judges a scheduled load (rate, user-centric, fixed) of
// sent requests: whether the client kept its schedule (sentNs and schedNs
// the spans of the actual and the scheduled sends, skipped ones included),
// and, with notes, what the --concurrency cap skipped or delayed. The
// schedule's rate counts every send that came due, sent or skipped.
func scheduleVerdicts(a *result.Audit, p plan.Profile, sent int, sentNs, schedNs int64, notes bool) {
	scheduled := float64(sent+a.CapSkipped-1) / (float64(schedNs) / 1e9)
	a.ScheduledRate = scheduled
	// Behind by a share of the rate and by more than lagLimit in all: on
	// a schedule of a few ms, a millisecond late is not falling behind.
	behind := time.Duration(sentNs - schedNs)
	if a.CapDelayed == 0 && a.CapSkipped == 0 && a.AchievedRate < shortfallLimit*scheduled && behind > lagLimit {
		a.ClientBound = true
		a.Warnings = append(a.Warnings, fmt.Sprintf(
			"achieved %.1f req/s, %.0f%% below the schedule's %.1f req/s: the client fell behind",
			a.AchievedRate, 100*(1-a.AchievedRate/scheduled), scheduled))
	}
	if a.CapDelayed == 0 && a.SendLagMs.P99 > float64(lagLimit)/1e6 {
		// Precise pacing removes timer lateness (~1 ms), not lag of
		// this size: the client host could not keep up.
		a.ClientBound = true
		a.Warnings = append(a.Warnings, fmt.Sprintf(
			"send lag p99 %.2f ms exceeds %v: sends left later than scheduled; the client host could not keep up with this rate",
			a.SendLagMs.P99, lagLimit))
	}
	if notes {
		capNotes(a, p, sent, scheduled)
	}
}

// capNotes words what the --concurrency cap skipped or delayed of a
// scheduled load of sent requests, whose schedule ran at scheduled req/s.
func capNotes(a *result.Audit, p plan.Profile, sent int, scheduled float64) {
	// The rate the cap held back: the target of one --request-rate, else
	// (a fixed schedule, phases at several rates) the schedule's own.
	rate, target := fmt.Sprintf("%.1f req/s", a.TargetRate), fmt.Sprintf("the target %.1f req/s", a.TargetRate)
	if a.TargetRate == 0 {
		rate = fmt.Sprintf("the schedule's %.1f req/s", scheduled)
		target = rate
	}
	if a.CapSkipped > 0 {
		a.Warnings = append(a.Warnings, fmt.Sprintf(
			"%d of the schedule's %d sends were skipped because the --concurrency cap was full when they came due "+
				"(AIPerf's policy; --cap-policy delay waits for a slot instead): %d were sent, %.2f req/s over the "+
				"schedule's span, below %s",
			a.CapSkipped, sent+a.CapSkipped, sent, a.AchievedRate, target))
	}
	if a.CapDelayed > 0 {
		why := "the server did not keep up with " + rate + " at this cap"
		if p.ConcurrencyRampDuration != nil {
			why += ", or --concurrency-ramp-duration had not opened the slot yet"
		}
		a.Warnings = append(a.Warnings, fmt.Sprintf(
			"%d of %d sends waited for a free in-flight slot (--concurrency cap): %s; latency counts from the actual send",
			a.CapDelayed, sent, why))
	}
}

// tally counts what one profiling request says about the client and the
// server's replies.
func tally(a *result.Audit, r *metrics.Record, streaming bool) {
	a.Malformed += r.MalformedChunks
	switch {
	case r.Cancelled:
		a.Cut++
		switch r.CutBy {
		case metrics.CutGracePeriod:
			a.CutGracePeriod++
		case metrics.CutInterrupt:
			a.CutInterrupt++
		case metrics.CutOnPurpose:
			a.CutOnPurpose++
		case metrics.CutWorkerFailed, metrics.CutHookFailed:
			a.CutStopped++
		}
	case r.Error != nil:
		if r.Error.Type == endpoint.ErrTypeClient {
			a.ClientErrors++
		}
	default:
		if r.Usage != nil && !r.Usage.Trusted() {
			a.UsageUntrusted++
		}
		if r.Usage != nil && r.Usage.CacheDropped != "" {
			if a.CacheDropped++; a.CacheDroppedFirst == "" {
				a.CacheDroppedFirst = r.Usage.CacheDropped
			}
		}
		if r.Media != nil && r.Media.VideoUntrusted != "" {
			if a.VideoUntrusted++; a.VideoUntrustedFirst == "" {
				a.VideoUntrustedFirst = r.Media.VideoUntrusted
			}
		}
		switch {
		case r.NotStreamed:
			a.NotStreamed++
		case streaming && r.ResponseNs.Len() > 0 && r.ResponseNs.First() == r.ResponseNs.Last() &&
			metrics.OutputSequenceLength(r) >= 2:
			a.Bursts++
		}
	}
}

// tallyWarnings words the counts of tally: the requests the client's own
// limits failed (it could not keep up), and with notes what the replies
// said.
func tallyWarnings(a *result.Audit, notes bool) []string {
	var out []string
	if a.ClientErrors > 0 {
		out = append(out, fmt.Sprintf("%d requests failed for the client host's own limits (ClientError in the error summary): "+
			"the client, not the server, failed them", a.ClientErrors))
	}
	if !notes {
		return out
	}
	if a.NotStreamed > 0 {
		out = append(out, fmt.Sprintf("%d replies under --streaming were not streamed: each arrived as one JSON body, its "+
			"request's payload not asking for a stream (\"stream\": true missing from an inputs_json payload, or "+
			"--extra-inputs stream:false), so they have no TTFT, ITL or decode time, and --goodput counts none of them "+
			"good against an SLO on such a metric", a.NotStreamed))
	}
	if a.Bursts > 0 {
		out = append(out, fmt.Sprintf("%d streamed requests delivered all their tokens in one read (inter-token latency 0, "+
			"per-user throughput unbounded): the server or a proxy buffered the stream, so their ITL and per-user throughput "+
			"are not token timings", a.Bursts))
	}
	if a.Malformed > 0 {
		out = append(out, fmt.Sprintf("%d stream lines were not response chunks and were skipped (malformed_chunks in "+
			"profile_export.jsonl)", a.Malformed))
	}
	if a.VideoUntrusted > 0 {
		out = append(out, fmt.Sprintf("%d video jobs reported implausible figures (the first: %s): those figures are left "+
			"out of the video metrics", a.VideoUntrusted, a.VideoUntrustedFirst))
	}
	if a.UsageUntrusted > 0 {
		out = append(out, fmt.Sprintf("%d requests reported implausible token usage (usage_untrusted in "+
			"profile_export.jsonl): the client's token counts were used for them", a.UsageUntrusted))
	}
	if a.CacheDropped > 0 {
		out = append(out, fmt.Sprintf("%s on %d requests (the first: %s): dropped as if not reported (usage_cache_dropped "+
			"in profile_export.jsonl), the prompt-cache metrics leave those requests out", result.WarnCacheDropped,
			a.CacheDropped, a.CacheDroppedFirst))
	}
	return out
}

// judgeHealth records the client's self-check over the profiling phases on
// the audit and flags the run when the client's own scheduling delay is a
// visible share of what it measured, or when it used nearly all its cores.
func judgeHealth(a *result.Audit, h selfcheck.Report, sum metrics.Summary, streaming bool) {
	if math.IsNaN(h.SchedP99) {
		return
	}
	a.Health = &result.Health{SchedLatencyP50Ms: h.SchedP50, SchedLatencyP99Ms: h.SchedP99, SchedLatencyMaxMs: h.SchedMax,
		ProcessCPUPct: h.ProcessCPU, Cores: h.Cores}
	if !math.IsNaN(h.HostCPU) {
		a.Health.HostCPUPct = &h.HostCPU
	}
	tags := []string{metrics.TagRequestLatency}
	if streaming {
		tags = []string{metrics.TagTTFT, metrics.TagITL}
	}
	typical, what := math.Inf(1), ""
	for _, tag := range tags {
		if m, ok := sum.Get(tag); ok && m.Stats != nil && m.Stats.P50 > 0 && m.Stats.P50 < typical {
			typical, what = m.Stats.P50, m.Header
		}
	}
	limit, of := float64(schedFloor)/1e6, ""
	if what != "" {
		limit = max(limit, schedShare*typical)
		of = fmt.Sprintf(" (the %s p50 is %.3f ms)", what, typical)
	}
	if h.SchedP99 > limit {
		a.ClientBound = true
		a.Warnings = append(a.Warnings, fmt.Sprintf(
			"the client's goroutines waited up to %.1f ms (p99) to run%s: its timestamps carry that delay; "+
				"the client process or its host was short of CPU", h.SchedP99, of))
	}
	if h.ProcessCPU > cpuLimit {
		a.ClientBound = true
		a.Warnings = append(a.Warnings, fmt.Sprintf("the client used %.0f%% of its %d cores: it was CPU-bound", h.ProcessCPU, h.Cores))
	}
}
