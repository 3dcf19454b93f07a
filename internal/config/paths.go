package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// phaseSugar are the bare sweep parameter names that stand for a field of
// the profiling phase (phases.profiling.NAME), as AIPerf accepts them.
var phaseSugar = []string{"concurrency", "prefill_concurrency", "rate", "requests", "duration", "sessions", "users",
	"smoothness", "grace_period", "concurrency_ramp", "prefill_ramp", "rate_ramp"}

// canonical is a sweep path with bare-name sugar expanded.
func canonical(path string) string {
	if !strings.Contains(path, ".") && slices.Contains(phaseSugar, snake(path)) {
		return "phases." + plan.KindProfiling + "." + path
	}
	return path
}

// setPath sets the value at a sweep parameter path of the benchmark body:
// a bare phase field (concurrency, rate, ...), phases.SELECTOR.FIELD
// (SELECTOR an index, a phase name, or "profiling" for the one profiling
// phase; warmup or profiling for the body's warmup: or profiling:
// shorthand), datasets.NAME.… or dataset.… for the body's one dataset, or
// any other dotted path of mapping keys (created when missing).
func setPath(body *yaml.Node, path string, val *yaml.Node, origin map[*yaml.Node]string) error {
	parts := strings.Split(canonical(path), ".")
	n := body
	switch snake(parts[0]) {
	case "phases":
		if len(parts) < 3 {
			return fmt.Errorf("want phases.PHASE.FIELD")
		}
		ph, err := phaseNode(child(body, "phases"), parts[1])
		if child(body, "phases") == nil {
			ph, err = shorthandPhase(body, parts[1])
		}
		if err != nil {
			return err
		}
		n, parts = ph, parts[2:]
	case "datasets":
		if len(parts) < 3 {
			return fmt.Errorf("want datasets.NAME.FIELD")
		}
		ds, err := datasetNode(body, parts[1])
		if err != nil {
			return err
		}
		n, parts = ds, parts[2:]
	case "dataset":
		if len(parts) < 2 {
			return fmt.Errorf("want dataset.FIELD")
		}
		ds, err := datasetNode(body, "")
		if err != nil {
			return err
		}
		n, parts = ds, parts[1:]
	}
	for _, p := range parts[:len(parts)-1] {
		next := child(n, p)
		if next == nil {
			next = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: n.Line}
			setChild(n, p, next)
		}
		if next.Kind != yaml.MappingNode {
			return fmt.Errorf("%s is not a mapping", p)
		}
		n = next
	}
	setChild(n, parts[len(parts)-1], clone(val, origin))
	return nil
}

// flatPhaseNames are the names a flat phases: mapping (one phase) goes by
// when it has no name: of its own: AIPerf's loader names it profiling, and
// its earlier loader default (_benchmark_normalizers.py), so a sweep path
// may say phases.default.concurrency.
var flatPhaseNames = []string{plan.KindProfiling, "default"}

// phaseNode picks a phase of the phases: value by index, then by name,
// then "profiling" for its one profiling-kind phase (a flat mapping is
// that phase, also named default), as AIPerf resolves sweep paths.
func phaseNode(phases *yaml.Node, sel string) (*yaml.Node, error) {
	switch {
	case phases == nil:
		return nil, fmt.Errorf("the benchmark has no phases")
	case phases.Kind == yaml.MappingNode:
		names := flatPhaseNames
		if n := child(phases, "name"); n != nil {
			names = slices.Compact([]string{n.Value, plan.KindProfiling})
		}
		if !slices.Contains(names, sel) && sel != "0" {
			return nil, fmt.Errorf("the benchmark has one phase, %s, not %q", strings.Join(names, " or "), sel)
		}
		return phases, nil
	case phases.Kind != yaml.SequenceNode:
		return nil, fmt.Errorf("phases is not a list")
	}
	if i, err := strconv.Atoi(sel); err == nil {
		if i < 0 || i >= len(phases.Content) {
			return nil, fmt.Errorf("no phase %d (there are %d)", i, len(phases.Content))
		}
		return deref(phases.Content[i]), nil
	}
	var byKind []*yaml.Node
	var names []string
	for _, ph := range phases.Content {
		ph = deref(ph)
		name := child(ph, "name")
		if name != nil && name.Value == sel {
			return ph, nil
		}
		if name != nil {
			names = append(names, name.Value)
		}
		if sel == plan.KindProfiling && phaseKind(ph) == plan.KindProfiling {
			byKind = append(byKind, ph)
		}
	}
	if len(byKind) == 1 {
		return byKind[0], nil
	}
	if sel == plan.KindProfiling && len(byKind) > 1 {
		return nil, fmt.Errorf("%d phases are of kind profiling and none is named profiling: name the phase", len(byKind))
	}
	return nil, fmt.Errorf("no phase named %q (the phases: %s)", sel, strings.Join(names, ", "))
}

// shorthandPhase picks a phase of a body without phases: by the warmup:
// and profiling: shorthands: warmup or profiling names that phase, and the
// profiling phase also goes by its index among them and by default (as the
// one phase of a flat phases: mapping does).
func shorthandPhase(body *yaml.Node, sel string) (*yaml.Node, error) {
	warm, prof := child(body, plan.KindWarmup), child(body, plan.KindProfiling)
	var names []string
	for _, sh := range []struct {
		name string
		n    *yaml.Node
	}{{plan.KindWarmup, warm}, {plan.KindProfiling, prof}} {
		if sh.n != nil {
			names = append(names, sh.name)
		}
	}
	switch {
	case sel == plan.KindWarmup && warm != nil:
		return warm, nil
	case sel == plan.KindProfiling && prof != nil, sel == "default" && prof != nil:
		return prof, nil
	case len(names) == 0:
		return nil, fmt.Errorf("the benchmark has no phases: (neither a phases: list nor a profiling: section)")
	}
	if i, err := strconv.Atoi(sel); err == nil && i >= 0 && i < len(names) {
		return child(body, names[i]), nil
	}
	sections := names[0] + ": section"
	if len(names) > 1 {
		sections = "warmup: and profiling: sections"
	}
	return nil, fmt.Errorf("no phase %q: the benchmark's phases are its %s (use phases.%s.FIELD)",
		sel, sections, names[len(names)-1])
}

// phaseKind is a phase node's kind as the decoder will read it.
func phaseKind(ph *yaml.Node) string {
	if k := child(ph, "kind"); k != nil {
		return k.Value
	}
	if n := child(ph, "name"); n != nil && n.Value == plan.KindWarmup {
		return plan.KindWarmup
	}
	return plan.KindProfiling
}

// datasetNode is the body's one dataset (dataset:, or the entry of
// datasets:), checked against name when name is given: the singular
// dataset: is named "default" unless it says otherwise.
func datasetNode(body *yaml.Node, name string) (*yaml.Node, error) {
	ds, got := child(body, "dataset"), "default"
	if list := child(body, "datasets"); list != nil {
		switch {
		case list.Kind == yaml.SequenceNode && len(list.Content) == 1:
			ds, got = deref(list.Content[0]), ""
		case list.Kind == yaml.MappingNode && len(list.Content) == 2:
			ds, got = deref(list.Content[1]), list.Content[0].Value
		default:
			return nil, fmt.Errorf("the benchmark must have exactly one dataset")
		}
	}
	if ds == nil {
		return nil, fmt.Errorf("the benchmark has no dataset")
	}
	if n := child(ds, "name"); n != nil {
		got = n.Value
	}
	if name != "" && got != "" && name != got {
		return nil, fmt.Errorf("no dataset named %q (the dataset is named %q)", name, got)
	}
	return ds, nil
}

// child is the value of key (in any spelling) in mapping n, or nil.
func child(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if snake(n.Content[i].Value) == snake(key) {
			return deref(n.Content[i+1])
		}
	}
	return nil
}

// setChild sets key of mapping n to v, adding the key when absent.
func setChild(n *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if snake(n.Content[i].Value) == snake(key) {
			n.Content[i+1] = v
			return
		}
	}
	n.Content = append(n.Content, scalar(key, v.Line), v)
}

// clone deep-copies n with its aliases followed; the copies keep the
// origin of the nodes they copy. (ReadTree bounds what aliases expand to.)
func clone(n *yaml.Node, origin map[*yaml.Node]string) *yaml.Node {
	if n == nil {
		return nil
	}
	n = deref(n)
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, x := range n.Content {
		c.Content[i] = clone(x, origin)
	}
	if o, ok := origin[n]; ok {
		origin[&c] = o
	}
	return &c
}

// mergeBody deep-merges a scenario's benchmark overlay into body, as
// AIPerf does: mappings key by key; phases: entries matched to the body's
// phases by name (a new name is added); dataset: or datasets: entries
// merged into the body's one dataset; anything else replaced.
func mergeBody(body, overlay *yaml.Node, origin map[*yaml.Node]string) error {
	for i := 0; i+1 < len(overlay.Content); i += 2 {
		k, v := overlay.Content[i], deref(overlay.Content[i+1])
		switch snake(k.Value) {
		case "phases":
			if err := mergePhases(body, v, origin); err != nil {
				return err
			}
			continue
		case "dataset", "datasets":
			if err := mergeDatasets(body, k.Value, v, origin); err != nil {
				return err
			}
			continue
		}
		merge(body, k.Value, v, origin)
	}
	return nil
}

// merge sets key of dst to v, merging mappings recursively.
func merge(dst *yaml.Node, key string, v *yaml.Node, origin map[*yaml.Node]string) {
	cur := child(dst, key)
	if cur == nil || cur.Kind != yaml.MappingNode || v.Kind != yaml.MappingNode {
		setChild(dst, key, clone(v, origin))
		return
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		merge(cur, v.Content[i].Value, deref(v.Content[i+1]), origin)
	}
}

func mergePhases(body, v *yaml.Node, origin map[*yaml.Node]string) error {
	phases := child(body, "phases")
	if v.Kind == yaml.MappingNode && child(v, "name") == nil { // a flat phase: the profiling one
		target, err := phaseNode(phases, plan.KindProfiling)
		if err != nil {
			return fmt.Errorf("phases: %w", err)
		}
		for i := 0; i+1 < len(v.Content); i += 2 {
			merge(target, v.Content[i].Value, deref(v.Content[i+1]), origin)
		}
		return nil
	}
	items := v.Content
	if v.Kind == yaml.MappingNode {
		items = []*yaml.Node{v}
	} else if v.Kind != yaml.SequenceNode {
		return fmt.Errorf("phases: expected a list of named phases")
	}
	var flat *yaml.Node                                   // the flat phase, unnamed, when the body had one
	if phases != nil && phases.Kind == yaml.MappingNode { // the flat phase becomes a list to merge by name
		one := clone(phases, origin)
		if child(one, "name") == nil {
			one.Content = append([]*yaml.Node{scalar("name", one.Line), scalar(plan.KindProfiling, one.Line)}, one.Content...)
			flat = one
		}
		phases = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: []*yaml.Node{one}, Line: one.Line}
		setChild(body, "phases", phases)
	}
	if phases == nil {
		phases = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: v.Line}
		setChild(body, "phases", phases)
	}
	for _, item := range items {
		item = deref(item)
		name := child(item, "name")
		if item.Kind != yaml.MappingNode || name == nil {
			return fmt.Errorf("phases: each overlay phase needs a name: to match")
		}
		target, err := phaseNode(phases, name.Value)
		if flat != nil && slices.Contains(flatPhaseNames, name.Value) {
			target, err = flat, nil // the flat phase under either of its names; it keeps its own
		}
		if err == nil {
			for i := 0; i+1 < len(item.Content); i += 2 {
				if target != flat || snake(item.Content[i].Value) != "name" {
					merge(target, item.Content[i].Value, deref(item.Content[i+1]), origin)
				}
			}
			continue
		}
		phases.Content = append(phases.Content, clone(item, origin))
	}
	return nil
}

func mergeDatasets(body *yaml.Node, key string, v *yaml.Node, origin map[*yaml.Node]string) error {
	items := []*yaml.Node{v}
	switch {
	case v.Kind == yaml.SequenceNode:
		items = v.Content
	case v.Kind == yaml.MappingNode && snake(key) == "datasets" && child(v, "type") == nil && child(v, "name") == nil:
		items = nil // {NAME: {...}}
		for i := 0; i+1 < len(v.Content); i += 2 {
			one := clone(v.Content[i+1], origin)
			one.Content = append([]*yaml.Node{scalar("name", one.Line), scalar(v.Content[i].Value, one.Line)}, one.Content...)
			items = append(items, one)
		}
	case v.Kind != yaml.MappingNode:
		return fmt.Errorf("%s: expected a dataset object or list", key)
	}
	for _, item := range items {
		item = deref(item)
		if item.Kind != yaml.MappingNode {
			return fmt.Errorf("%s: expected a dataset object", key)
		}
		name := ""
		if n := child(item, "name"); n != nil {
			name = n.Value
		}
		target, err := datasetNode(body, name)
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		for i := 0; i+1 < len(item.Content); i += 2 {
			if snake(item.Content[i].Value) != "name" {
				merge(target, item.Content[i].Value, deref(item.Content[i+1]), origin)
			}
		}
	}
	return nil
}
