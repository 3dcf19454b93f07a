package result

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/aiperf-go/aiperf/hooks"
)

// The warnings of the control hooks' class are told from the others by how
// they begin, as their producers write them: a profiler stop that failed
// (hooks' own message), a cache warm at the start, a profiler that may have
// run during a sweep trial. A reset that did not clear the cache has its own
// flag, and other warnings have none.
func TestHookFlagNamesTheHookWarnings(t *testing.T) {
	stop := (&hooks.StopError{Errs: []error{errors.New("POST http://h:1/stop_profile: no answer within 1s")}}).Error()
	ws := []string{
		"the client process stalled: timer wake-up lateness p99 66.1 ms",
		stop,
		WarnCacheWarm + ": 2 of 4 prompts were served from the prefix cache on their first request",
		"kv cache reset: 3 of 4 prompts hit",
		WarnProfilerMayRun + ": the profiler stop sent to http://h:1 after c trial 1 failed (no answer within 1s)",
		stop,
	}
	assert.Equal(t, "server profiler stop failed", HookFlag(stop))
	assert.Equal(t, []string{ws[1], ws[2], ws[4], ws[5]}, HookWarnings(ws))
	assert.Equal(t, []string{"server profiler stop failed", "prefix cache warm at the start", "server profiler possibly running"},
		HookFlags(ws), "each flag once, in order")
	assert.Empty(t, HookFlags(ws[:1]))
	own := WarnOwnLateReset + "http://h:1 had 1 of its 2 attempts get no answer within 1s (a retry was answered) and may have run during this run"
	assert.Equal(t, "a KV-cache reset that got no answer may have run during it", HookFlag(own))
}
