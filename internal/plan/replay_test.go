package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The defaults of the trace-replay controls, spelled out, are accepted
// anywhere (AIPerf refuses a baseten-only knob only when it differs from
// its default); the other values need what they apply to.
func TestTraceReplayDefaultsAccepted(t *testing.T) {
	p := NewProfile()
	p.Model = []string{"m"}
	p.OpenLoopReplay, p.ForceMinTokens, p.AllowDatasetWrap = Ptr(true), Ptr(true), Ptr(false)
	require.NoError(t, p.Check())

	p.OpenLoopReplay = Ptr(false)
	assert.Equal(t, "--open-loop-replay false (--no-open-loop-replay) applies to a fixed schedule: needs --input-file with a trace (and no --no-fixed-schedule)",
		onlyError(t, p.Check(), "open_loop_replay"))
}
