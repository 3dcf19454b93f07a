package plan

import "fmt"

// MaxSmoothness bounds --arrival-smoothness: a gamma shape this large is a
// constant rate to within a tenth of a percent.
const MaxSmoothness = 1e6

// arrival checks the arrival pattern and its smoothness (AIPerf §3.1): the
// smoothness is a gamma shape > 0, turns the default pattern into gamma, and
// is refused with any other explicit pattern and outside a rate mode.
func (v *validator) arrival(p *Profile) {
	v.oneOf("request_rate_mode", p.RequestRateMode, RateConstant, RatePoisson, RateGamma)
	x := p.ArrivalSmoothness
	if x == nil || v.nonFinite["arrival_smoothness"] {
		return
	}
	v.check(*x > 0 && *x <= MaxSmoothness, "arrival_smoothness",
		fmt.Sprintf("must be a gamma shape in (0, %g], got %g", float64(MaxSmoothness), *x))
	v.check(p.RequestRateMode != RateConstant, "arrival_smoothness",
		"shapes gamma arrivals and cannot be used with --arrival-pattern constant: drop one of them")
	v.check(p.RequestRate != nil || p.WarmupRequestRate != nil || len(p.Phases) > 0, "arrival_smoothness",
		"needs --request-rate: it shapes the gaps between sends of a rate")
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
