package artifacts

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// maxJSONBytes bounds profile_export_aiperf.json and the aggregate: both
// are summaries, a few hundred kB at most.
const maxJSONBytes = 256 << 20

// readDoc decodes a JSON document of at most maxJSONBytes into v.
func readDoc(path string, v any) error {
	f, err := open(path, maxJSONBytes)
	if err != nil {
		return err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}

// exportDoc is what the reader takes of profile_export_aiperf.json; the
// metric blocks are the top-level objects that have a "unit".
type exportDoc struct {
	InputConfig   inputConfig `json:"input_config"`
	TelemetryData struct {
		Endpoints map[string]struct {
			GPUs map[string]json.RawMessage `json:"gpus"`
		} `json:"endpoints"`
	} `json:"telemetry_data"`
	ControlHooks []Hook `json:"control_hooks"`
}

// inputConfig holds the options the figures label runs with, in AIPerf's
// current shape (models.items, phases) and its older one (endpoint.model_names,
// loadgen), and our own (aiperf_go).
type inputConfig struct {
	Models struct {
		Items []struct {
			Name string `json:"name"`
		} `json:"items"`
	} `json:"models"`
	Endpoint struct {
		ModelNames []string `json:"model_names"`
	} `json:"endpoint"`
	Phases  []phaseConfig `json:"phases"`
	Loadgen struct {
		Concurrency float64 `json:"concurrency"`
	} `json:"loadgen"`
	Output struct {
		SliceDuration float64 `json:"slice_duration"`
	} `json:"output"`
	Ours struct {
		SliceDuration float64 `json:"slice_duration"`
	} `json:"aiperf_go"`
}

// phaseConfig is a phase of input_config.
type phaseConfig struct {
	Name        string  `json:"name"`
	Concurrency float64 `json:"concurrency"`
}

func (c inputConfig) model() string {
	if len(c.Models.Items) > 0 {
		return c.Models.Items[0].Name
	}
	if len(c.Endpoint.ModelNames) > 0 {
		return c.Endpoint.ModelNames[0]
	}
	return ""
}

// concurrency is the profiling phase's (else the first phase's).
func (c inputConfig) concurrency() int {
	if len(c.Phases) > 0 {
		i := max(0, slices.IndexFunc(c.Phases, func(p phaseConfig) bool { return p.Name == "profiling" }))
		return int(c.Phases[i].Concurrency)
	}
	return int(c.Loadgen.Concurrency)
}

// readJSON reads profile_export_aiperf.json: every metric block's numbers
// (top level, or under "metrics" in older exports), the model, concurrency
// and slice duration of the input config, the GPUs of the telemetry, and
// the control-hook calls.
func (r *Run) readJSON(path string) error {
	var raw json.RawMessage // read once, decoded twice
	if err := readDoc(path, &raw); err != nil {
		return err
	}
	var top map[string]json.RawMessage
	var doc exportDoc
	if err := errors.Join(json.Unmarshal(raw, &top), json.Unmarshal(raw, &doc)); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	blocks := top
	if nested, ok := top["metrics"]; ok {
		var m map[string]json.RawMessage
		if json.Unmarshal(nested, &m) == nil {
			blocks = m
		}
	}
	for tag, raw := range blocks {
		if len(raw) == 0 || raw[0] != '{' {
			continue
		}
		var block map[string]any
		if json.Unmarshal(raw, &block) != nil {
			continue
		}
		unit, ok := block["unit"].(string)
		if !ok {
			continue
		}
		r.Units[tag] = unit
		for stat, v := range block {
			if f, ok := v.(float64); ok {
				r.Stats[tag+"."+stat] = single(f)
			}
		}
	}
	r.Model, r.Concurrency = doc.InputConfig.model(), doc.InputConfig.concurrency()
	r.SliceSeconds = max(doc.InputConfig.Output.SliceDuration, doc.InputConfig.Ours.SliceDuration)
	for _, ep := range doc.TelemetryData.Endpoints {
		r.GPUs += len(ep.GPUs)
	}
	r.Hooks = doc.ControlHooks
	return nil
}

// aggregateDoc is what the reader takes of profile_export_aiperf_aggregate.json.
type aggregateDoc struct {
	Metadata struct {
		NumSuccessfulRuns int            `json:"num_successful_runs"`
		Model             string         `json:"model"`
		VariationValues   map[string]any `json:"variation_values"` // AIPerf's sweep cell
		Parameters        []struct {     // ours
			Name  string `json:"name"`
			Value any    `json:"value"`
		} `json:"parameters"`
	} `json:"metadata"`
	Metrics map[string]struct {
		Mean   *float64 `json:"mean"`
		CILow  *float64 `json:"ci_low"`
		CIHigh *float64 `json:"ci_high"`
		Unit   string   `json:"unit"`
	} `json:"metrics"`
	InputConfig *inputConfig `json:"input_config"`
}

// statSuffixes are the statistics an aggregate's flat keys end with
// ("request_latency_p99"), as AIPerf's loader splits them.
var statSuffixes = []string{"avg", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "min", "max", "std", "count", "sum"}

// readAggregate reads a cell's aggregate: each "<metric>_<stat>" mean with
// its confidence interval, the trials behind them, the model and the
// swept concurrency.
func (r *Run) readAggregate(path string) error {
	var doc aggregateDoc
	if err := readDoc(path, &doc); err != nil {
		return err
	}
	r.Aggregate, r.N, r.Model = true, doc.Metadata.NumSuccessfulRuns, doc.Metadata.Model
	for key, m := range doc.Metrics {
		if m.Mean == nil {
			continue
		}
		metric, stat := key, "avg"
		if i := strings.LastIndexByte(key, '_'); i > 0 && slices.Contains(statSuffixes, key[i+1:]) {
			metric, stat = key[:i], key[i+1:]
		}
		v := single(*m.Mean)
		if m.CILow != nil && m.CIHigh != nil {
			v.Low, v.High = *m.CILow, *m.CIHigh
		}
		r.Stats[metric+"."+stat] = v
		if m.Unit != "" {
			r.Units[metric] = m.Unit
		}
	}
	for _, p := range doc.Metadata.Parameters {
		if c, ok := p.Value.(float64); ok && (p.Name == "concurrency" || strings.HasSuffix(p.Name, ".concurrency")) {
			r.Concurrency = int(c)
		}
	}
	for k, v := range doc.Metadata.VariationValues {
		if c, ok := v.(float64); ok && (k == "concurrency" || strings.HasSuffix(k, ".concurrency")) && c >= 1 && c == math.Trunc(c) {
			r.Concurrency = int(c)
		}
	}
	if doc.InputConfig != nil && r.Model == "" {
		r.Model = doc.InputConfig.model()
	}
	return nil
}
