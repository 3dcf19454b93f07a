package config

import (
	"encoding/json"
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// keys lists a field's snake_case name and its aliases.
func keys(names ...string) []string { return names }

// topFields are the top-level keys besides the envelope's sweep:,
// multi_run: and variables: (envelope).
func (d *decoder) topFields() []field {
	return []field{
		{keys("schema_version"), d.schemaVersion},
		{keys("random_seed"), d.opt("random_seed")},
		{keys("benchmark"), d.section(d.benchmarkFields)},
	}
}

func (d *decoder) benchmarkFields() []field {
	return []field{
		{keys("model", "models"), d.opt("model")},
		{keys("endpoint"), d.section(d.endpointFields)},
		{keys("dataset"), d.section(d.datasetFields)},
		{keys("tokenizer"), d.opt("tokenizer")},
		{keys("phases"), d.phases},
		{keys("artifacts"), d.section(func() []field {
			return []field{{keys("dir"), into(d.str, &d.f.ArtifactDir)}, {keys("summary"), d.opt("summary_formats")}}
		})},
		{keys("random_seed"), d.opt("random_seed")},
	}
}

func (d *decoder) endpointFields() []field {
	return []field{
		{keys("url", "urls"), d.opt("url")},
		{keys("type"), d.opt("endpoint_type", plan.EndpointTypes...)},
		{keys("path"), d.opt("endpoint")},
		{keys("streaming"), d.opt("streaming")},
		{keys("api_key"), d.opt("api_key")},
		{keys("headers"), d.headers},
		{keys("timeout"), d.opt("request_timeout_seconds")},
		{keys("extra"), d.extra},
		{keys("server"), d.opt("server", "vllm", "sglang", "trtllm")},
		{keys("reset_kv_cache"), d.hook("reset_kv_cache", &d.f.Profile.ResetKVCache, []field{
			{keys("path"), d.opt("reset_kv_cache_path")},
			{keys("timeout_seconds"), d.opt("reset_kv_cache_timeout_seconds")},
			{keys("max_retry_seconds"), d.opt("reset_kv_cache_max_retry_seconds")},
		})},
		{keys("server_profiler"), d.hook("server_profiler", &d.f.Profile.ServerProfiler, []field{
			{keys("start_path"), d.opt("server_profiler_start_path")},
			{keys("stop_path"), d.opt("server_profiler_stop_path")},
			{keys("timeout_seconds"), d.opt("server_profiler_timeout_seconds")},
		})},
	}
}

func (d *decoder) datasetFields() []field {
	p := &d.f.Profile
	return []field{
		{keys("type"), func(path string, v *yaml.Node) {
			if s, ok := d.str(path, v); ok && s != "synthetic" {
				d.errorf(v, path, "dataset type %q is not supported yet: only synthetic", s)
			}
		}},
		{keys("entries"), d.opt("num_dataset_entries")},
		{keys("prompts"), d.section(func() []field {
			return []field{
				{keys("isl"), d.length("synthetic_input_tokens_mean", "synthetic_input_tokens_stddev",
					func(mean int) { p.SyntheticInputTokensMean = mean }, &p.SyntheticInputTokensStddev)},
				{keys("osl"), d.length("output_tokens_mean", "output_tokens_stddev",
					func(mean int) { p.OutputTokensMean = plan.Ptr(mean) }, &p.OutputTokensStddev)},
			}
		})},
	}
}

// section is the handler of a key whose value is an object with its own fields.
func (d *decoder) section(fs func() []field) func(string, *yaml.Node) {
	return func(path string, v *yaml.Node) {
		if d.mapping(v, path) {
			d.fields(v, path, fs())
		}
	}
}

func (d *decoder) schemaVersion(path string, v *yaml.Node) {
	if v.Kind != yaml.ScalarNode || (v.Value != "2.0" && v.Value != "2") {
		d.errorf(v, path, `expected "2.0", got %s`, d.describe(v))
	}
}

// hook handles endpoint.reset_kv_cache and endpoint.server_profiler: false or
// null (off), true (defaults) or an object of settings (on, as given).
func (d *decoder) hook(option string, enabled *bool, settings []field) func(string, *yaml.Node) {
	return func(path string, v *yaml.Node) {
		switch {
		case v.Kind == yaml.MappingNode:
			*enabled = true
		case v.Kind == yaml.ScalarNode && v.ShortTag() == tagNull:
			*enabled = false
		case v.Kind == yaml.ScalarNode && v.ShortTag() == tagBool && v.Decode(enabled) == nil:
		default:
			d.errorf(v, path, "expected false | true | object, got %s", d.describe(v))
			return
		}
		d.mark(option, v, path)
		if v.Kind == yaml.MappingNode {
			d.fields(v, path, settings)
		}
	}
}

// length handles prompts.isl / prompts.osl: a token count, or
// {type: normal, mean, stddev}.
func (d *decoder) length(meanOpt, stddevOpt string, setMean func(int), stddev *float64) func(string, *yaml.Node) {
	return func(path string, v *yaml.Node) {
		if v.Kind != yaml.MappingNode {
			if mean, ok := d.int(path, v); ok {
				setMean(mean)
				d.mark(meanOpt, v, path)
			}
			return
		}
		var mean *yaml.Node
		d.fields(v, path, []field{
			{keys("type"), func(path string, t *yaml.Node) { d.enum(path, t, "normal") }},
			{keys("mean"), func(path string, m *yaml.Node) {
				mean = m
				if n, ok := d.int(path, m); ok {
					setMean(n)
					d.mark(meanOpt, m, path)
				}
			}},
			{keys("stddev"), func(path string, s *yaml.Node) {
				if x, ok := d.float(path, s); ok {
					*stddev = x
					d.mark(stddevOpt, s, path)
				}
			}},
		})
		if mean == nil {
			d.errorf(v, path, "mean is required")
		}
	}
}

// headers reads endpoint.headers: an object {Name: value} or a list of
// "Name:value" strings. Values are never echoed in errors.
func (d *decoder) headers(path string, v *yaml.Node) {
	var hs []string
	switch v.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(v.Content); i += 2 {
			k, val := deref(v.Content[i]), deref(v.Content[i+1])
			name, ok := d.str(path, k)
			if !ok {
				return
			}
			if val.Kind != yaml.ScalarNode {
				d.errorf(val, join(path, name), "expected a header value, got %s", d.describe(val))
				return
			}
			hs = append(hs, name+":"+val.Value)
		}
	case yaml.SequenceNode:
		var ok bool
		if hs, ok = d.strings(path, v); !ok {
			return
		}
	default:
		d.errorf(v, path, "expected an object of headers or a list of \"Name:value\" strings, got %s", d.describe(v))
		return
	}
	d.f.Profile.Header = hs
	d.mark("header", v, path)
}

// extra reads endpoint.extra: an object of request-body fields (each becomes
// one JSON --extra-inputs value) or a list of --extra-inputs strings.
func (d *decoder) extra(path string, v *yaml.Node) {
	var out []string
	switch v.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(v.Content); i += 2 {
			k, val := deref(v.Content[i]), v.Content[i+1]
			name, ok := d.str(path, k)
			if !ok {
				return
			}
			var x any
			if err := val.Decode(&x); err != nil {
				d.errorf(val, join(path, name), "cannot read value: %v", err)
				return
			}
			b, err := json.Marshal(map[string]any{name: x})
			if err != nil {
				d.errorf(val, join(path, name), "cannot be sent as JSON: %v", err)
				return
			}
			out = append(out, string(b))
		}
	case yaml.SequenceNode:
		var ok bool
		if out, ok = d.strings(path, v); !ok {
			return
		}
	default:
		d.errorf(v, path, "expected an object of body fields or a list of \"key:value\" strings, got %s", d.describe(v))
		return
	}
	d.f.Profile.ExtraInputs = out
	d.mark("extra_inputs", v, path)
}

// phases reads benchmark.phases: one profiling phase as an object, or a list.
func (d *decoder) phases(path string, v *yaml.Node) {
	switch v.Kind {
	case yaml.MappingNode:
		d.f.Profile.Phases = []plan.Phase{d.phase(path, v, plan.KindProfiling)}
	case yaml.SequenceNode:
		if len(v.Content) == 0 {
			d.errorf(v, path, "expected at least one phase")
			return
		}
		phases := make([]plan.Phase, 0, len(v.Content))
		for i, item := range v.Content {
			at := fmt.Sprintf("%s[%d]", path, i)
			if item = deref(item); d.mapping(item, at) {
				phases = append(phases, d.phase(at, item, ""))
			}
		}
		d.f.Profile.Phases = phases
	default:
		d.errorf(v, path, "expected a phase object or a list of phases, got %s", d.describe(v))
		return
	}
	d.mark("phases", v, path)
}

// phase reads one phase. defaultName names a phase without a name ("" makes
// the name required).
func (d *decoder) phase(path string, v *yaml.Node, defaultName string) plan.Phase {
	ph := plan.Phase{Name: defaultName}
	var typ string
	var typNode, rateNode *yaml.Node
	var grace *float64
	d.fields(v, path, []field{
		{keys("name"), into(d.str, &ph.Name)},
		{keys("kind"), func(path string, n *yaml.Node) {
			ph.Kind, _ = d.enum(path, n, plan.KindWarmup, plan.KindProfiling)
		}},
		{keys("type"), func(path string, n *yaml.Node) {
			typNode = n
			typ, _ = d.enum(path, n, "concurrency", plan.RateConstant, plan.RatePoisson)
		}},
		{keys("concurrency"), into(d.int, &ph.Concurrency)},
		{keys("rate"), func(path string, n *yaml.Node) {
			rateNode = n
			ph.Rate, _ = d.float(path, n)
		}},
		{keys("requests", "request_count"), into(d.int, &ph.Requests)},
		{keys("duration"), into(d.float, &ph.Duration)},
		{keys("grace_period"), func(path string, n *yaml.Node) {
			if x, ok := d.float(path, n); ok {
				grace = &x
			}
		}},
		{keys("seamless"), into(d.bool, &ph.Seamless)},
	})
	if ph.Name == "" {
		d.errorf(v, path, "name is required")
	}
	if ph.Kind == "" {
		ph.Kind = plan.KindProfiling
		if ph.Name == plan.KindWarmup {
			ph.Kind = plan.KindWarmup
		}
	}
	switch {
	case typ == "" && rateNode != nil:
		ph.RateMode = plan.RatePoisson
	case typ == "concurrency" && rateNode != nil:
		d.errorf(rateNode, join(path, "rate"), "is not used by type concurrency: use type constant or poisson")
	case (typ == plan.RateConstant || typ == plan.RatePoisson) && rateNode == nil:
		d.errorf(typNode, join(path, "type"), "%s needs a rate", typ)
	case typ == plan.RateConstant || typ == plan.RatePoisson:
		ph.RateMode = typ
	}
	switch {
	case grace != nil:
		ph.GracePeriod = *grace
	case ph.Kind == plan.KindWarmup:
		ph.GracePeriod = -1 // wait for every warmup request, as the CLI's warmup phase does
	case ph.Duration > 0:
		ph.GracePeriod = plan.DefaultGracePeriod
	}
	return ph
}
