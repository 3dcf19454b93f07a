package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A sweep with a cell that resets the KV cache before each trial keeps the
// warmup in every trial of every cell under WarmupFirstTrialOnly: the
// reset empties the cache the warmups filled, and trials of cells on one
// server alternate (a plain cell's trial 2 would otherwise measure the
// cache another cell's reset just emptied). A sweep without a reset still
// drops it after the first. Any reset setting counts.
func TestWarmupFirstTrialOnlyKeepsWarmupAfterReset(t *testing.T) {
	p := NewProfile()
	p.Model = []string{"m"}
	p.Phases = []Phase{{Name: "warmup", Kind: KindWarmup, Concurrency: 1, Requests: 2},
		{Name: "profiling", Kind: KindProfiling, Concurrency: 4, Requests: 8}}
	assert.False(t, p.ResetsCache())
	reset := p
	reset.ResetKVCache = true
	path, timeout := p, p
	path.ResetKVCachePath = []string{"/flush_cache"}
	timeout.ResetKVCacheTimeoutSeconds = Ptr(5.0)
	for _, r := range []Profile{reset, path, timeout} {
		assert.True(t, r.ResetsCache())
	}
	for _, order := range []string{OrderRepeated, OrderIndependent} {
		sw := Sweep{Name: "s", Trials: 3, Order: order, WarmupFirstTrialOnly: true,
			Cells: []Cell{{ID: "reset", Profile: reset}, {ID: "path", Profile: path}, {ID: "plain", Profile: p}}}
		for _, tr := range sw.TrialList() {
			assert.Len(t, tr.Cell.Profile.Phases, 2, "%s: cell %s trial %d", order, tr.Cell.ID, tr.Number)
		}
		plain := Sweep{Name: "s", Trials: 3, Order: order, WarmupFirstTrialOnly: true, Cells: []Cell{{ID: "plain", Profile: p}}}
		for _, tr := range plain.TrialList() {
			want := 1 // profiling only
			if tr.Number == 1 {
				want = 2
			}
			assert.Len(t, tr.Cell.Profile.Phases, want, "%s: no reset, trial %d", order, tr.Number)
		}
	}
}

// TestResetKeepsWarmupNeedsAWarmup: the reset rule keeps a warmup only
// where there is one (a listed warmup phase or a warmup flag): a sweep
// resetting the KV cache with no warmup runs the same either way, and
// ResetKeepsWarmupNote would be false.
func TestResetKeepsWarmupNeedsAWarmup(t *testing.T) {
	cold := NewProfile()
	cold.Model = []string{"m"}
	cold.ResetKVCache = true
	cold.Phases = []Phase{{Name: "profiling", Kind: KindProfiling, Concurrency: 4, Requests: 8}}
	listed := cold
	listed.Phases = append([]Phase{{Name: "warmup", Kind: KindWarmup, Concurrency: 1, Requests: 2}}, cold.Phases...)
	flags := NewProfile()
	flags.Model, flags.ResetKVCache, flags.WarmupRequestCount = []string{"m"}, true, Ptr(3)
	plain := NewProfile()
	plain.Model = []string{"m"}
	assert.False(t, cold.HasWarmup())
	assert.False(t, plain.HasWarmup())
	assert.True(t, listed.HasWarmup())
	assert.True(t, flags.HasWarmup())
	sweep := func(trials int, profiles ...Profile) Sweep {
		sw := Sweep{Trials: trials, WarmupFirstTrialOnly: true}
		for _, p := range profiles {
			sw.Cells = append(sw.Cells, Cell{Profile: p})
		}
		return sw
	}
	assert.False(t, sweep(3, cold).ResetKeepsWarmup(), "a reset and no warmup")
	assert.False(t, sweep(3, cold, cold).ResetKeepsWarmup())
	assert.True(t, sweep(3, listed).ResetKeepsWarmup())
	assert.True(t, sweep(3, flags).ResetKeepsWarmup())
	withoutReset := listed
	withoutReset.ResetKVCache = false
	assert.True(t, sweep(3, cold, withoutReset).ResetKeepsWarmup(), "one cell's reset keeps another's warmup")
	assert.False(t, sweep(3, withoutReset).ResetKeepsWarmup(), "a warmup and no reset")
	assert.False(t, sweep(1, listed).ResetKeepsWarmup(), "one trial")
	all := sweep(3, listed)
	all.WarmupFirstTrialOnly = false
	assert.False(t, all.ResetKeepsWarmup(), "every trial warms up anyway")
}
