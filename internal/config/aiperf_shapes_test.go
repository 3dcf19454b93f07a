package config

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// A single phase given as a mapping (phases: {type: concurrency, ...}) is
// the phase AIPerf's earlier loader named default
// (_benchmark_normalizers.py: data["phases"] = [{"name": "default",
// **phases}]) and its current one names profiling: a sweep path or a
// scenario overlay may name it either way.
func TestFlatPhaseNamedDefault(t *testing.T) {
	for _, sel := range []string{"default", "profiling"} {
		t.Run(sel, func(t *testing.T) {
			f, err := parse(
				"benchmark:",
				"  model: m",
				"  phases: {type: concurrency, concurrency: 1, requests: 4}",
				"sweep:",
				"  type: grid",
				"  parameters:",
				"    phases."+sel+".concurrency: [1, 2]",
			)
			require.NoError(t, err)
			require.Len(t, f.Sweep.Variations, 2)
			for i, want := range []int{1, 2} {
				ph := f.Sweep.Variations[i].Profile.Phases
				require.Len(t, ph, 1)
				assert.Equal(t, want, ph[0].Concurrency)
				assert.Equal(t, 4, ph[0].Requests)
			}
		})
	}

	f, err := parse(
		"benchmark:",
		"  model: m",
		"  phases: {type: concurrency, concurrency: 1, requests: 4}",
		"sweep:",
		"  type: scenarios",
		"  runs:",
		"    - {name: wide, benchmark: {phases: [{name: default, concurrency: 8}]}}",
	)
	require.NoError(t, err)
	ph := f.Sweep.Variations[0].Profile.Phases
	require.Len(t, ph, 1, "merged into the flat phase, not added beside it")
	assert.Equal(t, 8, ph[0].Concurrency)
	assert.Equal(t, 4, ph[0].Requests)

	_, err = parse("benchmark: {model: m, phases: {type: concurrency, requests: 4}}",
		"sweep: {type: grid, parameters: {phases.steady.concurrency: [1, 2]}}")
	require.ErrorContains(t, err, `the benchmark has one phase, profiling or default, not "steady"`)
}

// The older flat shape with the warmup: and profiling: shorthands at the
// top level (no benchmark: wrapper), as AIPerf's
// dev/deploy/test-benchmark-config.yaml writes it, is read as AIPerf's
// _normalize_warmup_profiling_to_phases reads it: a warmup phase, then a
// profiling phase.
func TestFlatShapeWarmupProfiling(t *testing.T) {
	f, err := parse(
		"models:",
		"  - mock-model",
		"endpoint:",
		"  urls:",
		"    - http://127.0.0.1:8000/v1/chat/completions",
		"  type: chat",
		"  use_server_token_count: true",
		"tokenizer:",
		"  name: builtin",
		"datasets:",
		"  main:",
		"    type: synthetic",
		"    entries: 100",
		"    isl: 50",
		"    osl: 20",
		"profiling:",
		"  type: concurrency",
		"  requests: 50",
		"  concurrency: 5",
	)
	require.NoError(t, err)
	assert.Equal(t, SchemaFlat, f.Schema)
	assert.Equal(t, []plan.Phase{{Name: "profiling", Kind: plan.KindProfiling, Concurrency: 5, Requests: 50}}, f.Profile.Phases)
	assert.Equal(t, []string{"mock-model"}, f.Profile.Model)
	assert.Contains(t, strings.Join(f.Notes, "\n"), "profiling were read under benchmark:")

	f, err = parse(
		"model: m",
		"warmup: {type: concurrency, concurrency: 2, requests: 4}",
		"profiling: {type: poisson, rate: 10, requests: 20}",
		"sweep: {type: grid, variables: {benchmark.phases.profiling.rate: [10, 20]}}",
	)
	require.NoError(t, err)
	require.Len(t, f.Profile.Phases, 2)
	assert.Equal(t, plan.Phase{Name: "warmup", Kind: plan.KindWarmup, Concurrency: 2, Requests: 4, GracePeriod: -1}, f.Profile.Phases[0])
	assert.Equal(t, plan.Phase{Name: "profiling", Kind: plan.KindProfiling, Rate: 10, RateMode: plan.RatePoisson, Requests: 20},
		f.Profile.Phases[1])
	require.Len(t, f.Sweep.Variations, 2)
	assert.InDelta(t, 20.0, f.Sweep.Variations[1].Profile.Phases[1].Rate, 0)

	_, err = parse("model: m", "phases: [{name: p, requests: 4}]", "profiling: {requests: 4}")
	require.EqualError(t, err, "bench.yaml:3: profiling: cannot be given with phases: (line 2): put the phase in that list")
}

// runtime: is AIPerf's RuntimeConfig: ui and workers map to --ui and
// --workers-max (what AIPerf's own --workers-max sets), its internal
// process tuning is read and ignored with a note, its service API is
// refused, and an unknown key is refused with a suggestion.
func TestRuntimeSection(t *testing.T) {
	// The runtime: of AIPerf's recipes/llama-3-70b/vllm/agg/perf.yaml.
	f, err := parse("benchmark:", "  model: m", "  runtime:", "    ui: simple", "    record_processors: 32")
	require.NoError(t, err)
	assert.Equal(t, Runtime{UI: "simple"}, f.Runtime)
	require.Len(t, f.Notes, 1)
	assert.Equal(t, "bench.yaml:5: benchmark.runtime.record_processors: is the number of AIPerf's record-processor services "+
		"(records are processed in this one process), which has no counterpart here: ignored", f.Notes[0])
	assert.Equal(t, Key{Path: "benchmark.runtime.ui", Line: 4}, f.Keys["ui"])

	f, err = parse("model: m", "runtime: {ui: none, workers: 8, workers_min: 2, communication: {type: ipc},",
		"  stats_interval: 5, service_run_type: multiprocessing, workers_per_pod: 4, record_processors_per_pod: 2}")
	require.NoError(t, err, "the flat shape's runtime: too")
	assert.Equal(t, Runtime{UI: "none", WorkersMax: 8}, f.Runtime)
	notes := strings.Join(f.Notes, "\n")
	for _, key := range []string{"workers_min", "communication", "stats_interval", "workers_per_pod", "record_processors_per_pod"} {
		assert.Contains(t, notes, "runtime."+key+": is ", key)
	}

	f, err = parse("benchmark: {model: m, runtime: {ui: tqdm, workers: null}}")
	require.NoError(t, err)
	assert.Equal(t, Runtime{UI: "simple"}, f.Runtime)

	f, err = parse("benchmark: {model: m}")
	require.NoError(t, err)
	assert.Equal(t, Runtime{}, f.Runtime)

	tests := []struct {
		yaml, want string
	}{
		{"benchmark: {model: m, runtime: {uii: simple}}", `bench.yaml:1: benchmark.runtime: unknown key "uii" (did you mean "ui"?)`},
		{"benchmark: {model: m, runtime: {ui: fancy}}", `bench.yaml:1: benchmark.runtime.ui: expected dashboard | simple | none | tqdm, got "fancy"`},
		{"benchmark: {model: m, runtime: {workers: 0}}", `bench.yaml:1: benchmark.runtime.workers: must be at least 1, got 0`},
		{"benchmark: {model: m, runtime: {record_processors: many}}", `bench.yaml:1: benchmark.runtime.record_processors: expected int, got string "many"`},
		{"benchmark: {model: m, runtime: {api_port: 9090}}", `bench.yaml:1: benchmark.runtime.api_port: api_port: (AIPerf's HTTP and WebSocket service API) is not supported yet: serve live metrics with aiperf profile --metrics-listen`},
		{"benchmark: {model: m, runtime: {service_run_type: kubernetes}}", `bench.yaml:1: benchmark.runtime.service_run_type: service_run_type other than multiprocessing is not supported yet: use aiperf profile --workers N, with --executor kubernetes for worker pods`},
		{"benchmark: {model: m, runtime: simple}", `bench.yaml:1: benchmark.runtime: expected an object, got string "simple"`},
		{"benchmark: {model: m, runtime: {ui: none}}\nsweep: {type: grid, parameters: {runtime.ui: [none, simple]}}",
			`bench.yaml:1: benchmark.runtime: cannot differ between the sweep's variations: its ui and workers are the whole run's; set them once in the body (sweep variation runtime.ui_simple)`},
	}
	for _, tt := range tests {
		t.Run(tt.yaml, func(t *testing.T) {
			_, err := parse(tt.yaml)
			require.EqualError(t, err, tt.want)
		})
	}
}

// A sweep path on the flat shape's profiling: section may name the phase
// default, as it may on a flat phases: mapping; an unknown one is refused
// naming the sections that are there (not "the benchmark has no phases").
func TestFlatShapeSweepDefaultPhase(t *testing.T) {
	f, err := parse("model: m", "profiling: {type: concurrency, concurrency: 1, requests: 4}",
		"sweep: {type: grid, parameters: {phases.default.concurrency: [2, 3]}}")
	require.NoError(t, err)
	require.Len(t, f.Sweep.Variations, 2)
	assert.Equal(t, 3, f.Sweep.Variations[1].Profile.Phases[0].Concurrency)

	f, err = parse("model: m", "warmup: {type: concurrency, concurrency: 1, requests: 2}",
		"profiling: {type: concurrency, concurrency: 1, requests: 4}",
		"sweep: {type: grid, parameters: {phases.1.concurrency: [2, 3]}}")
	require.NoError(t, err)
	assert.Equal(t, 3, f.Sweep.Variations[1].Profile.Phases[1].Concurrency)

	_, err = parse("model: m", "profiling: {type: concurrency, concurrency: 1, requests: 4}",
		"sweep: {type: grid, parameters: {phases.steady.concurrency: [2, 3]}}")
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "has no phases")
	assert.Contains(t, err.Error(), `no phase "steady": the benchmark's phases are its profiling: section`)
}
