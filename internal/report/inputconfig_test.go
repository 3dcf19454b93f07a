package report

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// A fixed-schedule run's phase is AIPerf's fixed_schedule with its
// offsets and no invented request count; a run bounded by sessions says
// so; a user-centric phase is user_centric with its users.
func TestPhasesConfigDescribesWhatRan(t *testing.T) {
	start := 100
	fixed := plan.Profile{InputFile: "mc.jsonl", CustomDatasetType: "mooncake_trace", FixedSchedule: true,
		FixedScheduleStartOffset: &start}
	assert.Equal(t, []object{{{"name", "profiling"}, {"kind", "profiling"}, {"type", "fixed_schedule"},
		{"auto_offset", false}, {"start_offset", 100}}}, phasesConfig(fixed))

	fifty := 50
	pool := plan.Profile{InputFile: "pool", CustomDatasetType: "random_pool", ConversationNum: &fifty}
	assert.Equal(t, []object{{{"name", "profiling"}, {"kind", "profiling"}, {"type", "concurrency"},
		{"concurrency", 1}, {"sessions", 50}}}, phasesConfig(pool))

	rate, users := 4.0, 2
	uc := plan.Profile{UserCentricRate: &rate, NumUsers: &users, RequestCount: &fifty}
	assert.Equal(t, []object{{{"name", "profiling"}, {"kind", "profiling"}, {"type", "user_centric"},
		{"rate", 4.0}, {"users", 2}, {"requests", 50}}}, phasesConfig(uc))
}
