package config

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Schema is the version of AIPerf's configuration format a file is written
// in. Every one is read; the older ones are rewritten to 2.0 in memory
// first (as AIPerf's own loader does) and `aiperf config migrate` rewrites
// the file.
type Schema int

const (
	// Schema20 is AIPerf's current format, schemaVersion "2.0": the
	// benchmark body under benchmark:, the envelope keys (sweep:,
	// multi_run:, variables:, random_seed) beside it, sweep.parameters
	// naming paths inside the body, scenario runs overlaying
	// runs[i].benchmark (AIPerf's docs/tutorials/yaml-config.md and
	// sweeps.md from v0.7.0 on).
	Schema20 Schema = iota
	// SchemaEnvelopeVariables is the first envelope shape: the body under
	// benchmark:, but the sweep's paths under sweep.variables, rooted at
	// benchmark. (AIPerf's docs/tutorials/migrating-config.md, "After").
	SchemaEnvelopeVariables
	// SchemaFlat is the pre-envelope shape: the body's keys (models,
	// endpoint, datasets, phases, artifacts, ...) at the top level,
	// sweep.variables naming paths in them, scenario runs holding body
	// keys (AIPerf's sweeps.md before the envelope; migrating-config.md,
	// "Before").
	SchemaFlat
)

func (s Schema) String() string {
	switch s {
	case SchemaEnvelopeVariables:
		return "AIPerf's first envelope shape (before schema 2.0: sweep.variables rooted at benchmark.)"
	case SchemaFlat:
		return "AIPerf's pre-envelope flat shape (before schema 2.0: body keys at the top level, sweep.variables)"
	}
	return `AIPerf config schema 2.0 (its current format: schemaVersion "2.0", the body under benchmark:, sweep.parameters)`
}

// bodyKeys are the benchmark body's keys that the flat shape has at the
// top level (AIPerf's loader moves the same set), the warmup: and
// profiling: phase shorthands among them (AIPerf's
// _normalize_warmup_profiling_to_phases reads them wherever the body is;
// its dev/deploy/test-benchmark-config.yaml is such a flat file).
var bodyKeys = []string{"model", "models", "endpoint", "dataset", "datasets", "phases", "warmup", "profiling", "artifacts",
	"slos", "tokenizer", "gpu_telemetry", "server_metrics", "runtime", "logging", "metrics", "accuracy"}

// runKeys are the keys a 2.0 scenario run has; any other is a body key of
// the pre-envelope run shape.
var runKeys = []string{"name", "variables", "benchmark"}

// migration is what normalize changed, for notes and for `config migrate`.
type migration struct {
	schema    Schema
	movedBody []string // top-level body keys moved under benchmark:
	variables bool     // sweep.variables renamed parameters
	prefixed  int      // sweep paths whose benchmark. prefix was dropped
	runs      []int    // scenario runs whose body keys were wrapped under benchmark:
	datasetAs string   // the flat shape's singular dataset: became datasets: [{name: ...}]
}

// normalize rewrites root, in place, from an older shape into schema 2.0:
// the flat shape's body keys go under benchmark: (a singular dataset:
// becoming a one-entry datasets: list named main, as AIPerf's loader
// does), sweep.variables becomes sweep.parameters without the benchmark.
// prefix, and a scenario run's body keys go under its benchmark:. Nodes
// keep their lines and comments.
func normalize(root *yaml.Node) migration {
	var m migration
	if root.Kind != yaml.MappingNode {
		return m
	}
	var kept, moved []*yaml.Node
	at := -1 // where benchmark: goes: the first moved key's place
	for i := 0; i+1 < len(root.Content); i += 2 {
		k := root.Content[i]
		if slices.Contains(bodyKeys, snake(k.Value)) {
			if at < 0 {
				at = len(kept)
			}
			moved = append(moved, k, root.Content[i+1])
			m.movedBody = append(m.movedBody, k.Value)
			continue
		}
		kept = append(kept, k, root.Content[i+1])
	}
	if len(moved) > 0 {
		m.schema = SchemaFlat
		m.datasetAs = promoteDataset(moved)
		if body := child(&yaml.Node{Kind: yaml.MappingNode, Content: kept}, "benchmark"); body != nil && body.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(moved); i += 2 {
				if child(body, moved[i].Value) == nil {
					body.Content = append(body.Content, moved[i], moved[i+1])
				}
			}
		} else {
			key := &yaml.Node{Kind: yaml.ScalarNode, Tag: tagStr, Value: "benchmark", Line: moved[0].Line, Column: moved[0].Column}
			body := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: moved, Line: moved[0].Line, Column: moved[0].Column}
			kept = slices.Insert(kept, at, key, body)
		}
		root.Content = kept
	}
	if sweep := child(root, "sweep"); sweep != nil && sweep.Kind == yaml.MappingNode {
		m.sweep(sweep)
	}
	return m
}

// promoteDataset turns the flat shape's singular dataset: among the moved
// keys into datasets: [{name: main, ...}], as AIPerf's loader does; it
// returns the name, or "" when there was none.
func promoteDataset(moved []*yaml.Node) string {
	for i := 0; i+1 < len(moved); i += 2 {
		v := deref(moved[i+1])
		if snake(moved[i].Value) != "dataset" || v.Kind != yaml.MappingNode {
			continue
		}
		name := "main"
		if n := child(v, "name"); n != nil {
			name = n.Value
		} else {
			v.Content = append([]*yaml.Node{scalar("name", v.Line), scalar(name, v.Line)}, v.Content...)
		}
		moved[i] = &yaml.Node{Kind: yaml.ScalarNode, Tag: tagStr, Value: "datasets", Line: moved[i].Line,
			Column: moved[i].Column, HeadComment: moved[i].HeadComment, LineComment: moved[i].LineComment}
		moved[i+1] = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: []*yaml.Node{v}, Line: v.Line}
		return name
	}
	return ""
}

// sweep renames sweep.variables to parameters (dropping each path's
// benchmark. prefix) and wraps the body keys of scenario runs.
func (m *migration) sweep(sweep *yaml.Node) {
	for i := 0; i+1 < len(sweep.Content); i += 2 {
		k, v := sweep.Content[i], deref(sweep.Content[i+1])
		switch snake(k.Value) {
		case "variables":
			if child(sweep, "parameters") != nil {
				continue // both: reported by the decoder
			}
			m.variables = true
			if m.schema == Schema20 {
				m.schema = SchemaEnvelopeVariables
			}
			k.Value = "parameters"
			if v.Kind == yaml.MappingNode {
				for j := 0; j+1 < len(v.Content); j += 2 {
					if rest, ok := strings.CutPrefix(v.Content[j].Value, "benchmark."); ok {
						v.Content[j].Value = rest
						m.prefixed++
					}
				}
			}
		case "runs":
			if v.Kind != yaml.SequenceNode {
				continue
			}
			for j, run := range v.Content {
				if wrapRun(deref(run)) {
					m.runs = append(m.runs, j)
				}
			}
		}
	}
}

// wrapRun moves a scenario run's body keys under its benchmark:.
func wrapRun(run *yaml.Node) bool {
	if run.Kind != yaml.MappingNode {
		return false
	}
	var kept, body []*yaml.Node
	for i := 0; i+1 < len(run.Content); i += 2 {
		if slices.Contains(runKeys, snake(run.Content[i].Value)) {
			kept = append(kept, run.Content[i], run.Content[i+1])
			continue
		}
		body = append(body, run.Content[i], run.Content[i+1])
	}
	if len(body) == 0 {
		return false
	}
	if b := child(&yaml.Node{Kind: yaml.MappingNode, Content: kept}, "benchmark"); b != nil && b.Kind == yaml.MappingNode {
		b.Content = append(b.Content, body...)
	} else {
		kept = append(kept, scalar("benchmark", body[0].Line),
			&yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: body, Line: body[0].Line})
	}
	run.Content = kept
	return true
}

func scalar(v string, line int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tagStr, Value: v, Line: line}
}

// notes says what normalize read, and how to make it permanent.
func (m migration) notes(file string) []string {
	var out []string
	migrate := fmt.Sprintf("`aiperf config migrate %s` rewrites the file in the current shape", file)
	switch m.schema {
	case SchemaFlat:
		out = append(out, fmt.Sprintf("%s: read as %s; its top-level %s were read under benchmark:; %s",
			file, m.schema, strings.Join(m.movedBody, ", "), migrate))
		if m.datasetAs != "" {
			out = append(out, fmt.Sprintf("%s: its dataset: is named %q (sweep paths: datasets.%s.…), as AIPerf names it",
				file, m.datasetAs, m.datasetAs))
		}
	case SchemaEnvelopeVariables:
		out = append(out, fmt.Sprintf("%s: read as %s; sweep.variables was read as sweep.parameters; %s", file, m.schema, migrate))
	}
	if len(m.runs) > 0 {
		out = append(out, fmt.Sprintf("%s: sweep.runs %v hold body keys beside name: (the pre-envelope run shape); read as "+
			"runs[i].benchmark; %s", file, m.runs, migrate))
	}
	return out
}
