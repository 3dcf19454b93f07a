package bench

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/aiperf-go/aiperf/internal/dataset"
	"github.com/aiperf-go/aiperf/internal/load"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// checkPhases checks the cell's phases against its dataset before any
// traffic, refusing a fixed schedule none of whose requests falls within
// its phase's duration, and warns of what the phases will not do as asked.
func (c *cell) checkPhases(fixed bool) error {
	if err := checkFixedDuration(c.p, c.phases, c.ds); err != nil {
		return err
	}
	if n := dataset.Turns(c.ds); fixed && c.p.RequestCount != nil && n > 0 && *c.p.RequestCount > n {
		c.warn(fmt.Sprintf("--request-count %d: the fixed schedule holds %d requests, each sent once: %d are sent", *c.p.RequestCount, n, n))
	}
	if w := c.p.UnusedRateMode(c.phases); w != "" {
		c.warn(w)
	}
	if name, why := plan.Undriven(c.phases); why != "" {
		c.warn(fmt.Sprintf("phase %s: %s", name, why))
	}
	return nil
}

// checkFixedDuration refuses a profiling phase on a fixed schedule whose
// duration ends before the schedule's first request is due: it would send
// nothing. The error names the duration, the first timestamp and the fix.
func checkFixedDuration(p plan.Profile, phases []plan.Phase, ds dataset.Dataset) error {
	var sched []dataset.Timed
	for i, ph := range phases {
		if ph.Kind != plan.KindProfiling || !ph.Fixed || ph.Duration <= 0 {
			continue
		}
		if sched == nil {
			if sched = ds.Schedule(); len(sched) == 0 {
				return nil
			}
		}
		first := sched[0].AtMs // ascending
		due := first
		if ph.Speedup > 0 {
			due /= ph.Speedup
		}
		if due < ph.Duration*1000 {
			continue
		}
		return fmt.Errorf("%s: %s (nothing was sent)", durationField(p, i, ph), firstDue(p, ph, first, due))
	}
	return nil
}

// durationField names the duration of phase i as the user gave it.
func durationField(p plan.Profile, i int, ph plan.Phase) string {
	if len(p.Phases) > 0 {
		return fmt.Sprintf("phases[%d].duration %g", i, ph.Duration)
	}
	return fmt.Sprintf("--benchmark-duration %g", ph.Duration)
}

// firstDue says when the fixed schedule's first request is due (first ms
// from the schedule's zero, due ms of replay) and how to bring it within
// the duration.
func firstDue(p plan.Profile, ph plan.Phase, first, due float64) string {
	ts := first
	if p.FixedScheduleStartOffset != nil {
		ts += float64(*p.FixedScheduleStartOffset)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the fixed schedule's first request (first timestamp %s) is due %s ms after the start", fmtMs(ts), fmtMs(due))
	if ph.Speedup > 0 && ph.Speedup != 1 {
		fmt.Fprintf(&b, " (÷ --replay-speedup %g)", ph.Speedup)
	}
	fmt.Fprintf(&b, ", when the %g s duration has ended: no request would be sent; give a duration above %s s", ph.Duration, fmtMs(due/1000))
	switch {
	case p.FixedScheduleStartOffset != nil:
		fmt.Fprintf(&b, ", or --fixed-schedule-start-offset %s to start the schedule at its first timestamp", fmtMs(ts))
	case !p.FixedScheduleAutoOffset:
		b.WriteString(", or --fixed-schedule-auto-offset to start the schedule at its first timestamp")
	}
	return b.String()
}

func fmtMs(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// nothingSent returns an error that is ErrAllFailed when the profiling
// phases sent no request at all (and the run was not interrupted): a cell
// the client could not drive is flagged, not recorded as an empty success.
func nothingSent(phases []plan.Phase, reports []load.PhaseReport, prof []metrics.Record) error {
	if len(prof) > 0 {
		return nil
	}
	first := -1
	for i, ph := range phases {
		if ph.Kind != plan.KindProfiling {
			continue
		}
		if i < len(reports) && reports[i].Sent > 0 {
			return nil // sent, its records lost: not this failure
		}
		if first < 0 {
			first = i
		}
	}
	if first < 0 {
		return nil
	}
	ph := phases[first]
	why := "it ended before its first send"
	if ph.Duration > 0 {
		why = fmt.Sprintf("its %g s duration ended before its first send", ph.Duration)
	}
	return noSuccess(fmt.Sprintf("no profiling request was sent: phase %s sent nothing (%s), so there is nothing to measure", ph.Name, why))
}
