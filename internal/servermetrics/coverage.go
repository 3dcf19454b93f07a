package servermetrics

import (
	"fmt"
	"time"
)

// uncovered says how a counter's or histogram's delta over window w on
// endpoint ep would misstate the phase ("" when it would not): without an
// end mark the delta stops at the endpoint's last answer, and without a
// begin mark it starts at the answer before the phase, so an endpoint that
// stopped answering (or answered only late) gives a part of the phase, or
// more than the phase, as if it were the phase. A gap of two intervals, or
// a tenth of the phase, is the resolution of periodic scrapes and passes.
func (b *endpointBuf) uncovered(w window, ep int, sp span, interval time.Duration) string {
	var before, after int64
	if w.beginMark[ep] < 0 {
		before = max(0, w.begin-b.times[sp.ref])
	}
	if w.endMark[ep] < 0 {
		after = max(0, w.end-b.times[sp.hi])
	}
	if before+after <= max(2*int64(interval), (w.end-w.begin)/10) {
		return ""
	}
	secs := func(ns int64) float64 { return float64(ns) / 1e9 }
	if after > 0 {
		return fmt.Sprintf("the endpoint's last answer in phase %s came %.1f s before its end (it stopped answering, or answered "+
			"too late): the delta covers %.1f s of the %.1f s phase", w.name, secs(after), secs(b.times[sp.hi]-max(b.times[sp.ref], w.begin)),
			secs(w.end-w.begin))
	}
	return fmt.Sprintf("the endpoint gave no answer at the beginning of phase %s: the delta counts %.1f s before it", w.name, secs(before))
}

// refuseAll takes every statistic of a delta that misstates its phase out
// of Stats (into Refused), a histogram's count too; its timeslices, each
// the delta of a stretch the endpoint answered in, stay.
func refuseAll(out *Series, why string) {
	out.Impossible = why
	for k, v := range out.Stats {
		if out.Refused == nil {
			out.Refused = map[string]float64{}
		}
		out.Refused[k] = v
		delete(out.Stats, k)
	}
}

// uncoveredWarning is the console's line for an endpoint whose deltas over
// a phase were refused (uncovered).
func uncoveredWarning(ep Endpoint, why string) string {
	what := "server metrics"
	if ep.Source == SourceGPU {
		what = "GPU telemetry"
	}
	return fmt.Sprintf("%s: %s: %s; its counters and histograms over that phase are left out, marked impossible", what, ep.URL, why)
}
