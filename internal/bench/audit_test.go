package bench

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/aiperf-go/aiperf/internal/load"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/selfcheck"
)

// rateRun builds n records of a rate phase scheduled every gap, each sent
// lag late and the last one sent late by tail extra.
func rateRun(n int, gap, lag, tail time.Duration, capDelayed int) ([]load.PhaseReport, []metrics.Record) {
	ph := plan.Phase{Name: "p", Kind: plan.KindProfiling, Rate: float64(time.Second / gap), RateMode: plan.RateConstant}
	var recs []metrics.Record
	for i := range n {
		s := int64(i) * int64(gap)
		sent := s + int64(lag)
		if i == n-1 {
			sent += int64(tail)
		}
		recs = append(recs, metrics.Record{Index: i, PhaseKind: plan.KindProfiling, ScheduledNs: s, SentNs: sent})
	}
	r := load.PhaseReport{Phase: ph, Sent: n, CapDelayed: capDelayed, FirstSchedNs: 0, LastSchedNs: int64(n-1) * int64(gap)}
	return []load.PhaseReport{r}, recs
}

func TestAuditOnSchedule(t *testing.T) {
	reports, recs := rateRun(100, 10*time.Millisecond, 100*time.Microsecond, 0, 0)
	a := audit(plan.Profile{}, reports, recs, time.Millisecond, 2*time.Millisecond)
	assert.Equal(t, "rate", a.Mode)
	assert.Equal(t, 100.0, a.TargetRate)
	assert.InDelta(t, 100, a.AchievedRate, 0.01)
	assert.InDelta(t, 100, a.ScheduledRate, 0.01, "the schedule's own rate, beside the target")
	assert.InDelta(t, 0.1, a.SendLagMs.P99, 1e-9)
	assert.False(t, a.ClientBound)
	assert.Empty(t, a.Warnings)
}

func TestAuditShortfallAndLagAreClientBound(t *testing.T) {
	reports, recs := rateRun(100, 10*time.Millisecond, 0, 200*time.Millisecond, 0)
	a := audit(plan.Profile{}, reports, recs, 0, 0)
	assert.True(t, a.ClientBound)
	assert.Contains(t, strings.Join(a.Warnings, "\n"), "the client fell behind")

	reports, recs = rateRun(100, 10*time.Millisecond, 15*time.Millisecond, 0, 0)
	a = audit(plan.Profile{}, reports, recs, 0, 0)
	assert.True(t, a.ClientBound)
	assert.Contains(t, strings.Join(a.Warnings, "\n"), "send lag p99 15.00 ms")
}

// On a schedule a few ms long, a last send 2 ms late is 9% of the
// rate but not a client falling behind: the shortfall must also add up to
// more than the lag limit.
func TestAuditShortScheduleIsNotBehind(t *testing.T) {
	reports, recs := rateRun(3, 10*time.Millisecond, 0, 2*time.Millisecond, 0)
	a := audit(plan.Profile{}, reports, recs, 0, 0)
	assert.Less(t, a.AchievedRate, shortfallLimit*100, "a shortfall by the rate alone")
	assert.False(t, a.ClientBound, "%v", a.Warnings)
}

func TestAuditCapIsNotClientBound(t *testing.T) {
	reports, recs := rateRun(100, 10*time.Millisecond, 15*time.Millisecond, 200*time.Millisecond, 40)
	a := audit(plan.Profile{}, reports, recs, 0, 0)
	assert.False(t, a.ClientBound)
	assert.Equal(t, 40, a.CapDelayed)
	assert.Contains(t, strings.Join(a.Warnings, "\n"), "40 of 100 sends waited for a free in-flight slot")
}

func TestAuditStalledProcessIsClientBound(t *testing.T) {
	recs := []metrics.Record{{PhaseKind: plan.KindProfiling, SentNs: 1}, {PhaseKind: plan.KindProfiling, SentNs: 2e9}}
	reports := []load.PhaseReport{{Phase: plan.Phase{Kind: plan.KindProfiling, Concurrency: 2}, Sent: 2}}
	a := audit(plan.Profile{}, reports, recs, 35*time.Millisecond, 80*time.Millisecond)
	assert.Equal(t, "concurrency", a.Mode)
	assert.True(t, a.ClientBound)
	assert.Contains(t, strings.Join(a.Warnings, "\n"), "timer wake-up lateness p99 35.0 ms, max 80.0 ms")
}

func TestAuditSeveralRatesHaveNoSingleTarget(t *testing.T) {
	r1, recs1 := rateRun(50, 10*time.Millisecond, 0, 0, 0)
	r2, _ := rateRun(50, 50*time.Millisecond, 0, 0, 0)
	a := audit(plan.Profile{}, append(r1, r2...), recs1, 0, 0)
	assert.Equal(t, "rate", a.Mode)
	assert.Zero(t, a.TargetRate, "20 and 100 req/s phases have no one target")
}

func TestAuditTalliesWhatTheRequestsSay(t *testing.T) {
	reports, recs := rateRun(6, 10*time.Millisecond, 0, 0, 0)
	// 0: a normal stream; 1: every token in one read; 2: cut at the end of
	// the grace period; 3: the client out of file descriptors; 4: absurd
	// usage; 5: two unparseable lines in an otherwise valid stream.
	for i := range recs {
		recs[i].ResponseNs = metrics.StampsOf(recs[i].SentNs+40, recs[i].SentNs+44, recs[i].SentNs+48)
		recs[i].OutputTokens = 3
	}
	recs[1].ResponseNs = metrics.StampsOf(recs[1].SentNs+40, recs[1].SentNs+40, recs[1].SentNs+40)
	recs[2].Cancelled, recs[2].CutBy = true, metrics.CutWorkerFailed
	recs[3].Error = &metrics.Error{Type: "ClientError", Message: "the client ran out of file descriptors"}
	recs[4].Usage = &metrics.Usage{CompletionTokens: -1, Untrusted: "completion_tokens is negative (-1)"}
	recs[5].MalformedChunks = 2
	a := audit(plan.Profile{Streaming: true}, reports, recs, 0, 0)
	assert.Equal(t, 1, a.Bursts)
	assert.Equal(t, 1, a.Cut)
	assert.Equal(t, 1, a.CutStopped, "cut on a worker stopped because another failed")
	assert.Contains(t, a.CutWhy(), "in flight on a worker stopped because another worker or a control hook failed")
	assert.Equal(t, 1, a.ClientErrors)
	assert.Equal(t, 1, a.UsageUntrusted)
	assert.Equal(t, 2, a.Malformed)
	assert.True(t, a.ClientBound, "requests the client could not send make the run client-bound")
	warnings := strings.Join(a.Warnings, "\n")
	for _, w := range []string{"1 streamed requests delivered all their tokens in one read", "1 requests failed for the client host's own limits",
		"2 stream lines were not response chunks", "1 requests reported implausible token usage"} {
		assert.Contains(t, warnings, w)
	}

	quiet := audit(plan.Profile{Streaming: true}, reports, recs[:1], 0, 0)
	assert.Zero(t, quiet.Bursts+quiet.Cut+quiet.ClientErrors+quiet.UsageUntrusted+quiet.Malformed)
	assert.False(t, quiet.ClientBound)
}

// TestAuditCountsRepliesNotStreamed: a reply under --streaming that
// arrived as one whole body is counted and warned of as not streamed,
// not as a stream whose tokens came in one read.
func TestAuditCountsRepliesNotStreamed(t *testing.T) {
	reports, recs := rateRun(3, 10*time.Millisecond, 0, 0, 0)
	for i := range recs {
		recs[i].ResponseNs, recs[i].OutputTokens, recs[i].Streaming = metrics.StampsOf(recs[i].SentNs+40), 3, true
	}
	recs[0].NotStreamed, recs[1].NotStreamed = true, true
	a := audit(plan.Profile{Streaming: true}, reports, recs, 0, 0)
	assert.Equal(t, 2, a.NotStreamed)
	assert.Equal(t, 1, a.Bursts, "the one streamed reply of one read")
	assert.Contains(t, strings.Join(a.Warnings, "\n"), "2 replies under --streaming were not streamed: each arrived as one JSON body")
	assert.False(t, a.ClientBound, "the server's replies, not the client's doing")
}

// The client's scheduling delay flags a run when it is a visible share of
// the smaller of the typical TTFT and ITL (at least 2 ms), as does a client
// that used nearly all its cores; the figures land on the audit.
func TestJudgeHealth(t *testing.T) {
	sum := metrics.Summary{Metrics: []metrics.Metric{
		{Tag: metrics.TagTTFT, Header: "Time to First Token", Stats: &metrics.Stats{P50: 20}},
		{Tag: metrics.TagITL, Header: "Inter Token Latency", Stats: &metrics.Stats{P50: 4}},
		{Tag: metrics.TagRequestLatency, Header: "Request Latency", Stats: &metrics.Stats{P50: 300}},
	}}
	host := 97.0
	healthy := selfcheck.Report{SchedP50: 0.01, SchedP99: 0.4, SchedMax: 3, ProcessCPU: 30, Cores: 2, HostCPU: host}
	var a result.Audit
	judgeHealth(&a, healthy, sum, true)
	assert.False(t, a.ClientBound, "0.4 ms p99 is under 2 ms")
	assert.Equal(t, &result.Health{SchedLatencyP50Ms: 0.01, SchedLatencyP99Ms: 0.4, SchedLatencyMaxMs: 3, ProcessCPUPct: 30,
		Cores: 2, HostCPUPct: &host}, a.Health)

	starved := healthy
	starved.SchedP99 = 15
	a = result.Audit{}
	judgeHealth(&a, starved, sum, true)
	assert.True(t, a.ClientBound)
	assert.Contains(t, strings.Join(a.Warnings, "\n"), "waited up to 15.0 ms (p99) to run (the Inter Token Latency p50 is 4.000 ms)")

	tiny := metrics.Summary{Metrics: []metrics.Metric{{Tag: metrics.TagITL, Header: "Inter Token Latency", Stats: &metrics.Stats{P50: 0.004}}}}
	a = result.Audit{}
	judgeHealth(&a, starved, tiny, true)
	assert.Contains(t, strings.Join(a.Warnings, "\n"), "waited up to 15.0 ms (p99) to run (the Inter Token Latency p50 is 0.004 ms)",
		"an ITL of 4 µs: the 2 ms floor decides")

	a = result.Audit{}
	judgeHealth(&a, starved, sum, false)
	assert.False(t, a.ClientBound, "non-streaming: 15 ms is 5% of the 300 ms request latency")

	busy := healthy
	busy.ProcessCPU = 95
	a = result.Audit{}
	judgeHealth(&a, busy, sum, true)
	assert.True(t, a.ClientBound)
	assert.Contains(t, a.Warnings, "the client used 95% of its 2 cores: it was CPU-bound")

	a = result.Audit{}
	judgeHealth(&a, selfcheck.Report{SchedP99: math.NaN()}, sum, true)
	assert.Nil(t, a.Health, "nothing measured, nothing judged")
}

// In concurrency mode the send lag is the client's own time from a freed
// slot to the next send: past 10 ms at p99 the client fell behind.
func TestAuditConcurrencyLag(t *testing.T) {
	ph := plan.Phase{Name: "p", Kind: plan.KindProfiling, Concurrency: 8}
	var recs []metrics.Record
	for i := range 100 {
		lag := int64(50 * time.Microsecond)
		if i >= 95 {
			lag = int64(30 * time.Millisecond)
		}
		recs = append(recs, metrics.Record{Index: i, PhaseKind: plan.KindProfiling, ScheduledNs: int64(i) * 1e6, SentNs: int64(i)*1e6 + lag})
	}
	a := audit(plan.Profile{}, []load.PhaseReport{{Phase: ph, Sent: 100}}, recs, 0, 0)
	assert.Equal(t, "concurrency", a.Mode)
	assert.True(t, a.ClientBound)
	assert.Contains(t, strings.Join(a.Warnings, "\n"), "requests left that long after their slot freed")
}

// TestAuditCountsImplausibleVideoFigures: video jobs whose figures were
// dropped are counted, with the first reason, in a warning.
func TestAuditCountsImplausibleVideoFigures(t *testing.T) {
	reports, recs := rateRun(3, time.Millisecond, 0, 0, 0)
	recs[1].Media = &metrics.MediaStats{VideoUntrusted: "inference_time_s is negative (-3)"}
	recs[2].Media = &metrics.MediaStats{VideoUntrusted: "peak_memory_mb is implausible (1e308)"}
	a := audit(plan.Profile{}, reports, recs, 0, 0)
	assert.Equal(t, 2, a.VideoUntrusted)
	assert.Contains(t, a.Warnings, "2 video jobs reported implausible figures (the first: inference_time_s is negative (-3)): "+
		"those figures are left out of the video metrics")
}

// A replayed trace whose later turns waited for slow replies past their
// timestamps: the engine schedules each at the reply's end, so the client
// kept its schedule; the audit says the server paced those turns and does
// not blame the client.
func TestAuditReplyGatedTurnsAreNotClientBound(t *testing.T) {
	ms := int64(time.Millisecond)
	ph := plan.Phase{Name: "p", Kind: plan.KindProfiling, Fixed: true}
	var recs []metrics.Record
	// 4 sessions: turn 0 at its timestamp (k·50 ms), turn 1 stamped 20 ms
	// later but held by a 300 ms reply, so scheduled at that reply's end.
	for k := range int64(4) {
		at := k * 50 * ms
		recs = append(recs, metrics.Record{PhaseKind: plan.KindProfiling, ScheduledNs: at, SentNs: at + ms/10, EndNs: at + 300*ms},
			metrics.Record{PhaseKind: plan.KindProfiling, Turn: 1, ScheduledNs: at + 300*ms, SentNs: at + 300*ms + ms/10})
	}
	r := load.PhaseReport{Phase: ph, Sent: 8, ReplyGated: 4, FirstSchedNs: 0, LastSchedNs: 450 * ms}
	a := audit(plan.Profile{}, []load.PhaseReport{r}, recs, 0, 0)
	assert.Equal(t, "fixed", a.Mode)
	assert.False(t, a.ClientBound, "%v", a.Warnings)
	w := strings.Join(a.Warnings, "\n")
	assert.Contains(t, w, "4 of 8 sends were later turns that waited for their previous reply past their timestamp")
	assert.NotContains(t, w, "the client fell behind")
}

// TestWorkerAuditKeepsItsVerdictsOnly: a worker's audit of its share
// (--workers) keeps the verdicts that it could not keep up (requests its
// own host failed, a send lag beyond the limit) and none of the notes of
// the cell, which the coordinator states over the merged records: the
// replies' tallies, the cap's delays, turns gated by their replies.
func TestWorkerAuditKeepsItsVerdictsOnly(t *testing.T) {
	reports, recs := rateRun(4, 10*time.Millisecond, 15*time.Millisecond, 0, 0)
	recs[0].Error = &metrics.Error{Type: "ClientError", Message: "the client ran out of file descriptors"}
	recs[1].MalformedChunks = 2
	recs[2].Usage = &metrics.Usage{CompletionTokens: -1, Untrusted: "completion_tokens is negative (-1)"}
	reports[0].ReplyGated = 1
	full := audit(plan.Profile{}, reports, recs, 0, 0)
	w := workerAudit(plan.Profile{}, reports, recs, 0, 0)
	assert.True(t, w.ClientBound)
	assert.Equal(t, 2, w.Malformed, "its counts stay")
	assert.Len(t, full.Warnings, 5, "%v", full.Warnings)
	assert.Len(t, w.Warnings, 2, "%v", w.Warnings)
	assert.Contains(t, w.Warnings[0], "1 requests failed for the client host's own limits")
	assert.Contains(t, w.Warnings[1], "send lag p99 15.00 ms exceeds 10ms")

	reports, recs = rateRun(100, 10*time.Millisecond, 0, 0, 40)
	assert.Contains(t, strings.Join(audit(plan.Profile{}, reports, recs, 0, 0).Warnings, "\n"), "40 of 100 sends waited")
	assert.Empty(t, workerAudit(plan.Profile{}, reports, recs, 0, 0).Warnings, "the cap's delays are the cell's")
}
