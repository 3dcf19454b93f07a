package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
)

func TestLoadFullFile(t *testing.T) {
	t.Setenv("AIPERF_TEST_KEY", "sk-test")
	f, err := Load("testdata/full.yaml")
	require.NoError(t, err)

	want := plan.NewProfile()
	want.RandomSeed = 7
	want.Model = []string{"my-org/my-model"}
	want.URL = []string{"http://10.0.0.5:8000", "http://10.0.0.5:8000/v1"}
	want.EndpointType = plan.EndpointChat
	want.Endpoint = "/v1/chat/completions"
	want.Streaming = true
	want.APIKey = "sk-test"
	want.Header = []string{"X-Tenant:team-a", "X-Trace:1"}
	want.RequestTimeoutSeconds = 600
	want.ExtraInputs = []string{`{"ignore_eos":true}`, `{"temperature":0.5}`}
	want.Server = "sglang"
	want.ResetKVCache = true
	want.ResetKVCachePath = []string{"/flush_cache?timeout=30"}
	want.ResetKVCacheTimeoutSeconds = plan.Ptr(45.0)
	want.ResetKVCacheMaxRetrySeconds = plan.Ptr(0.0)
	want.ServerProfiler = true
	want.NumDatasetEntries = 300
	want.SyntheticInputTokensMean = 1024
	want.SyntheticInputTokensStddev = 64
	want.OutputTokensMean = plan.Ptr(256)
	want.Tokenizer = "o200k_base"
	want.ServerMetricsFormats = []string{"json", "csv", "parquet"} // AIPerf's config default
	want.Phases = []plan.Phase{
		{Name: "warmup", Kind: plan.KindWarmup, Concurrency: 4, Requests: 40, GracePeriod: -1},
		{Name: "profiling", Kind: plan.KindProfiling, Concurrency: 16, Rate: 20, RateMode: plan.RatePoisson, Duration: 90, GracePeriod: 20},
		{Name: "tail", Kind: plan.KindProfiling, Rate: 5, RateMode: plan.RateConstant, Requests: 50, Seamless: true},
	}
	assert.Equal(t, want, f.Profile)
	assert.Equal(t, "./artifacts/poisson20", f.ArtifactDir)
	require.NoError(t, f.Profile.Check())
	assert.Equal(t, plan.ResetHook{Enabled: true, Paths: []string{"/flush_cache?timeout=30"}, Timeout: 45 * time.Second}, f.Profile.ResetHook())
	assert.Equal(t, plan.ProfilerHook{Enabled: true, StartPath: "/start_profile", StopPath: "/stop_profile", Timeout: 30 * time.Second},
		f.Profile.ProfilerHook())
	assert.Equal(t, []string{"http://10.0.0.5:8000"}, f.Profile.Origins())
}

func TestLoadSinglePhaseMapping(t *testing.T) {
	f, err := Load("testdata/single_phase.yaml")
	require.NoError(t, err)
	p := f.Profile
	assert.Equal(t, []string{"a", "b"}, p.Model)
	assert.Equal(t, plan.EndpointCompletions, p.EndpointType)
	assert.Equal(t, []plan.Phase{{Name: "profiling", Kind: plan.KindProfiling, Rate: 10, RateMode: plan.RatePoisson,
		Duration: 60, GracePeriod: plan.DefaultGracePeriod}}, p.Phases)
	assert.True(t, p.ResetKVCache)
	assert.Equal(t, plan.ProfilerHook{Enabled: true, StartPath: "/v1/admin/start_profile", StopPath: "/v1/admin/stop_profile",
		Timeout: 15 * time.Second}, p.ProfilerHook())
	assert.Empty(t, f.ArtifactDir)
	require.NoError(t, p.Check())
}

func TestLoadErrorsNameTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bench.yaml")
	require.NoError(t, os.WriteFile(path, []byte("benchmark:\n  endpoint:\n    urll: http://x\n"), 0o600))
	_, err := Load(path)
	require.EqualError(t, err, path+`:3: benchmark.endpoint: unknown key "urll" (did you mean "url"?)`)

	_, err = Load(filepath.Join(t.TempDir(), "missing.yaml"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// parse is Parse of lines joined by newlines, named bench.yaml.
func parse(lines ...string) (*File, error) {
	return Parse("bench.yaml", []byte(strings.Join(lines, "\n")+"\n"))
}

func TestErrors(t *testing.T) {
	t.Setenv("AIPERF_TEST_SECRET", "sk-do-not-print")
	tests := []struct {
		name string
		yaml []string
		errs []string // every line of the error, in order
	}{
		{"hook given a string", []string{
			"benchmark:",
			"  endpoint:",
			"    reset_kv_cache: yes",
		}, []string{`bench.yaml:3: benchmark.endpoint.reset_kv_cache: expected false | true | object, got string "yes"`}},
		{"hook given an int", []string{
			"benchmark:",
			"  endpoint:",
			"    server_profiler: 1",
		}, []string{`bench.yaml:3: benchmark.endpoint.server_profiler: expected false | true | object, got int 1`}},
		{"hook given a list", []string{
			"benchmark:",
			"  endpoint:",
			"    server_profiler: [/start]",
		}, []string{`bench.yaml:3: benchmark.endpoint.server_profiler: expected false | true | object, got list`}},
		{"unknown key in the reset object", []string{
			"benchmark:",
			"  endpoint:",
			"    reset_kv_cache:",
			"      path: /flush_cache",
			"      retries: 3",
		}, []string{`bench.yaml:5: benchmark.endpoint.reset_kv_cache: unknown key "retries" (expected one of: path, timeout_seconds, max_retry_seconds)`}},
		{"unknown key in the profiler object", []string{
			"benchmark:",
			"  endpoint:",
			"    server_profiler: {start_path: /a, stop_pth: /b}",
		}, []string{`bench.yaml:3: benchmark.endpoint.server_profiler: unknown key "stop_pth" (did you mean "stop_path"?)`}},
		{"type error inside a hook object", []string{
			"benchmark:",
			"  endpoint:",
			"    reset_kv_cache:",
			"      timeout_seconds: soon",
		}, []string{`bench.yaml:4: benchmark.endpoint.reset_kv_cache.timeout_seconds: expected number, got string "soon"`}},
		{"unknown top-level key", []string{
			"benchmarks:",
			"  model: m",
		}, []string{`bench.yaml:1: (top level): unknown key "benchmarks" (did you mean "benchmark"?)`}},
		{"unknown benchmark key", []string{
			"benchmark:",
			"  modle: m",
		}, []string{`bench.yaml:2: benchmark: unknown key "modle" (did you mean "model"?)`}},
		{"unknown endpoint key", []string{
			"benchmark:",
			"  model: m",
			"  endpoint:",
			"    url: http://x",
			"    type: chat",
			"",
			"    urll: http://y",
		}, []string{`bench.yaml:7: benchmark.endpoint: unknown key "urll" (did you mean "url"?)`}},
		{"unknown dataset, prompts and length keys", []string{
			"benchmark:",
			"  dataset:",
			"    entires: 3",
			"    prompts:",
			"      isl: {mean: 5, median: 4}",
			"      corpus: shakespeare",
		}, []string{
			`bench.yaml:3: benchmark.dataset: unknown key "entires" (did you mean "entries"?)`,
			`bench.yaml:5: benchmark.dataset.prompts.isl: unknown key "median" (did you mean "mean"?)`,
			`bench.yaml:6: benchmark.dataset.prompts.corpus: expected sonnet | coding | random, got "shakespeare"`,
		}},
		{"unknown phase and artifacts keys", []string{
			"benchmark:",
			"  phases:",
			"    - {name: p, concurency: 4, requests: 5}",
			"  artifacts: {dir: x, summary: [json], records: [jsonl], recods: false}",
		}, []string{
			`bench.yaml:3: benchmark.phases[0]: unknown key "concurency" (did you mean "concurrency"?)`,
			`bench.yaml:4: benchmark.artifacts: unknown key "recods" (did you mean "records"?)`,
		}},
		{"scalar type errors", []string{
			"random_seed: seven",
			"benchmark:",
			"  model: 5",
			"  endpoint:",
			"    streaming: \"yes\"",
			"    timeout: \"soon\"",
			"  dataset:",
			"    entries: 1.5",
			"  phases:",
			"    - {name: p, concurrency: four, rate: fast, seamless: 1}",
		}, []string{
			`bench.yaml:1: random_seed: expected int, got string "seven"`,
			`bench.yaml:3: benchmark.model: expected string, got int 5`,
			`bench.yaml:5: benchmark.endpoint.streaming: expected false | true, got string "yes"`,
			`bench.yaml:6: benchmark.endpoint.timeout: expected seconds or a duration such as 30s, 5m or 2h, got string "soon"`,
			`bench.yaml:8: benchmark.dataset.entries: expected int, got float 1.5`,
			`bench.yaml:10: benchmark.phases[0].concurrency: expected int, got string "four"`,
			`bench.yaml:10: benchmark.phases[0].rate: expected number, got string "fast"`,
			`bench.yaml:10: benchmark.phases[0].seamless: expected false | true, got int 1`,
		}},
		{"structure type errors", []string{
			"benchmark:",
			"  endpoint: http://x",
			"  model: [{name: m}]",
			"  phases: 3",
			"  dataset:",
			"    prompts: {isl: [1, 2], osl: {mean: 1.5}}",
		}, []string{
			`bench.yaml:2: benchmark.endpoint: expected an object, got string "http://x"`,
			`bench.yaml:3: benchmark.model[0]: expected string, got object`,
			`bench.yaml:4: benchmark.phases: expected a phase object or a list of phases, got int 3`,
			`bench.yaml:6: benchmark.dataset.prompts.isl: expected int, got list`,
			`bench.yaml:6: benchmark.dataset.prompts.osl.mean: expected int, got float 1.5`,
		}},
		{"enumerations", []string{
			"benchmark:",
			"  endpoint: {type: generate, server: tgi}",
			"  dataset: {type: files, prompts: {isl: {type: uniform, mean: 3}}}",
			"  phases:",
			"    - {name: w, kind: cooldown, type: ramp, concurrency: 1, requests: 1}",
		}, []string{
			`bench.yaml:2: benchmark.endpoint.type: expected chat | cohere_rankings | completions | responses | messages | chat_embeddings | embeddings | hf_tei_rankings | huggingface_generate | image_generation | image_edit | video_generation | image_retrieval | nim_embeddings | nim_rankings | raw | solido_rag | template | audio_transcription, got "generate"`,
			`bench.yaml:2: benchmark.endpoint.server: expected vllm | sglang | trtllm | llamacpp, got "tgi"`,
			`bench.yaml:3: benchmark.dataset.type: expected synthetic | file | public, got "files"`,
			`bench.yaml:3: benchmark.dataset.prompts.isl.type: expected normal | fixed, got "uniform"`,
			`bench.yaml:5: benchmark.phases[0].kind: expected warmup | profiling, got "cooldown"`,
			`bench.yaml:5: benchmark.phases[0].type: expected concurrency | poisson | gamma | constant | fixed_schedule | user_centric, got "ramp"`,
		}},
		{"phase rules", []string{
			"benchmark:",
			"  phases:",
			"    - {concurrency: 1, requests: 1}",
			"    - {name: b, type: poisson, concurrency: 2, requests: 1}",
			"    - {name: c, type: concurrency, rate: 3, requests: 1}",
			"    - not-a-phase",
		}, []string{
			`bench.yaml:3: benchmark.phases[0]: name is required`,
			`bench.yaml:4: benchmark.phases[1].type: poisson needs a rate`,
			`bench.yaml:5: benchmark.phases[2].rate: is not used by type concurrency: use type constant, poisson or gamma`,
			`bench.yaml:6: benchmark.phases[3]: expected an object, got string "not-a-phase"`,
		}},
		{"empty phase list", []string{
			"benchmark:",
			"  phases: []",
		}, []string{`bench.yaml:2: benchmark.phases: expected at least one phase`}},
		{"length object without mean", []string{
			"benchmark:",
			"  dataset: {prompts: {osl: {stddev: 3}}}",
		}, []string{`bench.yaml:2: benchmark.dataset.prompts.osl: mean is required`}},
		{"bad sweep and multi_run", []string{
			"benchmark: {model: m, phases: {concurrency: 2}}",
			"sweep: {type: zip, parameters: {concurrency: [16, 64], requests: [1]}}",
			"multi_run: {num_runs: 30}",
			"variables: {a: 1}",
		}, []string{
			"bench.yaml:2: sweep.parameters: a zip sweep pairs lists element-wise: concurrency has 2 values, requests has 1",
			"bench.yaml:3: multi_run.num_runs: must be between 1 and 10, got 30",
		}},
		{"an empty list of values", []string{
			"benchmark: {model: m, phases: {concurrency: 2, requests: 3}}",
			"sweep: {parameters: {concurrency: []}}",
		}, []string{"bench.yaml:2: sweep.parameters.concurrency: expected at least one value, got an empty list"}},
		{"a variation listed twice", []string{
			"benchmark: {model: m, phases: {concurrency: 2, requests: 3}}",
			"sweep: {type: zip, parameters: {concurrency: [2, 4, 2], requests: [1, 3, 1]}}",
		}, []string{
			"bench.yaml:2: sweep.parameters: variations 1 and 3 are the same (concurrency_2__requests_1): the same values are listed twice; " +
				"each variation is a cell with a directory of its own, so list them once",
		}},
		{"multi_run values profile would refuse", []string{
			"benchmark: {model: m, phases: {concurrency: 2}}",
			"multi_run: {num_runs: 3, confidence_level: 0, cooldown_seconds: -5}",
		}, []string{
			"bench.yaml:2: multi_run.confidence_level: must be between 0 and 1 (exclusive), e.g. 0.95, got 0",
			"bench.yaml:2: multi_run.cooldown_seconds: must be 0 or more, got -5",
		}},
		{"sweep and search cooldowns profile would refuse", []string{
			"benchmark: {model: m, phases: {concurrency: 2}}",
			"sweep: {type: grid, parameters: {concurrency: [1, 2]}, cooldown_seconds: 1e18}",
		}, []string{
			"bench.yaml:2: sweep.cooldown_seconds: must be at most 31536000 seconds (one year), got 1e+18",
		}},
		{"a search cooldown below 0", []string{
			"benchmark: {model: m, phases: {concurrency: 2}}",
			"sweep: {type: adaptive_search, planner: monotonic_sla, search_space: [{path: phases.profiling.concurrency, lo: 1, hi: 4, kind: int}], " +
				"sla_filters: [{metric: inter_token_latency, stat: avg, op: lt, threshold: 5}], max_iterations: 4, cooldown_seconds: -5}",
		}, []string{
			"bench.yaml:2: sweep.cooldown_seconds: must be 0 or more, got -5",
		}},
		{"a sweep path that does not resolve, an expression", []string{
			"benchmark: {model: m, phases: [{name: warmup, requests: 2}, {name: main, kind: profiling, requests: 4}]}",
			"sweep: {parameters: {phases.nosuch.rate: [1, 2], phases.main.requests: ['{{ 2 * n }}']}}",
			"variables: {n: 3, m: '{{ n > 2 }}'}",
		}, []string{
			`bench.yaml:2: sweep.parameters.phases.nosuch.rate: no phase named "nosuch" (the phases: warmup, main)`,
			`bench.yaml:3: variables.m: {{ n > 2 }}: unexpected ">": only arithmetic (+ - * / // % ** ~), parentheses and filters are supported`,
		}},
		{"an undefined variable", []string{
			"variables: {base_concurrency: 16}",
			"benchmark: {model: m, phases: {concurrency: '{{ base_concurrancy * 2 }}', requests: 4}}",
		}, []string{
			`bench.yaml:2: benchmark.phases.concurrency: {{ base_concurrancy * 2 }}: no variable base_concurrancy under variables: (did you mean "base_concurrency"?)`,
		}},
		{"repeated keys", []string{
			"random_seed: 1",
			"benchmark:",
			"  model: a",
			"  models: [b]",
			"  random_seed: 2",
			"  endpoint: {url: http://x, url: http://y}",
		}, []string{
			`bench.yaml:4: benchmark.models: repeats key "model" of line 3`,
			`bench.yaml:5: benchmark.random_seed: sets random_seed again (already set at line 1)`,
			`bench.yaml:6: benchmark.endpoint.url: repeats key "url" of line 6`,
		}},
		{"missing environment variable", []string{
			"benchmark:",
			"  endpoint:",
			"    api_key: ${AIPERF_TEST_UNSET_VAR}",
		}, []string{`bench.yaml:3: benchmark.endpoint.api_key: environment variable AIPERF_TEST_UNSET_VAR is not set (write ${AIPERF_TEST_UNSET_VAR:default} for a default)`}},
		{"environment values are not echoed", []string{
			"benchmark:",
			"  endpoint:",
			"    timeout: ${AIPERF_TEST_SECRET}",
		}, []string{`bench.yaml:3: benchmark.endpoint.timeout: expected seconds or a duration such as 30s, 5m or 2h, got string from the environment`}},
		{"header values are not echoed", []string{
			"benchmark:",
			"  endpoint:",
			"    headers: {Authorization: [Bearer, sk-do-not-print]}",
		}, []string{`bench.yaml:3: benchmark.endpoint.headers.Authorization: expected a header value, got list`}},
		{"schema version", []string{
			`schemaVersion: "1.0"`,
		}, []string{`bench.yaml:1: schemaVersion: expected "2.0" (AIPerf's current schema), got string "1.0"`}},
		{"top level is not an object", []string{
			"- benchmark",
		}, []string{`bench.yaml:1: (top level): expected an object, got list`}},
		{"syntax error", []string{
			"benchmark:",
			"  model: m",
			" endpoint: x",
		}, []string{`bench.yaml:3: invalid YAML: did not find expected key (in what begins on this line: the mistake is here or below)`}},
		{"unclosed flow mapping", []string{
			"benchmark:",
			"  model: m",
			"  endpoint:",
			"    url: http://127.0.0.1:8000",
			"    reset_kv_cache: {path: /x, timeout_seconds: 10",
			"  phases: {type: concurrency, concurrency: 1, requests: 2}",
		}, []string{`bench.yaml:5: invalid YAML: did not find expected ',' or '}' (in what begins on this line: the mistake is here or below)`}},
		{"stray closing brace", []string{
			"benchmark:",
			"  model: m",
			"  endpoint:",
			"    url: http://127.0.0.1:8000",
			`    reset_kv_cache: {path: "/a", timeout_seconds: 10}}`,
		}, []string{`bench.yaml:4: invalid YAML: did not find expected key (in what begins on this line: the mistake is here or below)`}},
		{"scanner error", []string{
			"benchmark:",
			"  model: m",
			"  endpoint: @x",
		}, []string{`bench.yaml:3: invalid YAML: found character that cannot start any token`}},
		{"two documents", []string{
			"benchmark: {model: a}",
			"---",
			"benchmark: {model: b}",
		}, []string{`bench.yaml:2: only one YAML document is allowed`}},
		{"empty file", nil, []string{`bench.yaml:1: the file is empty`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := parse(tt.yaml...)
			require.Error(t, err)
			assert.Nil(t, f)
			assert.Equal(t, tt.errs, strings.Split(err.Error(), "\n"))
			assert.NotContains(t, err.Error(), "sk-do-not-print")
		})
	}
}

func TestEnvironmentSubstitution(t *testing.T) {
	t.Setenv("AIPERF_TEST_HOST", "10.1.2.3")
	t.Setenv("AIPERF_TEST_NUM", "123")
	t.Setenv("AIPERF_TEST_EMPTY", "")
	t.Setenv("AIPERF_TEST_ON", "true")
	f, err := parse(
		"random_seed: ${AIPERF_TEST_NUM}",
		"benchmark:",
		"  model: ${AIPERF_TEST_NUM}",
		`  tokenizer: "${AIPERF_TEST_UNSET:cl100k_base}"`,
		"  endpoint:",
		"    url: http://${AIPERF_TEST_HOST}:${AIPERF_TEST_PORT:8000}",
		"    api_key: ${AIPERF_TEST_EMPTY:fallback}",
		"    timeout: ${AIPERF_TEST_UNSET:600}",
		"    headers:",
		"      X-Tenant: ${AIPERF_TEST_UNSET:}",
		"    reset_kv_cache: ${AIPERF_TEST_ON}",
		"    server_profiler: ${AIPERF_TEST_UNSET:false}",
		"    extra:", // block style: in a {flow mapping} the '}' of ${...} would end the mapping
		"      max_tokens: ${AIPERF_TEST_NUM}",
		"      note: '${AIPERF_TEST_NUM}'",
		"  phases:",
		"    concurrency: ${AIPERF_TEST_UNSET:4}",
		"    requests: 8",
	)
	require.NoError(t, err)
	p := f.Profile
	assert.Equal(t, int64(123), p.RandomSeed)
	assert.Equal(t, []string{"123"}, p.Model, "a substituted value is a string where a string is expected")
	assert.Equal(t, "cl100k_base", p.Tokenizer)
	assert.Equal(t, []string{"http://10.1.2.3:8000"}, p.URL)
	assert.Empty(t, p.APIKey, "a set but empty variable wins over the default")
	assert.Equal(t, 600.0, p.RequestTimeoutSeconds)
	assert.Equal(t, []string{"X-Tenant:"}, p.Header)
	assert.True(t, p.ResetKVCache)
	assert.False(t, p.ServerProfiler)
	assert.Equal(t, []string{`{"max_tokens":123}`, `{"note":"123"}`}, p.ExtraInputs, "quoted values stay strings")
	assert.Equal(t, 4, p.Phases[0].Concurrency)
}

func TestCamelCaseKeys(t *testing.T) {
	f, err := parse(
		`schemaVersion: "2.0"`,
		"randomSeed: 3",
		"benchmark:",
		"  endpoint: {url: http://x, apiKey: k, resetKvCache: {timeoutSeconds: 9}, serverProfiler: {startPath: /go}}",
		"  phases: {requestCount: 7, gracePeriod: 1, duration: 5, concurrency: 2}",
	)
	require.NoError(t, err)
	p := f.Profile
	assert.Equal(t, int64(3), p.RandomSeed)
	assert.Equal(t, "k", p.APIKey)
	assert.Equal(t, plan.Ptr(9.0), p.ResetKVCacheTimeoutSeconds)
	assert.Equal(t, "/go", p.ServerProfilerStartPath)
	assert.Equal(t, 7, p.Phases[0].Requests)
	assert.Equal(t, 1.0, p.Phases[0].GracePeriod)

	_, err = parse("benchmark:", "  endpoint: {api_key: a, apiKey: b}")
	require.EqualError(t, err, `bench.yaml:2: benchmark.endpoint.apiKey: repeats key "api_key" of line 2`)
}

func TestHeadersAndExtraForms(t *testing.T) {
	f, err := parse(
		"benchmark:",
		"  endpoint:",
		`    headers: ["X-A: b", "X-C:d"]`,
		`    extra: ["ignore_eos:true", '{"top_k": 5}']`,
	)
	require.NoError(t, err)
	assert.Equal(t, []string{"X-A: b", "X-C:d"}, f.Profile.Header)
	assert.Equal(t, []string{"ignore_eos:true", `{"top_k": 5}`}, f.Profile.ExtraInputs)

	f, err = parse(
		"benchmark:",
		"  endpoint:",
		"    headers: {X-Num: 5}",
		"    extra: {stop: [a, b], sampling: {top_p: 0.9}}",
	)
	require.NoError(t, err)
	assert.Equal(t, []string{"X-Num:5"}, f.Profile.Header)
	assert.Equal(t, []string{`{"stop":["a","b"]}`, `{"sampling":{"top_p":0.9}}`}, f.Profile.ExtraInputs)
	for _, e := range f.Profile.ExtraInputs {
		_, err := plan.ParseExtraInput(e)
		require.NoError(t, err)
	}
}

func TestPhaseDefaults(t *testing.T) {
	f, err := parse(
		"benchmark:",
		"  phases:",
		"    - {name: warmup, concurrency: 2, duration: 10}",
		"    - {name: steady, rate: 4, duration: 30}",
		"    - {name: warm-again, kind: warmup, type: constant, rate: 1, requests: 3}",
		"    - {name: burst, concurrency: 8, requests: 100, grace_period: 0, seamless: true}",
	)
	require.NoError(t, err)
	assert.Equal(t, []plan.Phase{
		{Name: "warmup", Kind: plan.KindWarmup, Concurrency: 2, Duration: 10, GracePeriod: -1},
		{Name: "steady", Kind: plan.KindProfiling, Rate: 4, RateMode: plan.RatePoisson, Duration: 30, GracePeriod: plan.DefaultGracePeriod},
		{Name: "warm-again", Kind: plan.KindWarmup, Rate: 1, RateMode: plan.RateConstant, Requests: 3, GracePeriod: -1},
		{Name: "burst", Kind: plan.KindProfiling, Concurrency: 8, Requests: 100, Seamless: true},
	}, f.Profile.Phases)
}

func TestValidateAfterLoad(t *testing.T) {
	f, err := parse(
		"benchmark:",
		"  model: m",
		"  endpoint: {url: http://x, reset_kv_cache: {path: 'http://evil/reset'}, server: trtllm, server_profiler: true}",
		"  phases:",
		"    - {name: first, concurrency: 1, requests: 1, seamless: true}",
	)
	require.NoError(t, err, "range and combination checks belong to Validate")
	var fields []string
	for _, fe := range plan.FieldErrors(f.Profile.Check()) {
		fields = append(fields, fe.Field)
	}
	assert.ElementsMatch(t, []string{"reset_kv_cache_path", "reset_kv_cache", "server_profiler", "phases[0].seamless"}, fields)
}

func TestAliasesAreFollowed(t *testing.T) {
	f, err := parse(
		"benchmark:",
		"  endpoint:",
		"    url: &u http://x",
		"    headers: {X-Origin: *u}",
		"  phases:",
		"    - &p {name: a, concurrency: 1, requests: 2}",
		"    - {name: b, concurrency: 3, requests: 4}",
	)
	require.NoError(t, err)
	assert.Equal(t, []string{"X-Origin:http://x"}, f.Profile.Header)
	assert.Len(t, f.Profile.Phases, 2)
}

func TestLoadBadFile(t *testing.T) {
	_, err := Load("testdata/bad.yaml")
	require.Error(t, err)
	assert.Equal(t, []string{
		`testdata/bad.yaml:12: benchmark.endpoint.reset_kv_cache: expected false | true | object, got string "yes"`,
		`testdata/bad.yaml:15: benchmark.endpoint.server_profiler: unknown key "path" (did you mean "stop_path" or "start_path"?)`,
		`testdata/bad.yaml:16: benchmark.endpoint: unknown key "urll" (did you mean "url"?)`,
		`testdata/bad.yaml:19: benchmark.phases[1].type: poisson needs a rate`,
		"testdata/bad.yaml:20: multi_run.num_runs: must be between 1 and 10, got 30",
	}, strings.Split(err.Error(), "\n"))
	var cerr *Error
	require.ErrorAs(t, err, &cerr)
	assert.Equal(t, Error{File: "testdata/bad.yaml", Line: 12, Path: "benchmark.endpoint.reset_kv_cache",
		Msg: `expected false | true | object, got string "yes"`}, *cerr)
}
