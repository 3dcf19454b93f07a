package runner

import (
	"fmt"
	"time"

	"github.com/aiperf-go/aiperf/hooks"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
)

// LateResetGrace is the least a lane waits, after a trial's KV-cache reset
// got no answer, before its next trial on that server starts
// (hooks.LateResetGrace).
const LateResetGrace = hooks.LateResetGrace

// lateReset is a reset call with an attempt that got no answer: it may
// still run on its server.
type lateReset struct {
	origin  string
	servers []string // its normalised server (plan.Profile.Servers)
	timeout time.Duration
	gaveUp  time.Time // when its client gave up on its last unanswered attempt
	trial   string    // "cell trial N" that sent it
}

// describe says what r is, for a progress line and a trial's warning.
func (r lateReset) describe() string {
	return fmt.Sprintf("the previous trial's reset of %s (%s) got no answer within %s", r.origin, r.trial, r.timeout)
}

// grace is how long after its client gave up r is waited for.
func (r lateReset) grace() time.Duration { return max(r.timeout, LateResetGrace) }

// graceLeft is how much of the grace of resets is left.
func graceLeft(resets []lateReset) time.Duration {
	var left time.Duration
	for _, r := range resets {
		left = max(left, time.Until(r.gaveUp.Add(r.grace())))
	}
	return left
}

// unanswered are the reset calls of t's run with an attempt that got no
// answer (a timeout or a connection dropped after it was sent; a
// connection never opened carried nothing), whether the call failed or a
// retry was answered: the attempt left unanswered may still run.
func (s *sweepRun) unanswered(t plan.Trial, run *result.Run) []lateReset {
	if run == nil {
		return nil
	}
	timeout := t.Cell.Profile.ResetHook().Timeout
	var out []lateReset
	for _, c := range run.ControlHooks {
		if c.Hook != hooks.HookReset || c.Unanswered == 0 {
			continue
		}
		p := plan.Profile{URL: []string{c.Origin}}
		out = append(out, lateReset{origin: c.Origin, servers: p.Servers(), timeout: timeout,
			gaveUp: time.Unix(0, c.UnansweredAt), trial: fmt.Sprintf("%s trial %d", t.Cell.Label, t.Number)})
	}
	return out
}

// lateOn splits late into the resets that may run on a server t loads,
// which t runs under (each warns only the next trial on its server), and
// the others, kept for later trials.
func (s *sweepRun) lateOn(late []lateReset, t plan.Trial) (under, rest []lateReset) {
	servers := t.Cell.Profile.Servers()
	for _, r := range late {
		if s.ids.meet(r.servers, servers) {
			under = append(under, r)
		} else {
			rest = append(rest, r)
		}
	}
	return under, rest
}
