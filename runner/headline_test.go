package runner

import (
	"testing"

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
