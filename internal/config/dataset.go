package config

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/aiperf-go/aiperf/internal/dataset"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// singleDataset reads dataset:, one dataset named default.
func (d *decoder) singleDataset(path string, v *yaml.Node) {
	d.mark("dataset", v, path)
	if d.mapping(v, path) {
		d.dataset(path, v, "default")
	}
}

// datasets reads datasets: a list of named datasets, or AIPerf's older
// {NAME: dataset} mapping, which must hold exactly one, as AIPerf's
// runtime does.
func (d *decoder) datasets(path string, v *yaml.Node) {
	d.mark("dataset", v, path)
	switch {
	case v.Kind == yaml.SequenceNode && len(v.Content) == 1:
		at := path + "[0]"
		if ds := deref(v.Content[0]); d.mapping(ds, at) {
			d.dataset(at, ds, "")
		}
	case v.Kind == yaml.MappingNode && len(v.Content) == 2 && child(v, "type") == nil:
		name := v.Content[0].Value
		if ds := deref(v.Content[1]); d.mapping(ds, join(path, name)) {
			d.dataset(join(path, name), ds, name)
		}
	case v.Kind == yaml.SequenceNode || v.Kind == yaml.MappingNode:
		d.errorf(v, path, "expected exactly one dataset (AIPerf runs one per benchmark): run a sweep or separate benchmarks for others")
	default:
		d.errorf(v, path, "expected a list of one named dataset, got %s", d.describe(v))
	}
}

// dataset reads one dataset; name is the one it has when it names none.
func (d *decoder) dataset(path string, v *yaml.Node, name string) {
	typ := "synthetic"
	if t := child(v, "type"); t != nil {
		if s, ok := d.enum(join(path, "type"), t, "synthetic", "file", "public"); ok {
			typ = s
		}
	}
	common := []field{
		{keys("name"), func(p string, n *yaml.Node) {
			if s, ok := d.str(p, n); ok {
				name = s
			}
		}},
		{keys("type"), func(string, *yaml.Node) {}},
		{keys("random_seed"), d.opt("random_seed")},
		{keys("sampling"), d.opt("dataset_sampling_strategy", "sequential", "random", "shuffle")},
		{keys("system_prompt"), d.opt("system_prompt")},
		{keys("system_prompt_file"), d.opt("system_prompt_file")},
	}
	switch typ {
	case "synthetic":
		d.fields(v, path, append(common, d.syntheticFields(path)...))
	case "file":
		d.fields(v, path, append(common, d.fileFields()...))
	case "public":
		d.fields(v, path, append(common,
			field{keys("name"), func(p string, n *yaml.Node) { // the public dataset's name, not a label
				d.opt("public_dataset", dataset.PublicDatasets...)(p, n)
			}},
			field{keys("path"), d.opt("input_file")},
		))
		if child(v, "path") == nil {
			d.errorf(v, path, "a public dataset needs path: the local file (nothing is downloaded)")
		}
	}
	d.datasetName = name
}

func (d *decoder) syntheticFields(path string) []field {
	p := &d.f.Profile
	return []field{
		{keys("entries"), d.opt("num_dataset_entries")},
		{keys("prompts"), d.section(d.promptFields)},
		{keys("isl"), d.isl()},
		{keys("osl"), d.osl()},
		{keys("prefix_prompts"), d.section(func() []field {
			return []field{
				{keys("pool_size"), d.opt("prompt_prefix_pool_size")},
				{keys("length"), d.opt("prompt_prefix_length")},
				{keys("shared_system_length"), d.opt("shared_system_prompt_length")},
				{keys("user_context_length"), d.opt("user_context_prompt_length")},
			}
		})},
		{keys("turns"), d.length("conversation_turn_mean", "conversation_turn_stddev", true,
			func(mean float64) { p.ConversationTurnMean = int(mean) },
			func(sd float64) { p.ConversationTurnStddev = int(sd) })},
		{keys("turn_delay"), d.length("conversation_turn_delay_mean", "conversation_turn_delay_stddev", false,
			func(mean float64) { p.ConversationTurnDelayMean = mean },
			func(sd float64) { p.ConversationTurnDelayStddev = sd })},
		{keys("turn_delay_ratio"), d.opt("conversation_turn_delay_ratio")},
		{keys("images"), d.imagesSection()},
		{keys("audio"), d.audioSection()},
		{keys("video"), d.videoSection()},
		{keys("rankings"), d.notYet("rankings: in a config file", "use aiperf profile's --rankings-* flags")},
		{keys("cache_bust"), d.cacheBust},
	}
}

func (d *decoder) promptFields() []field {
	return []field{
		{keys("isl"), d.isl()},
		{keys("osl"), d.osl()},
		{keys("batch_size"), d.opt("prompt_batch_size")},
		{keys("block_size"), d.opt("prompt_input_tokens_block_size")},
		{keys("sequence_distribution"), d.sequenceDistribution},
		{keys("cache_bust"), d.cacheBust},
		{keys("corpus"), d.opt("prompt_corpus", "sonnet", "coding", "random")},
		{keys("random_range_ratio"), d.rangeRatio},
		{keys("random_corpus_style"), d.opt("random_corpus_style", "vllm", "sglang")},
	}
}

func (d *decoder) isl() func(string, *yaml.Node) {
	p := &d.f.Profile
	return d.length("synthetic_input_tokens_mean", "synthetic_input_tokens_stddev", true,
		func(mean float64) { p.SyntheticInputTokensMean = int(mean) }, func(sd float64) { p.SyntheticInputTokensStddev = sd })
}

func (d *decoder) osl() func(string, *yaml.Node) {
	p := &d.f.Profile
	return d.length("output_tokens_mean", "output_tokens_stddev", true,
		func(mean float64) { p.OutputTokensMean = plan.Ptr(int(mean)) }, func(sd float64) { p.OutputTokensStddev = sd })
}

func (d *decoder) fileFields() []field {
	return []field{
		{keys("path"), d.opt("input_file")},
		{keys("format"), func(path string, n *yaml.Node) {
			if s, ok := d.str(path, n); ok && !slices.Contains(plan.CustomDatasetTypes, s) {
				d.errorf(n, path, "format %q is not a format: use %s", s, plan.CustomDatasetTypesHelp())
				return
			}
			d.opt("custom_dataset_type")(path, n)
		}},
		{keys("records"), d.records},
		{keys("entries"), d.notYet("entries: on a file dataset (a limit on the records used)", "")},
		{keys("synthesis"), d.notYet("synthesis: (trace transformation)", "use aiperf profile --input-file with the --synthesis-* flags")},
		{keys("prompts"), d.notYet("prompts: on a file dataset", "")},
		{keys("trace_session_sample_ratio"), d.opt("trace_session_sample_ratio")},
		{keys("inter_turn_delay_cap_seconds"), d.opt("inter_turn_delay_cap_seconds")},
		{keys("max_idle_gap_cap_seconds"), d.opt("max_idle_gap_cap_seconds")},
		{keys("replay_speedup"), d.opt("replay_speedup")},
		{keys("open_loop_replay"), d.opt("open_loop_replay")},
		{keys("open_loop_strict"), d.opt("open_loop_strict")},
		{keys("omit_kv_hints"), d.opt("omit_kv_hints")},
		{keys("trace_idle_gap_cap_seconds"), d.opt("trace_idle_gap_cap_seconds")},
		{keys("ignore_trace_delays"), d.opt("ignore_trace_delays")},
		{keys("use_think_time_only"), d.opt("use_think_time_only")},
		{keys("weka_nested_timestamp_basis"), d.opt("weka_nested_timestamp_basis", "auto", "absolute", "relative")},
		{keys("max_context_length"), d.opt("max_context_length")},
		{keys("force_min_tokens"), d.opt("force_min_tokens")},
	}
}

// length reads a length: a number (an integer when integer), or {mean,
// stddev} with an optional type normal (or fixed, without stddev), as
// AIPerf's distributions.
func (d *decoder) length(meanOpt, stddevOpt string, integer bool, setMean, setStddev func(float64)) func(string, *yaml.Node) {
	number := func(path string, n *yaml.Node) (float64, bool) {
		if integer {
			i, ok := d.int(path, n)
			return float64(i), ok
		}
		return d.float(path, n)
	}
	return func(path string, v *yaml.Node) {
		if v.Kind != yaml.MappingNode {
			if mean, ok := number(path, v); ok {
				setMean(mean)
				d.mark(meanOpt, v, path)
			}
			return
		}
		var mean *yaml.Node
		typ := "normal"
		d.fields(v, path, []field{
			{keys("type"), func(path string, t *yaml.Node) {
				s, ok := d.str(path, t)
				switch {
				case !ok:
				case s == "normal" || s == "fixed":
					typ = s
				case s == "lognormal" || s == "multimodal" || s == "empirical":
					d.errorf(t, path, "a %s distribution is not supported yet: use a number or {mean, stddev}", s)
				default:
					d.errorf(t, path, "expected normal | fixed, got %q", s)
				}
			}},
			{keys("mean", "value"), func(path string, m *yaml.Node) {
				mean = m
				if n, ok := number(path, m); ok {
					setMean(n)
					d.mark(meanOpt, m, path)
				}
			}},
			{keys("stddev"), func(path string, s *yaml.Node) {
				if x, ok := d.float(path, s); ok {
					if typ == "fixed" && x != 0 {
						d.errorf(s, path, "a fixed length has no stddev")
						return
					}
					setStddev(x)
					d.mark(stddevOpt, s, path)
				}
			}},
		})
		if mean == nil {
			d.errorf(v, path, "mean is required")
		}
	}
}

// checkPhaseDatasets checks each phase's dataset: against the file's one
// dataset (the pre-envelope shape names it on each phase).
func (d *decoder) checkPhaseDatasets() {
	for _, ref := range d.phaseDatasets {
		if s, ok := d.str(ref.path, ref.n); ok && s != d.datasetName {
			d.errorf(ref.n, ref.path, "names dataset %q, but the benchmark's one dataset is named %q", s, d.datasetName)
		}
	}
}

// records reads a file dataset's inline records: a list of records, each
// one line of the equivalent JSONL file.
func (d *decoder) records(path string, v *yaml.Node) {
	if v.Kind == yaml.MappingNode {
		d.errorf(v, path, "records: as {pool: [records]} (several random pools) is not supported yet: "+
			"write each pool to a JSONL file in one directory and give the directory as path:")
		return
	}
	if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
		d.errorf(v, path, "expected a list of records, got %s", d.describe(v))
		return
	}
	var b strings.Builder
	for i, item := range v.Content {
		at := fmt.Sprintf("%s[%d]", path, i)
		if item = deref(item); !d.mapping(item, at) {
			return
		}
		var x any
		if err := item.Decode(&x); err != nil {
			d.errorf(item, at, "cannot read the record: %v", err)
			return
		}
		line, err := json.Marshal(x)
		if err != nil {
			d.errorf(item, at, "cannot be written as JSON (keys must be strings): %v", err)
			return
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	d.f.Profile.InputRecords, d.f.Profile.InputFile = b.String(), plan.InlineRecords
	d.mark("input_file", v, path)
}

// rangeRatio reads prompts.random_range_ratio, a number or AIPerf's
// {input: R, output: R} object, into the flag's text form (the plan checks
// its values).
func (d *decoder) rangeRatio(path string, n *yaml.Node) {
	text := n.Value
	switch {
	case n.Kind == yaml.MappingNode:
		m := map[string]float64{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			x, ok := d.float(join(path, k.Value), v)
			if !ok {
				return
			}
			m[k.Value] = x
		}
		b, err := json.Marshal(m)
		if err != nil {
			d.errorf(n, path, "%v", err)
			return
		}
		text = string(b)
	case n.Kind == yaml.ScalarNode && (n.ShortTag() == tagInt || n.ShortTag() == tagFloat):
		if _, ok := d.float(path, n); !ok {
			return
		}
	default:
		if _, ok := d.str(path, n); !ok {
			return
		}
	}
	o, _ := plan.LookupOption("random_range_ratio")
	if err := o.Set(&d.f.Profile, text); err != nil {
		d.errorf(n, path, "%v", err)
		return
	}
	d.mark("random_range_ratio", n, path)
}
