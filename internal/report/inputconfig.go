package report

import (
	"maps"
	"slices"
	"strings"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// ExtensionKey holds our own options in input_config: the flat profile,
// with our option names, which AIPerf's readers ignore.
const ExtensionKey = "aiperf_go"

// inputConfig is profile_export_aiperf.json's input_config: the body of
// AIPerf's benchmark configuration (schema 2.0: models, endpoint, datasets,
// phases, tokenizer, slos, with AIPerf's key names, the shape `aiperf
// profile --config` reads) for what we ran, then our flat profile under
// ExtensionKey. p is redacted by the caller.
func inputConfig(p plan.Profile) object {
	models := make([]object, len(p.Model))
	for i, m := range p.Model {
		models[i] = object{{"name", m}}
	}
	cfg := object{
		{"models", object{{"items", models}}},
		{"endpoint", endpointConfig(p)},
		{"datasets", []object{datasetConfig(p)}},
		{"phases", phasesConfig(p)},
	}
	if p.Tokenizer != "" {
		cfg = append(cfg, field{"tokenizer", object{{"name", p.Tokenizer}}})
	}
	if slos, err := plan.ParseGoodput(p.Goodput); err == nil && len(slos) > 0 {
		o := make(object, len(slos))
		for i, s := range slos {
			o[i] = field{s.Tag, s.Value}
		}
		cfg = append(cfg, field{"slos", o})
	}
	return append(cfg, field{ExtensionKey, p})
}

func endpointConfig(p plan.Profile) object {
	e := object{{"urls", nonNil(p.URL)}, {"type", p.EndpointType}}
	if p.Endpoint != "" {
		e = append(e, field{"path", p.Endpoint})
	}
	e = append(e, field{"streaming", p.Streaming})
	if p.APIKey != "" {
		e = append(e, field{"api_key", p.APIKey})
	}
	if len(p.Header) > 0 {
		h := object{}
		for _, kv := range plan.ExpandHeaders(p.Header) {
			k, v, _ := strings.Cut(kv, ":")
			h = append(h, field{strings.TrimSpace(k), strings.TrimSpace(v)})
		}
		e = append(e, field{"headers", h})
	}
	e = append(e, field{"timeout", p.RequestTimeoutSeconds})
	extra := object{}
	for _, s := range p.ExtraInputs {
		m, err := plan.ParseExtraInput(s)
		if err != nil {
			continue // refused before the run; never reached
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			extra = append(extra, field{k, m[k]})
		}
	}
	if len(extra) > 0 {
		e = append(e, field{"extra", extra})
	}
	return e
}

func datasetConfig(p plan.Profile) object {
	if p.InputFile != "" || p.PublicDataset != "" {
		d := object{{"name", "default"}, {"type", "file"}, {"path", p.InputFile}}
		if p.CustomDatasetType != "" {
			d = append(d, field{"format", p.CustomDatasetType})
		}
		if p.PublicDataset != "" {
			d = append(d, field{"format", p.PublicDataset})
		}
		return d
	}
	prompts := object{{"isl", object{{"mean", p.SyntheticInputTokensMean}, {"stddev", p.SyntheticInputTokensStddev}}}}
	if p.OutputTokensMean != nil {
		prompts = append(prompts, field{"osl", object{{"mean", *p.OutputTokensMean}, {"stddev", p.OutputTokensStddev}}})
	}
	return object{{"name", "default"}, {"type", "synthetic"}, {"entries", p.NumDatasetEntries}, {"prompts", prompts}}
}

// phasesConfig lists the phases run, AIPerf's phase type being the load
// mode: fixed_schedule (a replayed trace, with its offsets), concurrency,
// or the arrival pattern of a rate (constant, poisson, gamma); each with
// its stop conditions (requests, duration, sessions) as AIPerf's phase
// config names them.
func phasesConfig(p plan.Profile) []object {
	list := p.PhaseList()
	out := make([]object, len(list))
	for i, ph := range list {
		o := object{{"name", ph.Name}, {"kind", ph.Kind}, {"type", phaseType(ph)}}
		if ph.Fixed {
			o = append(o, fixedFields(p)...)
		}
		if ph.Concurrency > 0 {
			o = append(o, field{"concurrency", ph.Concurrency})
		}
		if ph.Rate > 0 {
			o = append(o, field{"rate", ph.Rate})
		}
		if ph.Users > 0 {
			o = append(o, field{"users", ph.Users})
		}
		if ph.Requests > 0 {
			o = append(o, field{"requests", ph.Requests})
		}
		if ph.Duration > 0 {
			o = append(o, field{"duration", ph.Duration})
		}
		if ph.Sessions > 0 {
			o = append(o, field{"sessions", ph.Sessions})
		}
		if ph.GracePeriod >= 0 && ph.Duration > 0 { // < 0: wait for all, which JSON cannot say as a number
			o = append(o, field{"grace_period", ph.GracePeriod})
		}
		out[i] = o
	}
	return out
}

// phaseType is AIPerf's phase type of ph.
func phaseType(ph plan.Phase) string {
	switch {
	case ph.Fixed:
		return "fixed_schedule"
	case ph.Rate > 0 && ph.Users > 0:
		return "user_centric"
	case ph.Rate > 0:
		return ph.RateMode
	}
	return "concurrency"
}

// fixedFields are a fixed_schedule phase's own fields, from the
// --fixed-schedule-* options.
func fixedFields(p plan.Profile) object {
	o := object{{"auto_offset", p.FixedScheduleAutoOffset}}
	if p.FixedScheduleStartOffset != nil {
		o = append(o, field{"start_offset", *p.FixedScheduleStartOffset})
	}
	if p.FixedScheduleEndOffset != nil {
		o = append(o, field{"end_offset", *p.FixedScheduleEndOffset})
	}
	return o
}
