package config

import (
	"bytes"
	"fmt"
	"slices"

	"go.yaml.in/yaml/v3"
)

// Migrate rewrites a config file in an older shape of AIPerf's format
// (SchemaFlat, SchemaEnvelopeVariables, or scenario runs holding body
// keys) as schema 2.0, the way AIPerf's tools/migrate_config_yaml.py does:
// body keys under benchmark:, sweep.variables as sweep.parameters without
// the benchmark. prefix, each run's body keys under its benchmark:, and
// schemaVersion: "2.0" first. Comments are kept; ${VAR} and {{ }} are left
// as written. It returns the text, the schema data was in, and whether
// anything changed (a 2.0 file comes back as it was).
func Migrate(name string, data []byte) ([]byte, Schema, bool, error) {
	root, err := ReadTree(name, data)
	if err != nil {
		return nil, 0, false, err
	}
	if root.Kind != yaml.MappingNode {
		return nil, 0, false, &Error{File: name, Line: root.Line, Path: "(top level)", Msg: "expected an object"}
	}
	m := normalize(root)
	changed := m.schema != Schema20 || len(m.runs) > 0
	if dropExclude(child(root, "benchmark")) {
		changed = true
	}
	if runs := child(child(root, "sweep"), "runs"); runs != nil && runs.Kind == yaml.SequenceNode {
		for _, run := range runs.Content {
			changed = dropExclude(child(deref(run), "benchmark")) || changed
		}
	}
	if child(root, "schema_version") == nil {
		root.Content = slices.Insert(root.Content, 0, scalar("schemaVersion", 1),
			&yaml.Node{Kind: yaml.ScalarNode, Tag: tagStr, Value: "2.0", Style: yaml.DoubleQuotedStyle})
		if len(root.Content) > 2 { // the file's first comment stays first
			root.Content[0].HeadComment, root.Content[2].HeadComment = root.Content[2].HeadComment, ""
		}
		changed = true
	}
	if !changed {
		return data, m.schema, false, nil
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, 0, false, fmt.Errorf("write %s in the current shape: %w", name, err)
	}
	if err := enc.Close(); err != nil {
		return nil, 0, false, fmt.Errorf("write %s in the current shape: %w", name, err)
	}
	return b.Bytes(), m.schema, true, nil
}

// dropExclude replaces each phase's deprecated exclude_from_results with
// the kind it meant (when the phase's name does not already imply it).
func dropExclude(body *yaml.Node) bool {
	phases := child(body, "phases")
	if phases == nil {
		return false
	}
	list := phases.Content
	if phases.Kind == yaml.MappingNode {
		list = []*yaml.Node{phases}
	}
	changed := false
	for _, ph := range list {
		ph = deref(ph)
		if ph.Kind != yaml.MappingNode {
			continue
		}
		for i := 0; i+1 < len(ph.Content); i += 2 {
			if snake(ph.Content[i].Value) != "exclude_from_results" {
				continue
			}
			kind := "profiling"
			if ph.Content[i+1].Value == "true" {
				kind = "warmup"
			}
			name := child(ph, "name")
			keep := child(ph, "kind") != nil || name != nil && name.Value == kind
			ph.Content = slices.Delete(ph.Content, i, i+2)
			if !keep {
				ph.Content = slices.Insert(ph.Content, i, scalar("kind", ph.Line), scalar(kind, ph.Line))
			}
			changed = true
			break
		}
	}
	return changed
}
