package plan

import (
	"cmp"
	"fmt"
	"strings"
)

// MaxSmoothness bounds --arrival-smoothness: a gamma shape this large is a
// constant rate to within a tenth of a percent.
const MaxSmoothness = 1e6

// arrival checks the arrival pattern and its smoothness (AIPerf §3.1): a
// pattern is refused with --user-centric-rate; the smoothness is a gamma
// shape > 0, turns the default pattern into gamma, and is refused with any
// other explicit pattern and outside a rate mode.
func (v *validator) arrival(p *Profile) {
	v.oneOf("request_rate_mode", p.RequestRateMode, RateConstant, RatePoisson, RateGamma, RateConcurrencyBurst)
	v.rateSeries(p)
	v.check(p.RequestRateMode != RateConcurrencyBurst || p.RequestRate == nil && p.RequestRateSeries == "", "request_rate_mode",
		"concurrency_burst sends each request the instant a --concurrency slot is free and takes no --request-rate: "+
			"drop --request-rate, or pick constant, poisson or gamma")
	// As AIPerf: a pattern with --user-centric-rate is refused (the users
	// pace themselves); without any rate it is left unused, which bench
	// warns of (UnusedRateMode). The default, poisson, cannot be told from
	// an explicit one here.
	v.check(p.UserCentricRate == nil || p.RequestRateMode == RatePoisson, "request_rate_mode",
		fmt.Sprintf("%s cannot be used with --user-centric-rate, whose users pace their own turns: "+
			"drop --request-rate-mode", p.RequestRateMode))
	x := p.ArrivalSmoothness
	if x == nil || v.nonFinite["arrival_smoothness"] {
		return
	}
	v.check(*x > 0 && *x <= MaxSmoothness, "arrival_smoothness",
		fmt.Sprintf("must be a gamma shape in (0, %g], got %g", float64(MaxSmoothness), *x))
	v.check(p.RequestRateMode != RateConstant, "arrival_smoothness",
		"shapes gamma arrivals and cannot be used with --arrival-pattern constant: drop one of them")
	v.check(p.RequestRate != nil || p.RequestRateSeries != "" || p.WarmupRequestRate != nil || len(p.Phases) > 0, "arrival_smoothness",
		"needs --request-rate: it shapes the gaps between sends of a rate")
}

// rateSeries checks --request-rate-series: read (LoadRateSeries), its
// points sound, and instead of a fixed, user-centric or ramped rate.
func (v *validator) rateSeries(p *Profile) {
	if p.RequestRateSeries == "" {
		return
	}
	if len(p.RateSeries) == 0 {
		v.add("request_rate_series", "was not read (LoadRateSeries)")
	} else if err := CheckRateSeries(p.RateSeries); err != nil {
		v.add("request_rate_series", err.Error())
	}
	for _, c := range []struct {
		set  bool
		flag string
	}{{p.RequestRate != nil, "--request-rate"}, {p.UserCentricRate != nil, "--user-centric-rate"},
		{p.RequestRateRampDuration != nil, "--request-rate-ramp-duration"}, {p.FixedSchedule, "--fixed-schedule"},
		{len(p.Phases) > 0, "a config file's phases"}} {
		v.check(!c.set, "request_rate_series", "sets the rate over time and cannot be combined with "+c.flag+": drop one of them")
	}
}

// LoadRateSeries reads the --request-rate-series file into RateSeries,
// once: a sweep's trial gets the points with its profile.
func (p *Profile) LoadRateSeries() error {
	if p.RequestRateSeries == "" || len(p.RateSeries) > 0 {
		return nil
	}
	pts, err := ReadRateSeries(p.RequestRateSeries)
	if err != nil {
		return &FieldError{Field: "request_rate_series", Msg: err.Error()}
	}
	p.RateSeries = pts
	return nil
}

// phaseSmoothness checks a phase's gamma shape: only on a gamma phase, > 0.
func (v *validator) phaseSmoothness(field string, ph Phase) {
	switch {
	case ph.Smoothness == 0 || v.nonFinite[field]:
	case ph.RateMode != RateGamma || ph.Rate == 0:
		v.add(field, "applies only to a gamma rate phase")
	case ph.Smoothness < 0 || ph.Smoothness > MaxSmoothness:
		v.add(field, fmt.Sprintf("must be a gamma shape in (0, %g], got %g", float64(MaxSmoothness), ph.Smoothness))
	}
}

// failedRequestThreshold checks --failed-request-threshold: a ratio in [0, 1].
func (v *validator) failedRequestThreshold(p *Profile) {
	if x := p.FailedRequestThreshold; x != nil && !v.nonFinite["failed_request_threshold"] {
		v.check(*x >= 0 && *x <= 1, "failed_request_threshold",
			fmt.Sprintf("must be a ratio of failed to finished requests in [0, 1], got %g", *x))
	}
}

// waitForModel checks the readiness probe's options: a timeout of 0 or more
// (0: no probe), a mode, an interval > 0 that needs a timeout.
func (v *validator) waitForModel(p *Profile) {
	v.seconds("wait_for_model_timeout", p.WaitForModelTimeout, true)
	v.oneOf("wait_for_model_mode", p.WaitForModelMode, "", WaitModels, WaitInference, WaitBoth)
	v.seconds("wait_for_model_interval", p.WaitForModelInterval, false)
	v.check(p.WaitForModelInterval == nil || p.WaitForModelTimeout != nil || v.nonFinite["wait_for_model_interval"],
		"wait_for_model_interval", "needs --wait-for-model-timeout (the probe is off without it)")
}

// rampChecks checks the ramps, the warmup's own included: seconds > 0, the
// rate ramp with a rate, the concurrency ramp with a concurrency and the
// prefill ramp with a prefill cap to raise; only the prefill cap may be
// ramped on a fixed schedule.
func (v *validator) rampChecks(p *Profile) {
	anyRate := p.RequestRate != nil || p.WarmupRequestRate != nil || p.UserCentricRate != nil
	anyConcurrency := p.Concurrency != nil || p.WarmupConcurrency != nil
	anyPrefill := p.PrefillConcurrency != nil || p.WarmupPrefillConcurrency != nil
	for _, f := range []struct {
		name string
		x    *float64
		has  bool
		msg  string
	}{
		{"concurrency_ramp_duration", p.ConcurrencyRampDuration, anyConcurrency,
			"needs --concurrency: it ramps the concurrency from 1 up to it"},
		{"request_rate_ramp_duration", p.RequestRateRampDuration, anyRate,
			"needs --request-rate: it ramps the rate up to it"},
		{"prefill_concurrency_ramp_duration", p.PrefillConcurrencyRampDuration, anyPrefill,
			"needs --prefill-concurrency: it ramps the prefill cap from 1 up to it"},
		{"warmup_concurrency_ramp_duration", p.WarmupConcurrencyRampDuration, anyConcurrency,
			"needs --warmup-concurrency or --concurrency: it ramps the warmup's concurrency from 1 up to it"},
		{"warmup_request_rate_ramp_duration", p.WarmupRequestRateRampDuration, anyRate,
			"needs --warmup-request-rate or --request-rate: it ramps the warmup's rate up to it"},
		{"warmup_prefill_concurrency_ramp_duration", p.WarmupPrefillConcurrencyRampDuration, anyPrefill,
			"needs --warmup-prefill-concurrency or --prefill-concurrency: it ramps the warmup's prefill cap up to it"},
	} {
		v.seconds(f.name, f.x, false)
		switch {
		case f.x == nil || v.nonFinite[f.name]:
		case len(p.Phases) > 0:
			v.add(f.name, "cannot be applied to the phases the config file lists: set the ramp on a phase in the file")
		case p.FixedSchedule && !strings.Contains(f.name, "prefill"):
			v.add(f.name, "cannot ramp a fixed schedule (--fixed-schedule): the trace sets the load")
		case !f.has:
			v.add(f.name, f.msg)
		}
	}
}

// prefill checks --prefill-concurrency: a count, on a stream (it ends at
// the first token), at most --concurrency, on the flags' phases.
func (v *validator) prefill(p *Profile) {
	for _, f := range []struct {
		name    string
		n, conc *int
		flag    string
	}{{"prefill_concurrency", p.PrefillConcurrency, p.Concurrency, "--concurrency"},
		{"warmup_prefill_concurrency", p.WarmupPrefillConcurrency, cmp.Or(p.WarmupConcurrency, p.Concurrency), "the warmup's concurrency"}} {
		n := f.n
		if n == nil {
			continue
		}
		v.intRange(f.name, n, 1, MaxConcurrency)
		switch {
		case len(p.Phases) > 0:
			v.add(f.name, "cannot be applied to the phases the config file lists: set it on a phase in the file")
		case !p.Streaming:
			v.add(f.name, "needs --streaming: a request leaves prefill at its first streamed token")
		case f.conc != nil && *n > *f.conc:
			v.add(f.name, fmt.Sprintf("must be at most %s (%d), got %d", f.flag, *f.conc, *n))
		}
	}
}

// phaseRamps checks a phase's ramps: 0 or more seconds, the rate ramp on a
// rate phase only.
func (v *validator) phaseRamps(at func(string) string, ph Phase) {
	for _, f := range []struct {
		name string
		x    float64
	}{{"concurrency_ramp_duration", ph.ConcurrencyRamp}, {"request_rate_ramp_duration", ph.RateRamp},
		{"prefill_concurrency_ramp_duration", ph.PrefillRamp}} {
		if f.x != 0 && !v.nonFinite[at(f.name)] {
			v.seconds(at(f.name), &f.x, false)
		}
	}
	v.check(ph.RateRamp == 0 || ph.Rate > 0, at("request_rate_ramp_duration"), "applies only to a rate phase")
	v.check(ph.ConcurrencyRamp == 0 || !ph.Fixed, at("concurrency_ramp_duration"), "cannot ramp a fixed schedule")
	v.check(ph.PrefillRamp == 0 || ph.PrefillConcurrency > 0 || v.nonFinite[at("prefill_concurrency_ramp_duration")],
		at("prefill_concurrency_ramp_duration"), "needs the phase's prefill_concurrency")
	v.check(ph.PrefillConcurrency >= 0, at("prefill_concurrency"), "must not be negative")
	v.check(ph.Concurrency <= 0 || ph.PrefillConcurrency <= ph.Concurrency, at("prefill_concurrency"),
		fmt.Sprintf("must be at most the phase's concurrency (%d), got %d", ph.Concurrency, ph.PrefillConcurrency))
}

// capPolicy checks --cap-policy: it applies to a rate phase with a cap.
func (v *validator) capPolicy(p *Profile) {
	v.oneOf("cap_policy", p.CapPolicy, "", CapSkip, CapDelay)
	v.check(p.CapPolicy == "" || (p.RequestRate != nil || p.WarmupRequestRate != nil) &&
		(p.Concurrency != nil || p.WarmupConcurrency != nil) || len(p.Phases) > 0, "cap_policy",
		"needs --request-rate and --concurrency: it says what a send does when the rate finds the in-flight cap full")
}

// userCentric checks --user-centric-rate and --num-users (AIPerf §3.5):
// both or neither, a rate > 0 and users ≥ 1, multi-turn data, on the
// flags' phases and not on a fixed schedule.
func (v *validator) userCentric(p *Profile) {
	q, n := p.UserCentricRate, p.NumUsers
	if q == nil && n == nil || v.nonFinite["user_centric_rate"] {
		return
	}
	v.rate("user_centric_rate", q)
	v.intRange("num_users", n, 1, MaxConcurrency)
	switch {
	case q == nil:
		v.add("num_users", "needs --user-centric-rate: it is the user count of user-centric mode")
	case n == nil:
		v.add("user_centric_rate", "needs --num-users: the number of simulated users sharing the rate")
	case len(p.Phases) > 0:
		v.add("user_centric_rate", "cannot be applied to the phases the config file lists")
	case p.FixedSchedule:
		v.add("user_centric_rate", "cannot be used with a fixed schedule (--fixed-schedule): the trace sets the load")
	case p.InputFile == "" && p.ConversationTurnMean < 2:
		v.add("user_centric_rate", "needs multi-turn data: set --session-turns-mean to 2 or more (for single-turn work use --request-rate)")
	case p.RequestRateRampDuration != nil:
		v.add("request_rate_ramp_duration", "is not supported with --user-centric-rate yet: drop it")
	}
}

// UnusedRateMode says, when it is so, that p's explicit arrival pattern
// (constant or gamma) shapes no phase of phases: none has a rate (the
// pattern applies to a rate) and none is a fixed schedule. AIPerf then
// sends each request the instant a --concurrency slot is free
// (concurrency_burst) and so does aiperf, saying so. "" otherwise.
func (p *Profile) UnusedRateMode(phases []Phase) string {
	if p.RequestRateMode != RateConstant && p.RequestRateMode != RateGamma {
		return ""
	}
	for _, ph := range phases {
		if ph.Rate > 0 || ph.Fixed {
			return ""
		}
	}
	return fmt.Sprintf("--request-rate-mode %s shapes the gaps of a rate, and no phase has one: --concurrency sends each "+
		"request the instant a slot is free (concurrency_burst); add --request-rate to pace them", p.RequestRateMode)
}
