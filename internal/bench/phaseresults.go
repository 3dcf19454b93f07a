package bench

import (
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
)

// phaseResults summarises each phase's requests on their own, warmups
// included, when the profile names its phases (a config file's phases
// list): AIPerf's phase-scoped artifacts (phases/<name>/). nil otherwise.
func (c *cell) phaseResults(records []metrics.Record) []result.PhaseResult {
	if len(c.p.Phases) == 0 {
		return nil
	}
	byPhase := map[string][]metrics.Record{}
	for _, r := range records {
		byPhase[r.Phase] = append(byPhase[r.Phase], r)
	}
	out := make([]result.PhaseResult, 0, len(c.phases))
	profiling := 0
	for i, ph := range c.phases {
		pr := result.PhaseResult{Index: i, ProfilingIndex: -1, Name: ph.Name, Kind: ph.Kind}
		var slos []metrics.SLO
		if ph.Kind == plan.KindProfiling {
			pr.ProfilingIndex, slos = profiling, c.slos()
			profiling++
		}
		recs := byPhase[ph.Name]
		pr.Summary = metrics.Summarize(recs, c.p.Streaming, slos...)
		pr.ErrorSummary = metrics.Errors(recs)
		out = append(out, pr)
	}
	return out
}
