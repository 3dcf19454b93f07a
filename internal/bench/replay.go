package bench

import (
	"github.com/aiperf-go/aiperf/internal/dataset"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// replayOptions maps the profile's trace-replay controls to the dataset's:
// seconds to ms, and the fixed schedule's speed-up the caps are scaled by.
func replayOptions(p plan.Profile) dataset.Replay {
	r := p.TraceReplay
	ms := func(s *float64) *float64 {
		if s == nil {
			return nil
		}
		return plan.Ptr(*s * 1000)
	}
	return dataset.Replay{
		SampleRatio:       derefOr(r.TraceSessionSampleRatio, 0),
		IdleGapCapMs:      ms(r.MaxIdleGapCapSeconds),
		TraceIdleGapCapMs: ms(r.TraceIdleGapCapSeconds),
		ClosedLoop:        !r.OpenLoop(),
		Strict:            r.OpenLoopStrict,
		Speedup:           derefOr(p.ReplaySpeedup, 0),
		ThinkTimeOnly:     r.UseThinkTimeOnly,
		MaxContext:        derefInt(r.MaxContextLength),
		OmitKVHints:       r.OmitKVHints,
		NoMinTokens:       !derefOr(r.ForceMinTokens, true),
	}
}
