package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/aiperf-go/aiperf/internal/load"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
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
		recs[i].ResponseNs = []int64{recs[i].SentNs + 40, recs[i].SentNs + 44, recs[i].SentNs + 48}
		recs[i].OutputTokens = 3
	}
	recs[1].ResponseNs = []int64{recs[1].SentNs + 40, recs[1].SentNs + 40, recs[1].SentNs + 40}
	recs[2].Cancelled = true
	recs[3].Error = &metrics.Error{Type: "ClientError", Message: "the client ran out of file descriptors"}
	recs[4].Usage = &metrics.Usage{CompletionTokens: -1, Untrusted: "completion_tokens is negative (-1)"}
	recs[5].MalformedChunks = 2
	a := audit(plan.Profile{Streaming: true}, reports, recs, 0, 0)
	assert.Equal(t, 1, a.Bursts)
	assert.Equal(t, 1, a.Cut)
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
