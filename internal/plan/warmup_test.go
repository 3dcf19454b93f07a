package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The warmup takes each load knob from its --warmup-* flag, else from the
// profiling phase, and one stop condition in AIPerf's order.
func TestWarmupPhase(t *testing.T) {
	for name, c := range map[string]struct {
		set  func(p *Profile)
		want Phase
	}{
		"inherits the profiling concurrency": {func(p *Profile) { p.Concurrency, p.WarmupRequestCount = Ptr(16), Ptr(5) },
			Phase{Concurrency: 16, Requests: 5}},
		"its own concurrency": {func(p *Profile) { p.Concurrency, p.WarmupRequestCount, p.WarmupConcurrency = Ptr(16), Ptr(5), Ptr(2) },
			Phase{Concurrency: 2, Requests: 5}},
		"its own rate and pattern": {func(p *Profile) {
			p.RequestRate, p.WarmupDuration, p.WarmupRequestRate, p.WarmupArrivalPattern = Ptr(10.0), Ptr(3.0), Ptr(2.0), RateConstant
		}, Phase{Rate: 2, RateMode: RateConstant, Duration: 3}},
		"a rate warmup before a concurrency profile": {func(p *Profile) { p.WarmupRequestCount, p.WarmupRequestRate = Ptr(4), Ptr(5.0) },
			Phase{Rate: 5, RateMode: RatePoisson, Requests: 4}},
		"count beats duration": {func(p *Profile) { p.WarmupRequestCount, p.WarmupDuration = Ptr(4), Ptr(9.0) },
			Phase{Concurrency: 1, Requests: 4}},
		"sessions beat duration": {func(p *Profile) { p.NumWarmupSessions, p.WarmupDuration = Ptr(3), Ptr(9.0) },
			Phase{Concurrency: 1, Sessions: 3}},
		"grace after a duration": {func(p *Profile) { p.WarmupDuration, p.WarmupGracePeriod = Ptr(9.0), Ptr(2.0) },
			Phase{Concurrency: 1, Duration: 9, GracePeriod: 2}},
	} {
		p := valid()
		c.set(&p)
		require.NoError(t, p.Check(), name)
		phases := p.PhaseList()
		require.Len(t, phases, 2, name)
		want := c.want
		want.Name, want.Kind = KindWarmup, KindWarmup
		if want.GracePeriod == 0 {
			want.GracePeriod = -1
		}
		assert.Equal(t, want, phases[0], name)
	}
}

// A warmup knob without a warmup, or a warmup grace period without a
// warmup duration, is refused.
func TestWarmupOptionsNeedAWarmup(t *testing.T) {
	p := valid()
	p.WarmupConcurrency = Ptr(4)
	assert.ErrorContains(t, p.Check(), "--warmup-concurrency needs a warmup")
	p = valid()
	p.WarmupRequestCount, p.WarmupGracePeriod = Ptr(4), Ptr(1.0)
	assert.ErrorContains(t, p.Check(), "--warmup-grace-period needs --warmup-duration")
}

// TestWarmupRamps: each warmup ramp is its --warmup-* flag, else the
// profiling one (AIPerf); the prefill cap ramps too.
func TestWarmupRamps(t *testing.T) {
	p := valid()
	p.Streaming = true
	p.Concurrency, p.PrefillConcurrency, p.WarmupRequestCount = Ptr(8), Ptr(4), Ptr(5)
	p.ConcurrencyRampDuration, p.PrefillConcurrencyRampDuration = Ptr(10.0), Ptr(6.0)
	require.NoError(t, p.Check())
	phases := p.PhaseList()
	require.Len(t, phases, 2)
	for _, ph := range phases {
		assert.Equal(t, 10.0, ph.ConcurrencyRamp, ph.Name)
		assert.Equal(t, 6.0, ph.PrefillRamp, ph.Name)
	}
	p.WarmupConcurrencyRampDuration, p.WarmupPrefillConcurrencyRampDuration = Ptr(2.0), Ptr(1.0)
	p.WarmupPrefillConcurrency = Ptr(2)
	require.NoError(t, p.Check())
	warm, prof := p.PhaseList()[0], p.PhaseList()[1]
	assert.Equal(t, 2.0, warm.ConcurrencyRamp)
	assert.Equal(t, 1.0, warm.PrefillRamp)
	assert.Equal(t, 2, warm.PrefillConcurrency)
	assert.Equal(t, 10.0, prof.ConcurrencyRamp, "the profiling phase keeps its own")
	assert.Equal(t, 4, prof.PrefillConcurrency)

	p.RequestRate, p.WarmupRequestRateRampDuration = Ptr(20.0), Ptr(3.0)
	require.NoError(t, p.Check())
	assert.Equal(t, 3.0, p.PhaseList()[0].RateRamp)
	assert.Zero(t, p.PhaseList()[1].RateRamp)

	assertRefused(t, map[string]refusal{
		"without a warmup": {func(p *Profile) { p.Concurrency, p.WarmupConcurrencyRampDuration = Ptr(4), Ptr(2.0) },
			"--warmup-concurrency-ramp-duration needs a warmup"},
		"prefill ramp without a cap": {func(p *Profile) { p.PrefillConcurrencyRampDuration = Ptr(2.0) },
			"--prefill-concurrency-ramp-duration needs --prefill-concurrency"},
		"zero": {func(p *Profile) {
			p.Streaming, p.PrefillConcurrency, p.PrefillConcurrencyRampDuration = true, Ptr(1), Ptr(0.0)
		}, "--prefill-concurrency-ramp-duration must be greater than 0, got 0"},
		"warmup prefill above its concurrency": {func(p *Profile) {
			p.Streaming, p.WarmupRequestCount, p.WarmupConcurrency, p.WarmupPrefillConcurrency = true, Ptr(2), Ptr(2), Ptr(3)
		}, "--warmup-prefill-concurrency must be at most the warmup's concurrency (2), got 3"},
	})
}

// WithoutWarmup drops listed warmup phases (the next phase then starts
// the run, never seamlessly) and the warmup flags; a sweep with
// WarmupFirstTrialOnly gives every cell's later trials that profile,
// in either order.
func TestWarmupFirstTrialOnly(t *testing.T) {
	p := NewProfile()
	p.Model = []string{"m"}
	p.Phases = []Phase{{Name: "warmup", Kind: KindWarmup, Concurrency: 1, Requests: 2},
		{Name: "profiling", Kind: KindProfiling, Concurrency: 4, Requests: 8, Seamless: true}}
	require.NoError(t, p.Check())
	w := p.WithoutWarmup()
	assert.Equal(t, []Phase{{Name: "profiling", Kind: KindProfiling, Concurrency: 4, Requests: 8}}, w.Phases)
	require.NoError(t, w.Check())
	assert.Len(t, p.Phases, 2, "the profile itself is left alone")

	flags := NewProfile()
	flags.WarmupRequestCount, flags.WarmupDuration = Ptr(5), Ptr(2.0)
	noWarmup := flags.WithoutWarmup()
	assert.Len(t, noWarmup.PhaseList(), 1)

	for _, order := range []string{OrderRepeated, OrderIndependent} {
		sw := Sweep{Name: "s", Trials: 3, Order: order, WarmupFirstTrialOnly: true,
			Cells: []Cell{{ID: "a", Profile: p}, {ID: "b", Profile: p}}}
		for _, tr := range sw.TrialList() {
			want := 1
			if tr.Number == 1 {
				want = 2
			}
			assert.Len(t, tr.Cell.Profile.Phases, want, "%s: cell %s trial %d", order, tr.Cell.ID, tr.Number)
		}
		sw.WarmupFirstTrialOnly = false
		for _, tr := range sw.TrialList() {
			assert.Len(t, tr.Cell.Profile.Phases, 2)
		}
	}
}
