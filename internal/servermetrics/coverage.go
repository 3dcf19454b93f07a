package servermetrics

import (
	"fmt"
	"math"
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
	if before+after <= w.slack(interval) {
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

// slack is how far from w's edges a delta's scrapes may lie and still
// stand for them: two intervals, or a tenth of the window.
func (w window) slack(interval time.Duration) int64 {
	return max(2*int64(interval), (w.end-w.begin)/10)
}

// seriesRef is sp for the deltas of series s (a counter, histogram or
// summary) that has no sample at sp's reference scrape (a scrape that left
// it out, or a sample the timeline refused) but has one before: its
// reference is its last sample before, never 0 (which would count its
// value since its server started as the window's). A series first seen
// after the reference starts from 0. The string says why the delta
// misstates w when that sample is further before w than the slack allows
// ("" when it does not).
func (b *endpointBuf) seriesRef(s *seriesBuf, w window, sp span, interval time.Duration) (span, string) {
	if (s.typ != TypeCounter && s.count == nil) || s.sampled(sp.ref) {
		return sp, ""
	}
	j := s.lastSampled(sp.ref, 0)
	if j < 0 {
		return sp, ""
	}
	sp.ref = j
	before := w.begin - b.times[j]
	if before <= w.slack(interval) {
		return sp, ""
	}
	return sp, fmt.Sprintf("absent from the endpoint's scrape at the beginning of phase %s, its last sample before it "+
		"%.1f s earlier: the delta counts that time as the phase's", w.name, float64(before)/1e9)
}

// sampled reports whether s has a sample at scrape i: a value, or a
// histogram's or summary's count and cells.
func (s *seriesBuf) sampled(i int) bool {
	if s.count == nil {
		return i >= 0 && i < len(s.vals) && !math.IsNaN(s.vals[i])
	}
	return i >= 0 && i < len(s.count) && !math.IsNaN(s.count[i]) && len(s.cells) >= (i+1)*s.stride()
}

// lastSampled is the last scrape from floor to i where s has a sample, or
// −1.
func (s *seriesBuf) lastSampled(i, floor int) int {
	for ; i >= max(floor, 0); i-- {
		if s.sampled(i) {
			return i
		}
	}
	return -1
}

// absentWarning is the console's line for the series of an endpoint whose
// deltas over a window were refused (seriesRef): the first one's name and
// why, and how many others.
func absentWarning(ep Endpoint, first *seriesBuf, why string, others int) string {
	name := first.display()
	if others > 0 {
		name += fmt.Sprintf(" (and %d other series)", others)
	}
	return fmt.Sprintf("%s: %s: %s was %s; left out, marked impossible", sourceName(ep.Source), ep.URL, name, why)
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
	return fmt.Sprintf("%s: %s: %s; its counters and histograms over that phase are left out, marked impossible",
		sourceName(ep.Source), ep.URL, why)
}

// sourceName is what a warning calls a source's scrapes.
func sourceName(source string) string {
	if source == SourceGPU {
		return "GPU telemetry"
	}
	return "server metrics"
}
