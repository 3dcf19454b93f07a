package runner

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/hooks"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
)

// A failed profiler stop leaves its server's profiler possibly running for
// every later trial on that server (however its URL spells it), none on
// another, until a stop there succeeds.
func TestProfilersLeftUntilAStopSucceeds(t *testing.T) {
	s := &sweepRun{}
	trial := func(label, url string) plan.Trial {
		return plan.Trial{Cell: plan.Cell{Label: label, Profile: plan.Profile{URL: []string{url}}}, Number: 1}
	}
	stop := func(origin string, ok bool) *result.Run {
		c := hooks.Call{Hook: hooks.HookProfilerStop, Origin: origin, OK: ok}
		if !ok {
			c.Error = "no answer within 1s"
		}
		return &result.Run{ControlHooks: []hooks.Call{{Hook: hooks.HookProfilerStart, Origin: origin, OK: true}, c}}
	}
	left := s.profilersLeft(nil, trial("a", "http://127.0.0.1:9"), stop("http://127.0.0.1:9", false))
	require.Len(t, left, 1)
	ws := s.profilersUnder(left, trial("b", "http://localhost:9/v1"))
	require.Len(t, ws, 1)
	assert.Contains(t, ws[0], result.WarnProfilerMayRun)
	assert.Contains(t, ws[0], "after a trial 1 failed (no answer within 1s)")
	assert.Empty(t, s.profilersUnder(left, trial("c", "http://127.0.0.1:10")), "another server")

	left = s.profilersLeft(left, trial("c", "http://127.0.0.1:10"), nil)
	assert.Len(t, left, 1, "a trial that left no run changes nothing")
	left = s.profilersLeft(left, trial("b", "http://localhost:9"), stop("http://localhost:9", true))
	assert.Empty(t, left, "the stop that succeeded ended it")
}
