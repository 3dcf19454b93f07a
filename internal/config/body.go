package config

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// topFields are the top-level keys: the body's, then the envelopeKeys
// (sweep:, multi_run:, variables:), which takeEnvelope has taken out
// before these are read, listed so that an unknown key's message names
// them among the valid ones.
func (d *decoder) topFields() []field {
	fs := []field{
		{keys("schema_version"), d.schemaVersion},
		{keys("random_seed"), d.opt("random_seed")},
		{keys("benchmark"), func(path string, v *yaml.Node) {
			if d.body.flat {
				path = "" // the user wrote these keys at the top level
			}
			if d.mapping(v, path) {
				d.fields(v, path, d.benchmarkFields())
			}
		}},
		{keys("plot"), d.notYet("plot: (figures drawn from the config)", "run aiperf plot after the run, or aiperf profile --auto-plot")},
		{keys("no_sweep_table"), d.notYetUnless("false", "no_sweep_table: true", "use aiperf profile --no-sweep-table")},
	}
	for _, ek := range envelopeKeys {
		fs = append(fs, field{keys(ek.name), func(string, *yaml.Node) {}}) // read by takeEnvelope
	}
	return fs
}

// decodeTop decodes a (rendered) top level into d.f.Profile and applies
// multi_run's seed default.
func (d *decoder) decodeTop(root *yaml.Node) {
	d.fields(root, "", d.topFields())
	d.checkPhaseDatasets()
	d.serverMetricsDefaults()
	if _, set := d.setAt["random_seed"]; d.body.seed42 && !set {
		d.f.Profile.RandomSeed = 42 // AIPerf's set_consistent_seed
	}
}

func (d *decoder) schemaVersion(path string, v *yaml.Node) {
	if v.Kind != yaml.ScalarNode || (v.Value != "2.0" && v.Value != "2") {
		d.errorf(v, path, `expected "2.0" (AIPerf's current schema), got %s`, d.describe(v))
	}
}

func (d *decoder) benchmarkFields() []field {
	return append([]field{
		{keys("model", "models"), d.models},
		{keys("endpoint"), d.endpoint},
		{keys("dataset"), d.singleDataset},
		{keys("datasets"), d.datasets},
		{keys("tokenizer"), d.tokenizer},
		{keys("phases"), d.phases},
		{keys("warmup"), d.shorthandPhase(plan.KindWarmup)},
		{keys("profiling"), d.shorthandPhase(plan.KindProfiling)},
		{keys("artifacts"), d.section(d.artifactsFields)},
		{keys("slos"), d.slos},
		{keys("gpu_telemetry"), d.telemetry("gpu_telemetry", d.gpuTelemetryFields)},
		{keys("server_metrics"), d.telemetry("server_metrics", d.serverMetricsFields)},
		{keys("otel"), d.section(d.otelFields)},
		{keys("mlflow"), d.section(d.mlflowFields)},
		{keys("runtime"), d.section(d.runtimeFields)},
		{keys("random_seed"), d.opt("random_seed")},
	}, d.notYetFields()...)
}

// models reads model: or models:: a name, a list of names, or AIPerf's
// {strategy, items: [{name}]}.
func (d *decoder) models(path string, v *yaml.Node) {
	if v.Kind != yaml.MappingNode {
		d.opt("model")(path, v)
		return
	}
	var names []string
	d.fields(v, path, []field{
		{keys("strategy"), func(path string, n *yaml.Node) {
			if n.Kind == yaml.ScalarNode && n.Value == "weighted" {
				d.errorf(n, path, "weighted (a weight per model) is not supported yet: use round_robin or random")
				return
			}
			d.opt("model_selection_strategy", plan.ModelRoundRobin, plan.ModelRandom)(path, n)
		}},
		{keys("items"), func(path string, items *yaml.Node) {
			if items.Kind != yaml.SequenceNode {
				d.errorf(items, path, "expected a list of {name: ...}, got %s", d.describe(items))
				return
			}
			for i, it := range items.Content {
				at := fmt.Sprintf("%s[%d]", path, i)
				if it = deref(it); it.Kind == yaml.ScalarNode {
					if s, ok := d.str(at, it); ok {
						names = append(names, s)
					}
					continue
				}
				if d.mapping(it, at) {
					d.fields(it, at, []field{
						{keys("name"), func(p string, n *yaml.Node) {
							if s, ok := d.str(p, n); ok {
								names = append(names, s)
							}
						}},
						{keys("weight"), d.notYet("model weights", "")},
					})
				}
			}
		}},
	})
	if len(names) > 0 {
		d.f.Profile.Model = names
		d.mark("model", v, path)
	}
}

// tokenizer reads tokenizer:: a name, or {name, revision}.
func (d *decoder) tokenizer(path string, v *yaml.Node) {
	if v.Kind != yaml.MappingNode {
		d.opt("tokenizer")(path, v)
		return
	}
	d.fields(v, path, []field{
		{keys("name"), d.opt("tokenizer")},
		{keys("revision"), d.opt("tokenizer_revision")},
		{keys("trust_remote_code"), d.notYetUnless("false", "trust_remote_code: true",
			"tokenizers are read from tokenizer.json files, no code is run")},
	})
}

func (d *decoder) artifactsFields() []field {
	p := &d.f.Profile
	level := func(want string) func(string, *yaml.Node) {
		return func(path string, v *yaml.Node) {
			if want == "summary" && v.Kind == yaml.SequenceNode { // records: [jsonl], the default
				if formats, ok := d.strings(path, v); ok && (len(formats) != 1 || formats[0] != "jsonl") {
					d.errorf(v, path, "expected [jsonl] or false, got %s", d.describe(v))
				}
				return
			}
			on, ok := d.bool(path, v)
			if want == "summary" { // records: false
				on = !on
			}
			if !ok || !on {
				return
			}
			if p.ExportLevel != "" {
				d.errorf(v, path, "conflicts with the export level %s set above", p.ExportLevel)
				return
			}
			p.ExportLevel = want
			d.mark("export_level", v, path)
		}
	}
	return []field{
		{keys("dir"), into(d.str, &d.f.ArtifactDir)},
		{keys("prefix"), d.opt("profile_export_prefix")},
		{keys("summary"), func(path string, v *yaml.Node) {
			if v.Kind == yaml.ScalarNode && v.ShortTag() == tagBool {
				d.notYetUnless("true", "summary: false", "the JSON summary is always written")(path, v)
				return
			}
			d.opt("summary_formats", "json", "csv")(path, v)
		}},
		{keys("records"), level("summary")},
		{keys("raw"), level("raw")},
		{keys("slice_duration"), func(path string, v *yaml.Node) {
			if x, ok := d.seconds(path, v, false); ok {
				p.SliceDuration = &x
				d.mark("slice_duration", v, path)
			}
		}},
		{keys("trace"), d.opt("export_http_trace")},             // --export-http-trace
		{keys("show_trace_timing"), d.opt("show_trace_timing")}, // --show-trace-timing
		{keys("user_files"), d.notYet("user_files:", "")},
		{keys("auto_plot"), d.notYetUnless("false", "auto_plot: true", "use aiperf profile --auto-plot")},
		{keys("plot_required"), d.notYetUnless("false", "plot_required: true", "use aiperf profile --auto-plot --plot-required")},
		{keys("export_outputs_json"), func(path string, v *yaml.Node) {
			if on, ok := d.bool(path, v); ok {
				p.ExportOutputsJSON = &on
				d.mark("export_outputs_json", v, path)
			}
		}},
	}
}

// slos reads slos: {metric tag: threshold}: AIPerf's goodput SLOs.
func (d *decoder) slos(path string, v *yaml.Node) {
	if !d.mapping(v, path) {
		return
	}
	var pairs []string
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := deref(v.Content[i]), deref(v.Content[i+1])
		x, ok := d.float(join(path, k.Value), val)
		if !ok {
			continue
		}
		pairs = append(pairs, k.Value+":"+strconv.FormatFloat(x, 'g', -1, 64))
	}
	goodput := strings.Join(pairs, " ")
	if _, err := plan.ParseGoodput(goodput); err != nil {
		d.errorf(v, path, "%v", err)
		return
	}
	d.f.Profile.Goodput = goodput
	d.mark("goodput", v, path)
}

// shorthandPhase reads the body's warmup: or profiling: shorthand: one
// phase of that name and kind, in that order, instead of phases:.
func (d *decoder) shorthandPhase(kind string) func(string, *yaml.Node) {
	return func(path string, v *yaml.Node) {
		if !d.mapping(v, path) {
			return
		}
		if at, dup := d.setAt["phases"]; dup && d.shorthand == 0 {
			d.errorf(v, path, "cannot be given with phases: (line %d): put the phase in that list", at.Line)
			return
		}
		ph := d.phase(path, v, kind)
		ph.Kind = kind
		if kind == plan.KindWarmup {
			d.f.Profile.Phases = append([]plan.Phase{ph}, d.f.Profile.Phases...)
		} else {
			d.f.Profile.Phases = append(d.f.Profile.Phases, ph)
		}
		d.shorthand++
		d.setAt["phases"] = Key{Line: v.Line} // no one path: the shorthands are phases of their own
	}
}
