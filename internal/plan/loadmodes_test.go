package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestArrivalSmoothness: --arrival-smoothness makes the default pattern
// gamma with that shape; gamma without it has shape 1; the warmup inherits
// the pattern and shape.
func TestArrivalSmoothness(t *testing.T) {
	for name, c := range map[string]struct {
		set        func(p *Profile)
		mode       string
		smoothness float64
	}{
		"smoothness implies gamma":  {func(p *Profile) { p.ArrivalSmoothness = Ptr(0.5) }, RateGamma, 0.5},
		"explicit gamma":            {func(p *Profile) { p.RequestRateMode, p.ArrivalSmoothness = RateGamma, Ptr(3.0) }, RateGamma, 3},
		"gamma defaults to shape 1": {func(p *Profile) { p.RequestRateMode = RateGamma }, RateGamma, 1},
		"poisson has no shape":      {func(p *Profile) {}, RatePoisson, 0},
	} {
		p := valid()
		p.RequestRate, p.WarmupRequestCount = Ptr(5.0), Ptr(3)
		c.set(&p)
		require.NoError(t, p.Check(), name)
		for _, ph := range p.PhaseList() {
			assert.Equal(t, c.mode, ph.RateMode, "%s: %s", name, ph.Name)
			assert.Equal(t, c.smoothness, ph.Smoothness, "%s: %s", name, ph.Name)
		}
	}
}

func TestArrivalSmoothnessRefused(t *testing.T) {
	assertRefused(t, map[string]refusal{
		"with constant": {func(p *Profile) {
			p.RequestRate, p.RequestRateMode, p.ArrivalSmoothness = Ptr(5.0), RateConstant, Ptr(2.0)
		},
			"--arrival-smoothness shapes gamma arrivals and cannot be used with --arrival-pattern constant"},
		"without a rate":           {func(p *Profile) { p.ArrivalSmoothness = Ptr(2.0) }, "--arrival-smoothness needs --request-rate"},
		"zero":                     {func(p *Profile) { p.RequestRate, p.ArrivalSmoothness = Ptr(5.0), Ptr(0.0) }, "--arrival-smoothness must be a gamma shape in (0, 1e+06], got 0"},
		"threshold above 1":        {func(p *Profile) { p.FailedRequestThreshold = Ptr(1.5) }, "--failed-request-threshold must be a ratio of failed to finished requests in [0, 1], got 1.5"},
		"negative threshold":       {func(p *Profile) { p.FailedRequestThreshold = Ptr(-0.1) }, "--failed-request-threshold must be a ratio"},
		"negative wait":            {func(p *Profile) { p.WaitForModelTimeout = Ptr(-1.0) }, "--wait-for-model-timeout must be 0 or more, got -1"},
		"zero interval":            {func(p *Profile) { p.WaitForModelTimeout, p.WaitForModelInterval = Ptr(5.0), Ptr(0.0) }, "--wait-for-model-interval must be greater than 0, got 0"},
		"interval without wait":    {func(p *Profile) { p.WaitForModelInterval = Ptr(1.0) }, "--wait-for-model-interval needs --wait-for-model-timeout"},
		"wait mode":                {func(p *Profile) { p.WaitForModelMode = "health" }, `--wait-for-model-mode must be one of models, inference, both, got "health"`},
		"ramp without concurrency": {func(p *Profile) { p.ConcurrencyRampDuration = Ptr(5.0) }, "--concurrency-ramp-duration needs --concurrency"},
		"rate ramp without rate":   {func(p *Profile) { p.Concurrency, p.RequestRateRampDuration = Ptr(4), Ptr(5.0) }, "--request-rate-ramp-duration needs --request-rate"},
		"zero ramp":                {func(p *Profile) { p.Concurrency, p.ConcurrencyRampDuration = Ptr(4), Ptr(0.0) }, "--concurrency-ramp-duration must be greater than 0, got 0"},
		"ramp a fixed schedule": {func(p *Profile) {
			p.FixedSchedule, p.InputFile, p.Concurrency, p.ConcurrencyRampDuration = true, "trace.jsonl", Ptr(4), Ptr(5.0)
		}, "--concurrency-ramp-duration cannot ramp a fixed schedule"},
		"rate ramp on a concurrency phase": {func(p *Profile) {
			p.Phases = []Phase{{Name: "p", Kind: KindProfiling, Concurrency: 2, RateRamp: 3, Requests: 3}}
		}, "phases[0].request_rate_ramp_duration applies only to a rate phase"},
		"prefill without streaming": {func(p *Profile) { p.Streaming, p.Concurrency, p.PrefillConcurrency = false, Ptr(4), Ptr(2) },
			"--prefill-concurrency needs --streaming"},
		"prefill above concurrency": {func(p *Profile) { p.Streaming, p.Concurrency, p.PrefillConcurrency = true, Ptr(4), Ptr(5) },
			"--prefill-concurrency must be at most --concurrency (4), got 5"},
		"prefill zero": {func(p *Profile) { p.Streaming, p.PrefillConcurrency = true, Ptr(0) }, "--prefill-concurrency must be at least 1, got 0"},
		"phase shape on poisson": {func(p *Profile) {
			p.Phases = []Phase{{Name: "p", Kind: KindProfiling, Rate: 5, RateMode: RatePoisson, Smoothness: 2, Requests: 3}}
		}, "phases[0].smoothness applies only to a gamma rate phase"},
	})
}

// refusal is a change to a valid profile and the problem Check must report.
type refusal struct {
	set  func(p *Profile)
	want string
}

// assertRefused applies each change to a valid profile and checks that
// Check refuses it with the expected message.
func assertRefused(t *testing.T, cases map[string]refusal) {
	t.Helper()
	for name, c := range cases {
		p := valid()
		c.set(&p)
		err := p.Check()
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), c.want, name)
	}
}

// TestRamps: the ramps go to the phases that have something to ramp, the
// warmup included (AIPerf's fallback to the profiling ramps).
func TestRamps(t *testing.T) {
	p := valid()
	p.Concurrency, p.RequestRate, p.WarmupRequestCount = Ptr(8), Ptr(20.0), Ptr(4)
	p.ConcurrencyRampDuration, p.RequestRateRampDuration = Ptr(30.0), Ptr(10.0)
	require.NoError(t, p.Check())
	for _, ph := range p.PhaseList() {
		assert.Equal(t, 30.0, ph.ConcurrencyRamp, ph.Name)
		assert.Equal(t, 10.0, ph.RateRamp, ph.Name)
	}
	p = valid()
	p.Concurrency, p.ConcurrencyRampDuration, p.WarmupRequestCount, p.WarmupConcurrency = Ptr(8), Ptr(30.0), Ptr(4), Ptr(1)
	require.NoError(t, p.Check())
	phases := p.PhaseList()
	assert.Zero(t, phases[0].ConcurrencyRamp, "a warmup of concurrency 1 has nothing to ramp")
	assert.Zero(t, phases[0].RateRamp)
	assert.Equal(t, 30.0, phases[1].ConcurrencyRamp)
}

// TestPrefillConcurrencyPhases: the prefill cap goes to both phases, within
// each one's concurrency.
func TestPrefillConcurrencyPhases(t *testing.T) {
	p := valid()
	p.Streaming, p.Concurrency, p.PrefillConcurrency = true, Ptr(8), Ptr(4)
	p.WarmupRequestCount, p.WarmupConcurrency = Ptr(4), Ptr(2)
	require.NoError(t, p.Check())
	phases := p.PhaseList()
	assert.Equal(t, 2, phases[0].PrefillConcurrency, "the warmup's, within its concurrency")
	assert.Equal(t, 4, phases[1].PrefillConcurrency)
}

// An arrival pattern without a rate is AIPerf's concurrency_burst: not
// refused (AIPerf accepts --concurrency 3 --arrival-pattern constant), but
// warned of; with --user-centric-rate it is refused, as AIPerf refuses it.
func TestArrivalPatternWithoutARate(t *testing.T) {
	for _, mode := range []string{RateConstant, RateGamma} {
		p := valid()
		p.Concurrency, p.RequestRateMode = Ptr(3), mode
		require.NoError(t, p.Check(), mode)
		w := p.UnusedRateMode([]Phase{{Name: "profiling", Kind: KindProfiling, Concurrency: 3, Requests: 6}})
		assert.Contains(t, w, "--request-rate-mode "+mode+" shapes the gaps of a rate, and no phase has one")
		assert.Empty(t, p.UnusedRateMode([]Phase{{Name: "profiling", Kind: KindProfiling, Fixed: true}}), "a fixed schedule")
		assert.Empty(t, p.UnusedRateMode([]Phase{{Name: "profiling", Kind: KindProfiling, Rate: 5}}), "a rate")

		p.UserCentricRate = Ptr(2.0)
		err := p.Check()
		require.Error(t, err, mode)
		assert.Contains(t, err.Error(), "--request-rate-mode "+mode+" cannot be used with --user-centric-rate")
		assert.NotContains(t, err.Error(), "--request-rate-mode --request-rate-mode")
	}
	for _, mode := range []string{RatePoisson, RateConcurrencyBurst} {
		p := valid()
		p.Concurrency, p.RequestRateMode = Ptr(3), mode
		assert.Empty(t, p.UnusedRateMode([]Phase{{Name: "profiling", Kind: KindProfiling, Concurrency: 3}}), mode)
	}
}
