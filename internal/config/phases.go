package config

import (
	"fmt"
	"math"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/aiperf-go/aiperf/internal/notbuilt"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// phaseTypes are AIPerf's phase types; user_centric is not supported yet
// in a phase list.
var phaseTypes = []string{"concurrency", plan.RatePoisson, plan.RateGamma, plan.RateConstant, "fixed_schedule", "user_centric"}

// phases reads benchmark.phases: one profiling phase as an object, or a list.
func (d *decoder) phases(path string, v *yaml.Node) {
	switch v.Kind {
	case yaml.MappingNode:
		d.f.Profile.Phases = []plan.Phase{d.phase(path, v, plan.KindProfiling)}
		d.markPhase(path, 0, v)
	case yaml.SequenceNode:
		if len(v.Content) == 0 {
			d.errorf(v, path, "expected at least one phase")
			return
		}
		phases := make([]plan.Phase, 0, len(v.Content))
		names := map[string]int{}
		for i, item := range v.Content {
			at := fmt.Sprintf("%s[%d]", path, i)
			if item = deref(item); !d.mapping(item, at) {
				continue
			}
			ph := d.phase(at, item, "")
			d.markPhase(path, i, item)
			if j, dup := names[strings.ToLower(ph.Name)]; dup && ph.Name != "" {
				d.errorf(item, at, "name %q is used by phases[%d] too (names are compared without case): rename one", ph.Name, j)
			}
			names[strings.ToLower(ph.Name)] = i
			phases = append(phases, ph)
		}
		d.f.Profile.Phases = phases
	default:
		d.errorf(v, path, "expected a phase object or a list of phases, got %s", d.describe(v))
		return
	}
	d.mark("phases", v, path)
}

// markPhase records where phase i sets each field, so that a range check
// on phases[i].FIELD names its value's line: in a sweep's variation, the
// line of the swept value rather than the body's.
func (d *decoder) markPhase(path string, i int, v *yaml.Node) {
	for j := 0; j+1 < len(v.Content); j += 2 {
		field := fmt.Sprintf("[%d].%s", i, snake(v.Content[j].Value))
		d.setAt["phases"+field] = Key{Path: path + field, Line: deref(v.Content[j+1]).Line}
	}
}

// phaseState is what a phase's fields say before they are combined.
type phaseState struct {
	ph                     plan.Phase
	typ                    string
	typNode, rateNode      *yaml.Node
	grace                  *float64
	concurrency, smoothing *yaml.Node
	excluded               *nodeAt // exclude_from_results
	prefillRamp            *nodeAt
	users                  *yaml.Node
}

// phase reads one phase. defaultName names a phase without a name ("" makes
// the name required).
func (d *decoder) phase(path string, v *yaml.Node, defaultName string) plan.Phase {
	s := &phaseState{ph: plan.Phase{Name: defaultName}}
	d.fields(v, path, d.phaseFields(s))
	ph := &s.ph
	switch {
	case ph.Name == "":
		d.errorf(v, path, "name is required")
	case !plan.PhaseNameOK(ph.Name):
		d.errorf(v, join(path, "name"), "%q is not a phase name: use letters, digits, _ and -, starting with a letter or _", ph.Name)
	}
	if ph.Kind == "" {
		ph.Kind = plan.KindProfiling
		if ph.Name == plan.KindWarmup {
			ph.Kind = plan.KindWarmup
		}
	}
	if s.excluded != nil {
		d.exclude(s.excluded, ph.Kind)
	}
	d.phaseType(path, s)
	d.unusedPrefillRamp(s)
	switch {
	case s.grace != nil:
		ph.GracePeriod = *s.grace
	case ph.Kind == plan.KindWarmup:
		ph.GracePeriod = -1 // wait for every warmup request, as the CLI's warmup phase does
	case ph.Duration > 0:
		ph.GracePeriod = plan.DefaultGracePeriod
	}
	return *ph
}

func (d *decoder) phaseFields(s *phaseState) []field {
	ph := &s.ph
	ramp := func(dst *float64) func(string, *yaml.Node) {
		return func(path string, n *yaml.Node) {
			if n.Kind == yaml.MappingNode {
				d.fields(n, path, []field{
					{keys("duration"), func(p string, x *yaml.Node) { *dst, _ = d.seconds(p, x, false) }},
					{keys("strategy"), d.notYetUnless("linear", "a ramp strategy other than linear", "")},
				})
				return
			}
			*dst, _ = d.seconds(path, n, false)
		}
	}
	return []field{
		{keys("name"), into(d.str, &ph.Name)},
		{keys("kind"), func(path string, n *yaml.Node) {
			ph.Kind, _ = d.enum(path, n, plan.KindWarmup, plan.KindProfiling)
		}},
		{keys("type"), func(path string, n *yaml.Node) {
			s.typNode = n
			s.typ, _ = d.enum(path, n, phaseTypes...)
		}},
		{keys("concurrency"), func(path string, n *yaml.Node) {
			s.concurrency = n
			ph.Concurrency, _ = d.int(path, n)
		}},
		{keys("rate"), func(path string, n *yaml.Node) {
			s.rateNode = n
			ph.Rate, _ = d.float(path, n)
		}},
		{keys("requests", "request_count"), into(d.int, &ph.Requests)},
		{keys("duration"), func(path string, n *yaml.Node) {
			if x, ok := d.seconds(path, n, true); ok && !math.IsInf(x, 1) {
				ph.Duration = x // inf: no time limit
			}
		}},
		{keys("sessions"), into(d.int, &ph.Sessions)},
		{keys("grace_period"), func(path string, n *yaml.Node) {
			if x, ok := d.seconds(path, n, true); ok {
				if math.IsInf(x, 1) {
					x = -1 // wait for every request
				}
				s.grace = &x
			}
		}},
		{keys("seamless"), into(d.bool, &ph.Seamless)},
		{keys("smoothness"), func(path string, n *yaml.Node) {
			s.smoothing = n
			ph.Smoothness, _ = d.float(path, n)
		}},
		{keys("prefill_concurrency"), into(d.int, &ph.PrefillConcurrency)},
		{keys("concurrency_ramp"), ramp(&ph.ConcurrencyRamp)},
		{keys("prefill_ramp"), func(path string, n *yaml.Node) {
			s.prefillRamp = &nodeAt{n, path}
			ramp(&ph.PrefillRamp)(path, n)
		}},
		{keys("rate_ramp"), ramp(&ph.RateRamp)},
		{keys("cancellation"), func(path string, n *yaml.Node) {
			if !d.mapping(n, path) {
				return
			}
			c := plan.Cancellation{}
			d.fields(n, path, []field{
				{keys("rate"), into(d.float, &c.Rate)},
				{keys("delay"), func(p string, x *yaml.Node) { c.Delay, _ = d.seconds(p, x, false) }},
			})
			ph.Cancellation = &c
		}},
		{keys("exclude_from_results"), func(path string, n *yaml.Node) { s.excluded = &nodeAt{n, path} }},
		{keys("dataset"), func(path string, n *yaml.Node) { d.phaseDatasets = append(d.phaseDatasets, nodeAt{n, path}) }},
		{keys("failed_request_threshold"), d.opt("failed_request_threshold")},
		{keys("auto_offset"), d.opt("fixed_schedule_auto_offset")},
		{keys("start_offset"), d.opt("fixed_schedule_start_offset")},
		{keys("end_offset"), d.opt("fixed_schedule_end_offset")},
		{keys("users"), func(_ string, n *yaml.Node) { s.users = n }},
		{keys("sla"), d.notYet("sla: (adaptive scale)", "")},
		{keys("adaptive_scale"), d.notYetUnless("false", "adaptive_scale: (single-run boundary discovery)", "use a sweep")},
		{keys("rate_series"), d.notYet("rate_series: (a piecewise request-rate schedule)", "use aiperf profile --request-rate-series FILE")},
		{keys("timing_mode"), d.notYet("timing_mode:", "")},
		{keys("trajectory_start_min_ratio"), d.notYet("agentic replay (trajectory_start_min_ratio)", notbuilt.Explain("--trajectory-start-min-ratio"))},
		{keys("trajectory_start_max_ratio"), d.notYet("agentic replay (trajectory_start_max_ratio)", notbuilt.Explain("--trajectory-start-max-ratio"))},
		{keys("burst_phase_starts"), d.notYetUnless("false", "agentic replay (burst_phase_starts)", notbuilt.Explain("--burst-phase-starts"))},
		{keys("system_idle_gap_cap_seconds"), d.notYet("agentic replay (system_idle_gap_cap_seconds)", notbuilt.Explain("--system-idle-gap-cap-seconds"))},
		{keys("agentic_cache_warmup_duration"), d.notYet("agentic replay (agentic_cache_warmup_duration)", notbuilt.Explain("--agentic-cache-warmup-duration"))},
		{keys("agentic_warmup_grace_period"), d.notYet("agentic replay (agentic_warmup_grace_period)", notbuilt.Explain("--agentic-warmup-grace-period"))},
	}
}

// unusedPrefillRamp drops, with a note, the prefill ramp of a phase with
// no prefill_concurrency: AIPerf ramps only a prefill cap, and starts no
// ramp without one (its timing's _build_prefill_concurrency_ramper), so
// the file runs there. A negative ramp is left for the range check.
func (d *decoder) unusedPrefillRamp(s *phaseState) {
	if s.prefillRamp == nil || s.ph.PrefillRamp <= 0 || s.ph.PrefillConcurrency != 0 {
		return
	}
	d.note(s.prefillRamp.n, s.prefillRamp.path, "ramps prefill_concurrency, which this phase does not set: ignored, as AIPerf does "+
		"(set prefill_concurrency to cap and ramp the requests in prefill, or remove it)")
	s.ph.PrefillRamp = 0
}

// exclude reads the deprecated exclude_from_results: AIPerf takes a
// phase's kind from it no more; one that agrees with the kind is noted,
// one that contradicts it refused.
func (d *decoder) exclude(at *nodeAt, kind string) {
	on, ok := d.bool(at.path, at.n)
	if !ok {
		return
	}
	if on != (kind == plan.KindWarmup) {
		want := plan.KindProfiling
		if on {
			want = plan.KindWarmup
		}
		d.errorf(at.n, at.path, "%v contradicts kind %s (the kind decides whether a phase counts): set kind: %s instead",
			on, kind, want)
		return
	}
	d.note(at.n, at.path, "is deprecated in AIPerf and changes nothing here (kind %s decides): remove it", kind)
}

// phaseType combines the phase's type with its rate and concurrency.
func (d *decoder) phaseType(path string, s *phaseState) {
	ph := &s.ph
	switch typ := s.typ; {
	case typ == "" && s.rateNode != nil:
		ph.RateMode = plan.RatePoisson
	case typ == "" || typ == "concurrency":
		if s.rateNode != nil {
			d.errorf(s.rateNode, join(path, "rate"), "is not used by type concurrency: use type constant, poisson or gamma")
		}
		if s.concurrency == nil && ph.Rate == 0 {
			ph.Concurrency = 1 // AIPerf's default
		}
	case typ == "user_centric":
		d.errorf(s.typNode, join(path, "type"), "user_centric phases in a config file are not supported yet: use aiperf profile --user-centric-rate and --num-users")
	case typ == "fixed_schedule":
		ph.Fixed = true
		d.f.Profile.FixedSchedule = true // the dataset is read with its timestamps
		if s.rateNode != nil {
			d.errorf(s.rateNode, join(path, "rate"), "is not used by a fixed_schedule phase: the trace's timestamps set the pace")
		}
	case s.rateNode == nil:
		d.errorf(s.typNode, join(path, "type"), "%s needs a rate", typ)
	default:
		ph.RateMode = typ
	}
	if s.users != nil && s.typ != "user_centric" {
		d.errorf(s.users, join(path, "users"), "users: (a user_centric phase in a config file) is not supported yet: "+
			"use aiperf profile --user-centric-rate and --num-users")
	}
	if s.smoothing != nil && ph.RateMode != plan.RateGamma {
		d.errorf(s.smoothing, join(path, "smoothness"), "applies only to type gamma")
	}
}
