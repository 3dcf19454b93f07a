package runner

import (
	"errors"
	"fmt"
	"slices"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/search"
)

// ErrNothingDriven is returned by Search when it stopped before its first
// probe because that probe could not be driven (ReasonUndriven): the search
// measured nothing, which is a failure, not an answer.
var ErrNothingDriven = errors.New("no probe was driven")

// maxCornerParams bounds the spaces UndrivenSpace checks: a space of n
// parameters has 2^n corners.
const maxCornerParams = 12

// Undriven is a search's space none of whose probes can be driven, as
// UndrivenSpace finds it: Corner is the probe nearest to being driven (its
// phase's concurrency the least above its request count), Why what its phase cannot do, and
// Concurrency and Requests that phase's load and request count; Highest is
// the highest concurrency of the space's corners, the request count that
// drives every probe.
type Undriven struct {
	Corner      plan.Cell
	Why         string
	Concurrency int
	Requests    int
	Highest     int
}

// UndrivenSpace tells, before anything runs, whether search s could drive
// none of its probes: Search stops before a probe whose profiling phase
// sends fewer requests than its concurrency (plan.Undriven), and when that
// holds at every corner of the space it holds at every point of it (each
// option moves it one way only: a higher concurrency, a lower request count,
// no rate, duration or session count make a phase undriven), so Search would
// stop before its first probe. ok is false when some probe can be driven,
// or the space has more than maxCornerParams parameters (not checked).
func UndrivenSpace(s plan.Search) (u Undriven, ok bool, err error) {
	n := len(s.Config.Space)
	if n == 0 || n > maxCornerParams {
		return u, false, nil
	}
	for mask := range 1 << n {
		pt := make(search.Point, n)
		for i, p := range s.Config.Space {
			pt[i] = p.Lo
			if mask&(1<<i) != 0 {
				pt[i] = p.Hi
			}
		}
		cell, err := s.Cell(0, pt)
		if err != nil {
			return u, false, err
		}
		phases := cell.Profile.PhaseList()
		i := slices.IndexFunc(phases, func(ph plan.Phase) bool { return ph.Kind == plan.KindProfiling && ph.Undriven() != "" })
		if i < 0 { // as plan.Undriven, which Search asks
			return Undriven{}, false, nil
		}
		ph, why := phases[i], phases[i].Undriven()
		u.Highest = max(u.Highest, ph.Concurrency)
		if mask == 0 || ph.Concurrency-ph.Requests < u.Concurrency-u.Requests {
			u.Corner, u.Why, u.Concurrency, u.Requests = cell, why, ph.Concurrency, ph.Requests
		}
	}
	return u, true, nil
}

// stopUndriven tells the search it stopped before next, a probe it could
// not drive (cell is that probe's): its answer then names the loads not
// driven and why, and compares it with a grid of the loads it could drive
// (the box around the last probe run, search.Space.DrivenBox).
func (r *searchRun) stopUndriven(next search.Point, cell plan.Cell) {
	why := "they cannot be driven"
	phases := cell.Profile.PhaseList()
	if i := slices.IndexFunc(phases, func(ph plan.Phase) bool { return ph.Kind == plan.KindProfiling && ph.Undriven() != "" }); i >= 0 {
		why = fmt.Sprintf("--request-count %d cannot drive them", phases[i].Requests)
	} else if _, w := plan.Undriven(phases); w != "" {
		why = w // a ramp that cannot reach them (plan.Phase.RampShort)
	}
	last := r.h.Probes[len(r.h.Probes)-1].Point
	r.srch.StopUndriven(search.Undriven{Next: next, Why: why, Driven: r.s.Config.Space.DrivenBox(last, r.driven)})
}

// driven tells whether the probe at pt could be driven (plan.Undriven).
func (r *searchRun) driven(pt search.Point) bool {
	cell, err := r.s.Cell(0, pt)
	if err != nil {
		return false
	}
	_, why := plan.Undriven(cell.Profile.PhaseList())
	return why == ""
}
