package runner

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/aiperf-go/aiperf/internal/result"
)

// A trial's headline says when its KV-cache reset did not clear the cache
// (and when the client shaped its numbers): a sweep's progress lines are
// where a user sees each trial.
func TestHeadlineFlagsWhatIsNotTheServers(t *testing.T) {
	run := &result.Run{Status: result.StatusComplete}
	assert.Equal(t, "complete", headline(run))
	run.Audit.KVReset, run.Audit.ClientBound = result.ResetNotCleared, true
	assert.Equal(t, "complete, CLIENT-BOUND, KV cache NOT cleared by the reset", headline(run))
}

// A trial's headline names each of its hook warnings (result.HookFlag) once,
// among them the one a sweep puts on the trial after a reset that got no
// answer, as it writes it.
func TestHeadlineFlagsHookWarnings(t *testing.T) {
	late := lateReset{origin: "http://h:1", timeout: time.Second, trial: "c trial 1"}
	run := &result.Run{Status: result.StatusComplete, Audit: result.Audit{Warnings: []string{
		"server profiler stop failed for 1 origin(s): POST http://h:1/stop_profile: status 500",
		"the client process stalled",
		late.describe() + " and may have run during this trial",
		"server profiler stop failed for 1 origin(s): again",
	}}}
	assert.Equal(t, "complete, warning: server profiler stop failed, "+
		"a KV-cache reset that got no answer may have run during it", headline(run))
}
