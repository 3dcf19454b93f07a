package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A cell that resets the KV cache before each trial keeps its warmup in
// every trial under WarmupFirstTrialOnly (the reset has emptied the cache
// the first trial's warmup filled); a cell without a reset in the same
// sweep still drops it after the first. Any reset setting counts.
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
			want := 2
			if tr.Cell.ID == "plain" && tr.Number > 1 {
				want = 1
			}
			assert.Len(t, tr.Cell.Profile.Phases, want, "%s: cell %s trial %d", order, tr.Cell.ID, tr.Number)
		}
	}
}
