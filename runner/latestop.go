package runner

import (
	"fmt"
	"slices"

	"github.com/aiperf-go/aiperf/hooks"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
)

// leftProfiler is a server profiler a trial's stop did not stop: the call
// got no answer (the server may or may not have acted on it) or failed
// (it did not). The profiler may run on through the next trials on that
// server, costing it what a profiler costs, until a later stop there
// succeeds; no route tells whether it still runs.
type leftProfiler struct {
	origin  string
	servers []string // its normalised server (plan.Profile.Servers)
	trial   string   // "cell trial N" whose stop failed
	why     string   // the stop's error
}

// warning is the note on a trial that ran while p may have been running.
func (p leftProfiler) warning() string {
	return fmt.Sprintf("%s: the profiler stop sent to %s after %s failed (%s), and no stop there has succeeded since",
		result.WarnProfilerMayRun, p.origin, p.trial, p.why)
}

// profilersLeft updates left, the profilers of a lane that may still run,
// with t's run: each profiler stop call it made (its own, or the runner's
// on its behalf) that failed leaves its server's profiler possibly running,
// and each that succeeded ends that for its server. In call order, so that
// the last word on a server stands.
func (s *sweepRun) profilersLeft(left []leftProfiler, t plan.Trial, run *result.Run) []leftProfiler {
	if run == nil {
		return left
	}
	for _, c := range run.ControlHooks {
		if c.Hook != hooks.HookProfilerStop {
			continue
		}
		p := plan.Profile{URL: []string{c.Origin}}
		servers := p.Servers()
		left = slices.DeleteFunc(left, func(l leftProfiler) bool { return s.ids.meet(l.servers, servers) })
		if !c.OK {
			left = append(left, leftProfiler{origin: c.Origin, servers: servers, why: c.Error,
				trial: fmt.Sprintf("%s trial %d", t.Cell.Label, t.Number)})
		}
	}
	return left
}

// profilersUnder are the warnings of t, which runs on the servers it loads
// while the profilers of left on them may be running.
func (s *sweepRun) profilersUnder(left []leftProfiler, t plan.Trial) []string {
	servers := t.Cell.Profile.Servers()
	var out []string
	for _, p := range left {
		if s.ids.meet(p.servers, servers) {
			out = append(out, p.warning())
		}
	}
	return out
}

// withWarnings adds warnings to the run of a trial (a failed run made from
// err when it left none).
func withWarnings(run *result.Run, spec Spec, err error, warnings []string) *result.Run {
	if len(warnings) == 0 {
		return run
	}
	if run == nil {
		run = failedRun(spec, err)
	}
	run.Audit.Warnings = append(slices.Clone(run.Audit.Warnings), warnings...)
	return run
}
