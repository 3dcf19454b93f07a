package bench

import (
	"slices"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
)

// phaseResults summarises each phase's requests on their own, warmups
// included, when the profile names its phases (a config file's phases
// list): AIPerf's phase-scoped artifacts (phases/<name>/). nil otherwise.
// A phase that is not among began (the phases that began sending) and
// has no record never began: it is marked so, with no figures.
func (c *cell) phaseResults(records []metrics.Record, began []plan.Phase) []result.PhaseResult {
	if len(c.p.Phases) == 0 {
		return nil
	}
	out := make([]result.PhaseResult, 0, len(c.phases))
	profiling := 0
	var buf []metrics.Record
	for i, ph := range c.phases {
		pr := result.PhaseResult{Index: i, ProfilingIndex: -1, Name: ph.Name, Kind: ph.Kind}
		var slos []metrics.SLO
		if ph.Kind == plan.KindProfiling {
			pr.ProfilingIndex, slos = profiling, c.slos()
			profiling++
		}
		var recs []metrics.Record
		recs, buf = phaseRecords(records, ph.Name, buf)
		if len(recs) == 0 && !slices.ContainsFunc(began, func(b plan.Phase) bool { return b.Name == ph.Name }) {
			pr.NeverBegan, pr.ErrorSummary = true, []metrics.ErrorCount{}
			out = append(out, pr)
			continue
		}
		pr.Summary = metrics.Summarize(recs, c.p.Streaming, slos...)
		pr.ErrorSummary = metrics.Errors(recs)
		out = append(out, pr)
	}
	return out
}

// phaseRecords returns the records of the named phase: a sub-slice of
// records when they lie together (phases run one after another, so they
// usually do), else a copy into buf, reused from phase to phase so that at
// most one phase's records are ever copied. It returns buf for reuse.
func phaseRecords(records []metrics.Record, name string, buf []metrics.Record) (recs, reuse []metrics.Record) {
	first, last, n := -1, -1, 0
	for i := range records {
		if records[i].Phase == name {
			if first < 0 {
				first = i
			}
			last = i
			n++
		}
	}
	if n == 0 {
		return nil, buf
	}
	if last-first+1 == n {
		return records[first : last+1], buf
	}
	buf = buf[:0]
	for i := first; i <= last; i++ {
		if records[i].Phase == name {
			buf = append(buf, records[i])
		}
	}
	return buf, buf
}
