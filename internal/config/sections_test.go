package config

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/notbuilt"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// The schema-2.0 sections besides the endpoint and the phases' basics map
// onto aiperf profile's options.
func TestSectionsMapToOptions(t *testing.T) {
	f, err := parse(
		`schemaVersion: "2.0"`,
		"benchmark:",
		"  models: {strategy: random, items: [{name: a}, b]}",
		"  endpoint:",
		"    urls: [http://x:1]",
		"    url_strategy: round_robin",
		"    timeout: 2m",
		"    transport: http",
		"    ssl_verify: true",
		"    use_server_token_count: true",
		"    use_legacy_max_tokens: true",
		"    connection_reuse: sticky-user-sessions",
		"    session_header: X-Session-ID",
		"    wait_for_model_timeout: 30",
		"    wait_for_model_mode: models",
		"  tokenizer: {name: cl100k_base, revision: main, trust_remote_code: false}",
		"  datasets:",
		"    - name: main",
		"      type: synthetic",
		"      entries: 7",
		"      sampling: random",
		"      isl: {type: fixed, value: 100}",
		"      prompts: {osl: 20, batch_size: 2}",
		"      prefix_prompts: {pool_size: 3, length: 50}",
		"      turns: {mean: 3, stddev: 1}",
		"      turn_delay: {mean: 250.5, stddev: 10}",
		"      turn_delay_ratio: 0.5",
		"  artifacts: {dir: out, prefix: run1, summary: [json, csv], raw: true, slice_duration: 30s, trace: true, show_trace_timing: true,",
		"              export_outputs_json: false}",
		"  slos: {time_to_first_token: 200, inter_token_latency: 12.5}",
		"  gpu_telemetry: {enabled: false}",
		"  server_metrics: {urls: ['http://x:2/metrics'], formats: [json], interval: 0.5}",
		"  phases:",
		"    - {name: warmup, type: concurrency, concurrency: 2, requests: 4, dataset: main}",
		"    - {name: profiling, type: gamma, rate: 5, smoothness: 2.5, concurrency: 8, prefill_concurrency: 4, sessions: 9,",
		"       concurrency_ramp: {duration: 10, strategy: linear}, prefill_ramp: 5, rate_ramp: 1m, duration: inf,",
		"       grace_period: inf, failed_request_threshold: 0.25, cancellation: {rate: 10, delay: 1.5}}",
		"  unsafe_override: false",
		"no_sweep_table: false",
	)
	require.NoError(t, err)
	p := f.Profile
	assert.Equal(t, []string{"a", "b"}, p.Model)
	assert.Equal(t, plan.ModelRandom, p.ModelSelectionStrategy)
	assert.Equal(t, 120.0, p.RequestTimeoutSeconds, "2m")
	assert.True(t, p.UseServerTokenCount)
	assert.True(t, p.UseLegacyMaxTokens)
	assert.Equal(t, "sticky-user-sessions", p.ConnectionReuseStrategy)
	assert.Equal(t, "X-Session-ID", p.SessionHeader)
	assert.Equal(t, plan.Ptr(false), p.ExportOutputsJSON, "raw: true would imply it")
	assert.Equal(t, plan.Ptr(30.0), p.WaitForModelTimeout)
	assert.Equal(t, plan.WaitModels, p.WaitForModelMode)
	assert.Equal(t, "cl100k_base", p.Tokenizer)
	assert.Equal(t, "main", p.TokenizerRevision)
	assert.Equal(t, 7, p.NumDatasetEntries)
	assert.Equal(t, "random", p.DatasetSamplingStrategy)
	assert.Equal(t, 100, p.SyntheticInputTokensMean)
	assert.Equal(t, plan.Ptr(20), p.OutputTokensMean)
	assert.Equal(t, 2, p.PromptBatchSize)
	assert.Equal(t, 3, p.PromptPrefixPoolSize)
	assert.Equal(t, 50, p.PromptPrefixLength)
	assert.Equal(t, 3, p.ConversationTurnMean)
	assert.Equal(t, 1, p.ConversationTurnStddev)
	assert.Equal(t, 250.5, p.ConversationTurnDelayMean)
	assert.Equal(t, plan.Ptr(0.5), p.ConversationTurnDelayRatio)
	assert.Equal(t, "out", f.ArtifactDir)
	assert.Equal(t, "run1", p.ProfileExportPrefix)
	assert.Equal(t, []string{"json", "csv"}, p.SummaryFormats)
	assert.True(t, p.ExportHTTPTrace, "artifacts.trace")
	assert.True(t, p.ShowTraceTiming, "artifacts.show_trace_timing")
	assert.Equal(t, "raw", p.ExportLevel)
	assert.Equal(t, plan.Ptr(30.0), p.SliceDuration)
	assert.Equal(t, "time_to_first_token:200 inter_token_latency:12.5", p.Goodput)
	assert.True(t, p.NoGPUTelemetry)
	assert.Equal(t, []string{"http://x:2/metrics"}, p.ServerMetrics)
	assert.Equal(t, []string{"json"}, p.ServerMetricsFormats)
	assert.Equal(t, plan.Ptr(0.5), p.ServerMetricsInterval)
	assert.Equal(t, plan.Ptr(0.25), p.FailedRequestThreshold)
	assert.Equal(t, plan.Phase{Name: "profiling", Kind: plan.KindProfiling, Rate: 5, RateMode: plan.RateGamma, Smoothness: 2.5,
		Concurrency: 8, PrefillConcurrency: 4, Sessions: 9, ConcurrencyRamp: 10, PrefillRamp: 5, RateRamp: 60,
		GracePeriod: -1, Cancellation: &plan.Cancellation{Rate: 10, Delay: 1.5}}, p.Phases[1])
	assert.Empty(t, f.Notes)
}

// Each AIPerf key this reader does not implement is refused, naming the
// key and what to do instead (the flag that does it, else to remove it),
// never ignored; a default value is accepted.
func TestNotSupportedYet(t *testing.T) {
	tests := []struct {
		yaml []string
		want string
	}{
		{[]string{"plot: {}"}, `bench.yaml:1: plot: plot: (figures drawn from the config) is not supported yet: run aiperf plot after the run, or aiperf profile --auto-plot`},
		{[]string{"no_sweep_table: true"}, `bench.yaml:1: no_sweep_table: no_sweep_table: true is not supported yet: use aiperf profile --no-sweep-table`},
		{[]string{"sweep: {type: sobol, samples: 8}"}, `bench.yaml:1: sweep.type: sweep type sobol is not supported yet: use grid, zip, scenarios or adaptive_search`},
		{[]string{"sweep: {type: latin_hypercube, samples: 8}"}, `bench.yaml:1: sweep.type: sweep type latin_hypercube is not supported yet: use grid, zip, scenarios or adaptive_search`},
		{[]string{"sweep: {type: adaptive_search, search_space: [{path: concurrency, lo: 1, hi: 9, kind: int}], max_iterations: 5,",
			"  objectives: [{metric: a, stat: avg, direction: maximize}, {metric: b, stat: p99, direction: minimize}]}"},
			`bench.yaml:2: sweep.objectives: several objectives (a multi-objective Pareto search) are not supported yet: give one`},
		{[]string{"sweep: {type: adaptive_search, search_space: [{path: concurrency, lo: 1, hi: 9}], max_iterations: 5, optuna_sampler: tpe}"},
			`bench.yaml:1: sweep.optuna_sampler: optuna_sampler: (AIPerf's Optuna stack) is not supported yet: use planner: bayesian`},
		{[]string{"benchmark: {runtime: {api_port: 9090}}"}, `bench.yaml:1: benchmark.runtime.api_port: api_port: (AIPerf's HTTP and WebSocket service API) is not supported yet: serve live metrics with aiperf profile --metrics-listen`},
		{[]string{"benchmark: {logging: {level: DEBUG}}"}, `bench.yaml:1: benchmark.logging: logging: is not supported yet: use aiperf profile -v or --log-level`},
		{[]string{"benchmark: {endpoint: {http2: true}}"}, `bench.yaml:1: benchmark.endpoint.http2: http2: true is not supported yet: remove it from the file`},
		{[]string{"benchmark: {endpoint: {connection_limit: 8}}"}, `bench.yaml:1: benchmark.endpoint.connection_limit: connection_limit: is not supported yet: remove it from the file`},
		{[]string{"benchmark: {artifacts: {plot_required: true}}"}, `bench.yaml:1: benchmark.artifacts.plot_required: plot_required: true is not supported yet: use aiperf profile --auto-plot --plot-required`},
		{[]string{"benchmark: {models: {strategy: weighted, items: [a]}}"}, `bench.yaml:1: benchmark.models.strategy: weighted (a weight per model) is not supported yet: use round_robin or random`},
		{[]string{"benchmark: {dataset: {prompts: {isl: {type: lognormal, mean: 5}}}}"}, `bench.yaml:1: benchmark.dataset.prompts.isl.type: a lognormal distribution is not supported yet: use a number or {mean, stddev}`},
		{[]string{"benchmark: {dataset: {type: file, path: x.jsonl, format: dag_json}}"}, `bench.yaml:1: benchmark.dataset.format: format "dag_json" is not a format: use one of single_turn, multi_turn, random_pool, mooncake_trace, bailian_trace, burst_gpt_trace, inputs_json, raw_payload, sagemaker_data_capture, baseten_trace, weka_trace, tracelab, dag_jsonl, or speed_bench_<config> (aiperf profile --help lists them)`},
		{[]string{"benchmark: {dataset: {type: file, path: x.jsonl, format: speed_bench_Coding}}"}, `bench.yaml:1: benchmark.dataset.format: format "speed_bench_Coding" is not a format: use one of single_turn, multi_turn, random_pool, mooncake_trace, bailian_trace, burst_gpt_trace, inputs_json, raw_payload, sagemaker_data_capture, baseten_trace, weka_trace, tracelab, dag_jsonl, or speed_bench_<config> (aiperf profile --help lists them)`},
		{[]string{"benchmark: {phases: {type: user_centric, rate: 1, users: 4, requests: 8}}"}, `bench.yaml:1: benchmark.phases.type: user_centric phases in a config file are not supported yet: use aiperf profile --user-centric-rate and --num-users`},
		{[]string{"benchmark: {phases: {type: poisson, rate: 1, requests: 8, rate_series: {points: []}}}"}, `bench.yaml:1: benchmark.phases.rate_series: rate_series: (a piecewise request-rate schedule) is not supported yet: use aiperf profile --request-rate-series FILE`},
		{[]string{"benchmark: {phases: {requests: 8, adaptive_scale: true}}"}, `bench.yaml:1: benchmark.phases.adaptive_scale: adaptive_scale: (single-run boundary discovery) is not supported yet: use a sweep`},
		{[]string{"benchmark: {dataset: {type: file, format: random_pool, records: {a: [{text: x}]}}}"}, `bench.yaml:1: benchmark.dataset.records: records: as {pool: [records]} (several random pools) is not supported yet: write each pool to a JSONL file in one directory and give the directory as path:`},
		{[]string{"multi_run: {num_runs: 2, set_consistent_seed: false}"}, `bench.yaml:1: multi_run.set_consistent_seed: false without a random_seed is not supported yet: every trial here draws the same workload; set random_seed`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.yaml, " "), func(t *testing.T) {
			_, err := parse(tt.yaml...)
			require.EqualError(t, err, tt.want)
		})
	}
	_, err := parse("sweep: {recipe_name: max-goodput-under-slo}")
	require.ErrorContains(t, err, "bench.yaml:1: sweep.recipe_name: search recipes is not supported yet: use aiperf profile --search-recipe NAME\n")
	_, err = parse("random_seed: 3", "multi_run: {num_runs: 2, set_consistent_seed: false}")
	require.NoError(t, err, "with a seed, every trial draws the same workload anyway")
}

// A key that stands for an AIPerf option the command line does not build
// is refused with that option's reason and alternative, the command
// line's (package notbuilt), not a copy of them.
func TestNotBuiltKeysGiveTheOptionsReason(t *testing.T) {
	tests := []struct{ yaml, want, option string }{
		{"benchmark: {accuracy: {benchmark: mmlu}}", "bench.yaml:1: benchmark.accuracy: accuracy: (accuracy benchmarks) is not supported yet: ", "--accuracy-benchmark"},
		{"benchmark: {wandb: {project: p}}", "bench.yaml:1: benchmark.wandb: wandb: (Weights & Biases upload) is not supported yet: ", "--wandb-project"},
		{"benchmark: {scenario: inferencex-agentx-mvp}", "bench.yaml:1: benchmark.scenario: scenario: (benchmark invariant locks) is not supported yet: ", "--scenario"},
		{"benchmark: {unsafe_override: true}", "bench.yaml:1: benchmark.unsafe_override: unsafe_override: is not supported yet: ", "--unsafe-override"},
		{"benchmark: {phases: {requests: 8, trajectory_start_min_ratio: 0.1}}",
			"bench.yaml:1: benchmark.phases.trajectory_start_min_ratio: agentic replay (trajectory_start_min_ratio) is not supported yet: ", "--trajectory-start-min-ratio"},
		{"benchmark: {phases: {requests: 8, trajectory_start_max_ratio: 0.9}}",
			"bench.yaml:1: benchmark.phases.trajectory_start_max_ratio: agentic replay (trajectory_start_max_ratio) is not supported yet: ", "--trajectory-start-max-ratio"},
		{"benchmark: {phases: {requests: 8, burst_phase_starts: true}}",
			"bench.yaml:1: benchmark.phases.burst_phase_starts: agentic replay (burst_phase_starts) is not supported yet: ", "--burst-phase-starts"},
		{"benchmark: {phases: {requests: 8, system_idle_gap_cap_seconds: 5}}",
			"bench.yaml:1: benchmark.phases.system_idle_gap_cap_seconds: agentic replay (system_idle_gap_cap_seconds) is not supported yet: ", "--system-idle-gap-cap-seconds"},
		{"benchmark: {phases: {requests: 8, agentic_cache_warmup_duration: 5}}",
			"bench.yaml:1: benchmark.phases.agentic_cache_warmup_duration: agentic replay (agentic_cache_warmup_duration) is not supported yet: ", "--agentic-cache-warmup-duration"},
		{"benchmark: {phases: {requests: 8, agentic_warmup_grace_period: 5}}",
			"bench.yaml:1: benchmark.phases.agentic_warmup_grace_period: agentic replay (agentic_warmup_grace_period) is not supported yet: ", "--agentic-warmup-grace-period"},
	}
	for _, tt := range tests {
		t.Run(tt.yaml, func(t *testing.T) {
			e, ok := notbuilt.Lookup(tt.option)
			require.True(t, ok, "%s is not in %s", tt.option, notbuilt.File)
			_, err := parse(tt.yaml)
			require.EqualError(t, err, tt.want+e.Why+"; instead, "+e.Instead)
		})
	}
}

// Phases: AIPerf's rules on names, kinds and the deprecated
// exclude_from_results; shorthand warmup:/profiling:; a phase's dataset
// must be the one dataset.
func TestPhaseRules(t *testing.T) {
	tests := []struct {
		yaml []string
		errs []string
	}{
		{[]string{"benchmark:", "  phases: [{name: a, requests: 1}, {name: A, requests: 1}, {name: 'b c', requests: 1}]"}, []string{
			`bench.yaml:2: benchmark.phases[1]: name "A" is used by phases[0] too (names are compared without case): rename one`,
			`bench.yaml:2: benchmark.phases[2].name: "b c" is not a phase name: use letters, digits, _ and -, starting with a letter or _`,
		}},
		{[]string{"benchmark:", "  phases: [{name: p, requests: 1, exclude_from_results: true}]"}, []string{
			`bench.yaml:2: benchmark.phases[0].exclude_from_results: true contradicts kind profiling (the kind decides whether a phase counts): set kind: warmup instead`,
		}},
		{[]string{"benchmark:", "  dataset: {name: main}", "  phases: {requests: 1, dataset: other}"}, []string{
			`bench.yaml:3: benchmark.phases.dataset: names dataset "other", but the benchmark's one dataset is named "main"`,
		}},
		{[]string{"benchmark:", "  phases: {requests: 1, smoothness: 2}"}, []string{
			`bench.yaml:2: benchmark.phases.smoothness: applies only to type gamma`,
		}},
		{[]string{"benchmark:", "  phases: {requests: 1, duration: 5 minutes}"}, []string{
			`bench.yaml:2: benchmark.phases.duration: expected seconds or a duration such as 30s, 5m or 2h, got string "5 minutes"`,
		}},
		{[]string{"benchmark:", "  datasets: [{name: a}, {name: b}]"}, []string{
			`bench.yaml:2: benchmark.datasets: expected exactly one dataset (AIPerf runs one per benchmark): run a sweep or separate benchmarks for others`,
		}},
		{[]string{"benchmark:", "  phases: {requests: 1}", "  profiling: {requests: 2}"}, []string{
			`bench.yaml:3: benchmark.profiling: cannot be given with phases: (line 2): put the phase in that list`,
		}},
	}
	for _, tt := range tests {
		_, err := parse(tt.yaml...)
		require.Error(t, err)
		assert.Equal(t, tt.errs, strings.Split(err.Error(), "\n"))
	}

	f, err := parse("benchmark:", "  profiling: {type: concurrency, concurrency: 4, requests: 8}", "  warmup: {concurrency: 1, requests: 2}")
	require.NoError(t, err)
	assert.Equal(t, []string{plan.KindWarmup, plan.KindProfiling}, []string{f.Profile.Phases[0].Kind, f.Profile.Phases[1].Kind})
	assert.Equal(t, 4, f.Profile.Phases[1].Concurrency)

	f, err = parse("benchmark:", "  phases: [{name: warmup, requests: 2, exclude_from_results: true}, {name: p, requests: 1, excludeFromResults: false}]")
	require.NoError(t, err)
	require.Len(t, f.Notes, 2)
	assert.Equal(t, "bench.yaml:2: benchmark.phases[0].exclude_from_results: is deprecated in AIPerf and changes nothing here (kind warmup decides): remove it", f.Notes[0])
	assert.Equal(t, 1, f.Profile.Phases[1].Concurrency, "a concurrency phase without one: AIPerf's default 1")

	f, err = parse("benchmark:", "  model: m", "  dataset: {type: file, path: t.jsonl, format: mooncake_trace}",
		"  phases: {type: fixed_schedule, auto_offset: true}")
	require.NoError(t, err)
	assert.True(t, f.Profile.FixedSchedule)
	assert.True(t, f.Profile.Phases[0].Fixed)
	assert.Equal(t, "t.jsonl", f.Profile.InputFile)
	assert.Equal(t, "mooncake_trace", f.Profile.CustomDatasetType)
	require.NoError(t, f.Profile.Check())
}

// A file whose aliases would expand past a million values is refused up
// front, in linear time.
func TestAliasBomb(t *testing.T) {
	lines := []string{"a0: &a0 [x, x, x, x, x, x, x, x, x, x]"}
	for i := 1; i <= 9; i++ {
		refs := strings.Repeat("*a"+string(rune('0'+i-1))+", ", 10)
		lines = append(lines, "a"+string(rune('0'+i))+": &a"+string(rune('0'+i))+" ["+strings.TrimSuffix(refs, ", ")+"]")
	}
	lines = append(lines, "benchmark: {model: *a9}")
	_, err := parse(lines...)
	require.EqualError(t, err, "bench.yaml:5: the file holds more than 100000 values once its aliases (*name) are followed, "+
		"the most a config file may hold: write the values out, or alias fewer of them")
}

// A variable may be a list; {{ name }} alone puts the list in; templates
// in a scenario's variables: overlay are rendered per variation.
func TestVariablesPerVariation(t *testing.T) {
	f, err := parse(
		"variables: {models: [a, b], conc: 2}",
		"benchmark: {model: '{{ models }}', phases: {concurrency: '{{ conc * 2 }}', requests: 9}}",
		"sweep:",
		"  type: scenarios",
		"  runs: [{name: x}, {name: y, variables: {conc: 5}}]",
	)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, f.Profile.Model)
	assert.Equal(t, 4, f.Sweep.Variations[0].Profile.Phases[0].Concurrency)
	assert.Equal(t, 10, f.Sweep.Variations[1].Profile.Phases[0].Concurrency)

	f, err = parse(
		"variables: {conc: 2}",
		"benchmark: {phases: {concurrency: '{{ conc }}', requests: 9}}",
		"sweep: {parameters: {variables.conc: [3, 7]}}",
	)
	require.NoError(t, err)
	assert.Equal(t, 7, f.Sweep.Variations[1].Profile.Phases[0].Concurrency, "variables.NAME sweeps the variable")

	_, err = parse("variables: {a: '{{ b }}', b: '{{ a }}'}", "benchmark: {}")
	require.EqualError(t, err, "bench.yaml:1: variables.a: refers to itself through other variables: give one of them a value\n"+
		"bench.yaml:1: variables.b: refers to itself through other variables: give one of them a value")
}

// A sweep of type adaptive_search reads as the --search-* flags it stands
// for; multi_run.convergence as --convergence-*.
func TestAdaptiveSearch(t *testing.T) {
	f, err := parse(
		"benchmark: {model: m, phases: {type: concurrency, concurrency: 1, requests: 8}}",
		"sweep:",
		"  type: adaptive_search",
		"  planner: bayesian",
		"  search_space:",
		"    - {path: concurrency, lo: 1, hi: 64, kind: int}",
		"    - {path: phases.profiling.rate, lo: 0.5, hi: 40, log: true}",
		"  objectives: [{metric: output_token_throughput, stat: avg, direction: maximize}]",
		"  sla_filters: [{metric: time_to_first_token, stat: p99, op: '<', threshold: 250}]",
		"  max_iterations: 12",
		"  n_initial_points: 4",
		"  random_seed: 7",
		"  cooldown_seconds: 2",
		"multi_run: {num_runs: 4, convergence: {metric: request_throughput, stat: avg, threshold: 0.1, mode: cv}}",
	)
	require.NoError(t, err)
	assert.Nil(t, f.Sweep, "the search chooses its own points")
	assert.Equal(t, &Search{
		Space:  []string{"concurrency:1,64:int", "phases.profiling.rate:0.5,40:real:log"},
		Metric: "output_token_throughput", Stat: "avg", Direction: "maximize",
		MaxIterations: plan.Ptr(12), InitialPoints: plan.Ptr(4), Seed: plan.Ptr(int64(7)), Planner: "bayesian",
		SLA:             []string{"time_to_first_token:p99:lt:250"},
		Convergence:     &Convergence{Metric: "request_throughput", Stat: "avg", Mode: "cv", Threshold: plan.Ptr(0.1)},
		CooldownSeconds: plan.Ptr(2.0),
	}, f.Search)
	assert.Equal(t, 4, f.MultiRun.NumRuns)

	_, err = parse("sweep: {type: adaptive_search}")
	require.EqualError(t, err, "bench.yaml:1: sweep.search_space: an adaptive_search sweep needs search_space: [{path, lo, hi, kind}]\n"+
		"bench.yaml:1: sweep.max_iterations: an adaptive_search sweep needs max_iterations (2-200): how many probes it may run")
}

// TestMultiRunConvergence: without an adaptive_search sweep,
// multi_run.convergence is each cell's criterion (distribution too); a
// search's probes take ci_width or cv only.
func TestMultiRunConvergence(t *testing.T) {
	f, err := parse("multi_run: {num_runs: 5, convergence: {metric: request_latency, mode: distribution, threshold: 0.2}}")
	require.NoError(t, err)
	assert.Equal(t, &Convergence{Metric: "request_latency", Mode: "distribution", Threshold: plan.Ptr(0.2)}, f.MultiRun.Convergence)
	assert.Nil(t, f.Search)

	_, err = parse("sweep: {type: adaptive_search, search_space: [{path: concurrency, lo: 1, hi: 9, kind: int}], max_iterations: 5}",
		"multi_run: {num_runs: 4, convergence: {metric: request_latency, mode: distribution}}")
	require.ErrorContains(t, err, "multi_run.convergence.mode")
}
