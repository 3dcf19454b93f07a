package plan

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func valid() Profile {
	p := NewProfile()
	p.Model = []string{"m"}
	p.URL = []string{"http://127.0.0.1:8000"}
	return p
}

func TestNewProfileAppliesDefaultTags(t *testing.T) {
	p := NewProfile()
	assert.Equal(t, "chat", p.EndpointType)
	assert.Equal(t, "poisson", p.RequestRateMode)
	assert.Equal(t, 550, p.SyntheticInputTokensMean)
	assert.Equal(t, 100, p.NumDatasetEntries)
	assert.Equal(t, 21600.0, p.RequestTimeoutSeconds)
	assert.Equal(t, []string{"http://localhost:8000"}, p.URL)
	assert.Nil(t, p.Concurrency, "optional values stay unset")
	assert.Nil(t, p.WarmupRequestCount)
}

func TestValidateAcceptsDefaults(t *testing.T) {
	p := valid()
	require.NoError(t, p.Check())
	p.ExtraInputs = []string{"n:1", `{"best_of":1,"temperature":0}`}
	p.MaxEventBytes = Ptr(1 << 20)
	require.NoError(t, p.Check(), "one choice, a larger event limit")
}

func TestValidateNamesEveryBadField(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Profile)
		want string
	}{
		{"no model", func(p *Profile) { p.Model = nil }, "--model is required"},
		{"empty model", func(p *Profile) { p.Model = []string{" "} }, "--model must not be empty"},
		{"no url", func(p *Profile) { p.URL = nil }, "--url is required"},
		{"bad scheme", func(p *Profile) { p.URL = []string{"ftp://h:1"} }, `--url must use http or https, got "ftp"`},
		{"no host", func(p *Profile) { p.URL = []string{"http://"} }, "--url has no host"},
		{"port only", func(p *Profile) { p.URL = []string{":8000"} }, `--url has no host: ":8000" (localhost:8000 for this machine)`},
		{"port out of range", func(p *Profile) { p.URL = []string{"http://127.0.0.1:70000"} }, `--url has port 70000, not one from 1 to 65535: "http://127.0.0.1:70000"`},
		{"port 0", func(p *Profile) { p.URL = []string{"localhost:0/v1"} }, `--url has port 0, not one from 1 to 65535`},
		{"two URLs in one", func(p *Profile) { p.URL = []string{"http://a:1,http://b:2"} }, `give each server its own --url (-u A -u B)`},
		{"two hosts in one", func(p *Profile) { p.URL = []string{"a:1,b:2"} }, `give each server its own --url (-u A -u B)`},
		{"metrics port", func(p *Profile) { p.ServerMetrics = []string{"http://h:99999/metrics"} }, `--server-metrics has port 99999`},
		{"endpoint type", func(p *Profile) { p.EndpointType = "generate" }, `--endpoint-type must be one of chat, cohere_rankings, completions, responses, messages, chat_embeddings, embeddings, hf_tei_rankings, huggingface_generate, image_generation, image_edit, video_generation, image_retrieval, nim_embeddings, nim_rankings, raw, solido_rag, template, audio_transcription, got "generate"`},
		{"endpoint path", func(p *Profile) { p.Endpoint = "v1/chat" }, `--endpoint must be a path starting with '/'`},
		{"header", func(p *Profile) { p.Header = []string{"NoColon"} }, `--header must be Key:Value with Key an HTTP header name and no control characters, got "NoColon"`},
		{"secret header hidden", func(p *Profile) { p.Header = []string{"Authorization Bearer x"} }, `--header must be Key:Value`},
		{"header name not a token", func(p *Profile) { p.Header = []string{"=Authorization:x"} }, `--header must be Key:Value with Key an HTTP header name and no control characters, got "<redacted>"`},
		{"header value with a newline", func(p *Profile) { p.Header = []string{"X-Trace:a\nb"} }, `--header must be Key:Value`},
		{"extra inputs", func(p *Profile) { p.ExtraInputs = []string{"novalue"} }, "--extra-inputs must be key:value or a JSON object"},
		{"extra inputs json", func(p *Profile) { p.ExtraInputs = []string{"{bad"} }, "--extra-inputs is not a valid JSON object"},
		{"several choices", func(p *Profile) { p.ExtraInputs = []string{"n:2"} }, "--extra-inputs n:2 asks for several choices per request: aiperf times choice 0 only"},
		{"several choices json", func(p *Profile) { p.ExtraInputs = []string{`{"best_of": 3}`} }, "--extra-inputs best_of:3 asks for several choices"},
		{"max event bytes", func(p *Profile) { p.MaxEventBytes = Ptr(100) }, "--max-event-bytes must be between 4096 and 1073741824 (omit it for 16 MiB), got 100"},
		{"max event bytes 0", func(p *Profile) { p.MaxEventBytes = Ptr(0) }, "--max-event-bytes must be between 4096 and 1073741824 (omit it for 16 MiB), got 0"},
		{"timeout", func(p *Profile) { p.RequestTimeoutSeconds = 0 }, "--request-timeout-seconds must be greater than 0, got 0"},
		{"concurrency", func(p *Profile) { p.Concurrency = Ptr(0) }, "--concurrency must be at least 1, got 0"},
		{"rate", func(p *Profile) { p.RequestRate = Ptr(-1.0) }, "--request-rate must be greater than 0, got -1"},
		{"rate mode", func(p *Profile) { p.RequestRateMode = "burst" }, `--request-rate-mode must be one of constant, poisson, gamma, concurrency_burst, got "burst"`},
		{"burst with a rate", func(p *Profile) { p.RequestRateMode, p.RequestRate = RateConcurrencyBurst, Ptr(5.0) },
			"--request-rate-mode concurrency_burst sends each request the instant a --concurrency slot is free and takes no --request-rate"},
		{"request count", func(p *Profile) { p.RequestCount = Ptr(0) }, "--request-count must be at least 1, got 0"},
		{"duration", func(p *Profile) { p.BenchmarkDuration = Ptr(0.0) }, "--benchmark-duration must be greater than 0, got 0"},
		{"grace negative", func(p *Profile) { p.BenchmarkDuration = Ptr(1.0); p.BenchmarkGracePeriod = Ptr(-1.0) }, "--benchmark-grace-period must be 0 or more, got -1"},
		{"grace without duration", func(p *Profile) { p.BenchmarkGracePeriod = Ptr(5.0) }, "--benchmark-grace-period needs --benchmark-duration"},
		{"warmup count zero", func(p *Profile) { p.WarmupRequestCount = Ptr(0) }, "--warmup-request-count must be greater than 0, got 0 (omit it for no warmup)"},
		{"warmup duration zero", func(p *Profile) { p.WarmupDuration = Ptr(0.0) }, "--warmup-duration must be greater than 0, got 0 (omit it for no warmup)"},
		{"isl", func(p *Profile) { p.SyntheticInputTokensMean = 0 }, "--synthetic-input-tokens-mean must be at least 1, got 0"},
		{"isl stddev", func(p *Profile) { p.SyntheticInputTokensStddev = -1 }, "--synthetic-input-tokens-stddev must be 0 or more, got -1"},
		{"osl", func(p *Profile) { p.OutputTokensMean = Ptr(0) }, "--output-tokens-mean must be at least 1, got 0"},
		{"osl stddev", func(p *Profile) { p.OutputTokensStddev = 3 }, "--output-tokens-stddev needs --output-tokens-mean"},
		{"entries", func(p *Profile) { p.NumDatasetEntries = 0 }, "--num-dataset-entries must be at least 1, got 0"},
		{"reset path relative", func(p *Profile) { p.ResetKVCachePath = []string{"flush_cache"} }, `--reset-kv-cache-path must be a relative path starting with '/', got "flush_cache"`},
		{"reset path absolute url", func(p *Profile) { p.ResetKVCachePath = []string{"/x?u=http://evil"} }, `--reset-kv-cache-path must be a relative path starting with '/'`},
		{"start path", func(p *Profile) { p.ServerProfilerStartPath = "http://h/start" }, `--server-profiler-start-path must be a relative path`},
		{"stop path", func(p *Profile) { p.ServerProfilerStopPath = "stop" }, `--server-profiler-stop-path must be a relative path`},
		{"reset timeout", func(p *Profile) { p.ResetKVCacheTimeoutSeconds = Ptr(0.0) }, "--reset-kv-cache-timeout-seconds must be greater than 0, got 0"},
		{"profiler timeout", func(p *Profile) { p.ServerProfilerTimeoutSeconds = Ptr(-2.0) }, "--server-profiler-timeout-seconds must be greater than 0, got -2"},
		{"max retry", func(p *Profile) { p.ResetKVCacheMaxRetrySeconds = Ptr(-1.0) }, "--reset-kv-cache-max-retry-seconds must be 0 or more, got -1"},
		{"dataset type", func(p *Profile) { p.InputFile, p.CustomDatasetType = "x.jsonl", "dag_json" },
			`--custom-dataset-type unknown type "dag_json": use one of single_turn, multi_turn, random_pool, mooncake_trace, bailian_trace, burst_gpt_trace, inputs_json, raw_payload, sagemaker_data_capture, baseten_trace, weka_trace, tracelab, dag_jsonl, or speed_bench_<config>`},
		{"dag fixed schedule", func(p *Profile) { p.InputFile, p.CustomDatasetType, p.FixedSchedule = "x.jsonl", "dag_jsonl", true },
			`--fixed-schedule cannot be used with --custom-dataset-type dag_jsonl: its turns have no timestamps`},
		{"dag users", func(p *Profile) {
			p.InputFile, p.CustomDatasetType, p.UserCentricRate, p.NumUsers = "x.jsonl", "dag_jsonl", Ptr(2.0), Ptr(2)
		}, `--user-centric-rate cannot be used with --custom-dataset-type dag_jsonl`},
		{"server", func(p *Profile) { p.Server = "tgi" }, `--server must be one of vllm, sglang, trtllm, llamacpp, got "tgi"`},
		{"trtllm reset", func(p *Profile) { p.Server = "trtllm"; p.ResetKVCache = true }, "--reset-kv-cache cannot be used with --server trtllm: trtllm-serve has no KV-cache reset route"},
		{"trtllm profiler", func(p *Profile) { p.Server = "trtllm"; p.ServerProfilerStartPath = "/start" }, "--server-profiler cannot be used with --server trtllm"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := valid()
			tc.edit(&p)
			err := p.Check()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "Bearer x", "secret header values never appear")
			require.NotEmpty(t, FieldErrors(err))
		})
	}
}

func TestValidateReportsAllProblemsAtOnce(t *testing.T) {
	p := valid()
	p.Model = nil
	p.Concurrency = Ptr(0)
	p.WarmupRequestCount = Ptr(0)
	fes := FieldErrors(p.Check())
	var fields []string
	for _, fe := range fes {
		fields = append(fields, fe.Field)
	}
	assert.ElementsMatch(t, []string{"model", "concurrency", "warmup_request_count"}, fields)
}

func TestValidatePhases(t *testing.T) {
	p := valid()
	p.Phases = []Phase{
		{Name: "w", Kind: KindWarmup, Concurrency: 2, Requests: 4, Seamless: true},
		{Name: "W", Kind: "measure", Rate: 5, RateMode: "burst", Requests: 0},
		{Name: "../x", Kind: KindWarmup, Concurrency: 1, Requests: 1},
	}
	err := p.Check()
	require.Error(t, err)
	for _, want := range []string{
		"phases[0].seamless is not allowed on the first phase",
		`phases[1].name "W" is used twice (names are unique without case)`,
		`phases[2].name "../x" is not a phase name`,
		`phases[1].kind must be warmup or profiling, got "measure"`,
		`phases[1].type must be constant, poisson or gamma for a rate phase, got "burst"`,
		"phases[1].requests or duration or sessions is required",
		"phases need at least one profiling phase",
	} {
		assert.Contains(t, err.Error(), want)
	}
}

func TestHooksResolve(t *testing.T) {
	p := valid()
	assert.False(t, p.ResetHook().Enabled)
	assert.False(t, p.ProfilerHook().Enabled)

	p.ResetKVCache = true
	assert.Equal(t, ResetHook{Enabled: true, Paths: []string{"/reset_prefix_cache"}, Timeout: 30 * time.Second, MaxRetry: time.Minute,
		Guessed: true}, p.ResetHook(), "the default route, chosen by neither a path nor --server, is a guess")

	p = valid()
	p.ResetKVCacheTimeoutSeconds = Ptr(5.0)
	assert.True(t, p.ResetHook().Enabled, "a timeout enables the hook")
	p = valid()
	p.ServerProfilerStopPath = "/stop"
	h := p.ProfilerHook()
	assert.True(t, h.Enabled, "a path enables the hook")
	assert.Equal(t, "/start_profile", h.StartPath)
	assert.Equal(t, "/stop", h.StopPath)

	p = valid()
	p.Server = "sglang"
	p.ResetKVCache = true
	assert.Equal(t, []string{"/flush_cache"}, p.ResetHook().Paths, "the server preset picks the route")
	assert.False(t, p.ResetHook().Guessed)
	p.ResetKVCachePath = []string{"/flush_cache?timeout=30"}
	assert.Equal(t, []string{"/flush_cache?timeout=30"}, p.ResetHook().Paths, "an explicit path beats the preset")
	require.NoError(t, p.Check(), "query strings are allowed")
}

func TestOriginsDedupeInOrder(t *testing.T) {
	p := valid()
	p.URL = []string{"http://a:8000/v1", "a:8000", "http://b:9000", "http://a:8000?x=1", "https://a", "https://a:443/x"}
	assert.Equal(t, []string{"http://a:8000", "http://b:9000", "https://a"}, p.Origins())
	assert.Equal(t, "http://b:9000/v1/chat/completions", p.RequestURLs()[2])
	p.EndpointType = EndpointCompletions
	assert.Equal(t, "http://a:8000/v1/completions", p.RequestURLs()[1])
	p.Endpoint = "/custom"
	assert.Equal(t, "http://b:9000/custom", p.RequestURLs()[2])

	p = valid()
	p.URL = []string{"http://h:1/v1", "http://h:1/v1/", "http://h:1/v1/chat/completions", "http://h:1/proxy", "http://h:1/proxy/v1"}
	assert.Equal(t, []string{
		"http://h:1/v1/chat/completions", "http://h:1/v1/chat/completions", "http://h:1/v1/chat/completions",
		"http://h:1/proxy/v1/chat/completions", "http://h:1/proxy/v1/chat/completions",
	}, p.RequestURLs(), "segments the URL already has are not repeated")
}

func TestPhaseList(t *testing.T) {
	p := valid()
	assert.Equal(t, []Phase{{Name: "profiling", Kind: KindProfiling, Concurrency: 1, Requests: 10}}, p.PhaseList(),
		"AIPerf's default: concurrency 1, max(10, 2×concurrency) requests")

	p.Concurrency = Ptr(8)
	p.WarmupRequestCount = Ptr(5)
	assert.Equal(t, []Phase{
		{Name: "warmup", Kind: KindWarmup, Concurrency: 8, Requests: 5, GracePeriod: -1},
		{Name: "profiling", Kind: KindProfiling, Concurrency: 8, Requests: 16},
	}, p.PhaseList())

	p = valid()
	p.RequestRate = Ptr(20.0)
	p.BenchmarkDuration = Ptr(60.0)
	assert.Equal(t, []Phase{{Name: "profiling", Kind: KindProfiling, Rate: 20, RateMode: RatePoisson, Duration: 60, GracePeriod: 30}}, p.PhaseList())
}

func TestRedacted(t *testing.T) {
	p := valid()
	p.APIKey = "sk-secret"
	p.Header = []string{"Authorization: Bearer sk-secret", "X-Api-Key:sk-secret", "X-Trace:keep"}
	p.URL = []string{"http://user:sk-secret@h:1"}
	r := p.Redacted()
	for _, s := range append(append([]string{r.APIKey}, r.Header...), r.URL...) {
		assert.NotContains(t, s, "sk-secret")
	}
	assert.Equal(t, "X-Trace:keep", r.Header[2])
	assert.Equal(t, "http://<redacted>@h:1", r.URL[0])
	assert.Equal(t, "sk-secret", p.APIKey, "the original is untouched")
}

func TestOptionSetAndOverlay(t *testing.T) {
	p := NewProfile()
	o, ok := LookupOption("isl")
	require.True(t, ok, "aliases resolve")
	assert.Equal(t, "synthetic_input_tokens_mean", o.Name)
	require.NoError(t, o.Set(&p, 64))
	assert.Equal(t, 64, p.SyntheticInputTokensMean)

	o, _ = LookupOption("concurrency")
	err := o.Set(&p, "8")
	require.Error(t, err)
	assert.Equal(t, `want int, got string "8"`, err.Error())
	require.NoError(t, o.Set(&p, 8.0))
	assert.Equal(t, 8, *p.Concurrency)
	assert.Error(t, o.Set(&p, 8.5))

	o, _ = LookupOption("url")
	require.NoError(t, o.Set(&p, "http://x:1"))
	assert.Equal(t, []string{"http://x:1"}, p.URL)

	yaml := valid()
	yaml.ResetKVCachePath = []string{"/flush_cache"}
	cli := NewProfile()
	cli.ResetKVCache = true
	cli.SyntheticInputTokensMean = 7
	require.NoError(t, yaml.Overlay(&cli, []string{"reset_kv_cache"}))
	assert.True(t, yaml.ResetKVCache)
	assert.Equal(t, []string{"/flush_cache"}, yaml.ResetKVCachePath, "a bare flag keeps the YAML path")
	assert.Equal(t, 550, yaml.SyntheticInputTokensMean, "only named options are overlaid")
}

func TestOverlayLoadFlagsOnAPhaseList(t *testing.T) {
	warmup := Phase{Name: "warmup", Kind: KindWarmup, Concurrency: 2, Requests: 4, GracePeriod: -1}
	profiling := Phase{Name: "profiling", Kind: KindProfiling, Concurrency: 2, Requests: 10}
	cli := NewProfile()
	cli.Concurrency = Ptr(8)
	cli.RequestRate = Ptr(20.0)
	cli.RequestCount = Ptr(50)
	cli.BenchmarkDuration = Ptr(5.0)
	cli.BenchmarkGracePeriod = Ptr(1.0)
	cli.WarmupRequestCount = Ptr(3)
	cli.RequestRateMode = RateConstant

	tests := []struct {
		name   string
		phases []Phase
		flags  []string
		want   []Phase
		errs   []string
	}{
		{name: "concurrency and count go to the profiling phase", phases: []Phase{warmup, profiling},
			flags: []string{"concurrency", "request_count", "synthetic_input_tokens_mean"},
			want:  []Phase{warmup, {Name: "profiling", Kind: KindProfiling, Concurrency: 8, Requests: 50}}},
		{name: "a rate keeps the concurrency as a cap and takes the default mode", phases: []Phase{profiling},
			flags: []string{"request_rate"},
			want:  []Phase{{Name: "profiling", Kind: KindProfiling, Concurrency: 2, Rate: 20, RateMode: RatePoisson, Requests: 10}}},
		{name: "explicit mode", phases: []Phase{profiling}, flags: []string{"request_rate_mode", "request_rate"},
			want: []Phase{{Name: "profiling", Kind: KindProfiling, Concurrency: 2, Rate: 20, RateMode: RateConstant, Requests: 10}}},
		{name: "a duration brings the default grace period", phases: []Phase{profiling}, flags: []string{"benchmark_duration"},
			want: []Phase{{Name: "profiling", Kind: KindProfiling, Concurrency: 2, Requests: 10, Duration: 5, GracePeriod: DefaultGracePeriod}}},
		{name: "or the one given", phases: []Phase{profiling}, flags: []string{"benchmark_grace_period", "benchmark_duration"},
			want: []Phase{{Name: "profiling", Kind: KindProfiling, Concurrency: 2, Requests: 10, Duration: 5, GracePeriod: 1}}},
		{name: "warmup flags are refused", phases: []Phase{warmup, profiling}, flags: []string{"warmup_request_count"},
			errs: []string{"--warmup-request-count cannot change the phases the config file lists: edit its warmup phase instead"}},
		{name: "several profiling phases are ambiguous", phases: []Phase{profiling, {Name: "p2", Kind: KindProfiling, Concurrency: 1, Requests: 1}},
			flags: []string{"concurrency", "model", "request_count"},
			errs: []string{
				"--concurrency cannot be applied: the config file lists 2 profiling phases; set it on a phase in the file",
				"--request-count cannot be applied: the config file lists 2 profiling phases; set it on a phase in the file",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := valid()
			p.Phases = tt.phases
			before := slices.Clone(tt.phases)
			err := p.Overlay(&cli, tt.flags)
			assert.Equal(t, before, tt.phases, "the caller's phase list is not modified")
			if tt.errs != nil {
				var got []string
				for _, fe := range FieldErrors(err) {
					got = append(got, fe.Error())
				}
				assert.Equal(t, tt.errs, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, p.Phases)
			require.NoError(t, p.Check())
		})
	}
	t.Run("without a phase list the flags only set options", func(t *testing.T) {
		p := valid()
		require.NoError(t, p.Overlay(&cli, []string{"concurrency", "warmup_request_count"}))
		assert.Equal(t, 8, *p.Concurrency)
		assert.Equal(t, 3, *p.WarmupRequestCount)
		assert.Nil(t, p.Phases)
	})
}

func TestSuggest(t *testing.T) {
	names := []string{"concurrency", "output_tokens_mean", "output_tokens_stddev", "url", "urls", "model"}
	tests := []struct{ name, want string }{
		{"concurency", ` (did you mean "concurrency"?)`},
		{"output_tokens", ` (did you mean "output_tokens_mean" or "output_tokens_stddev"?)`},
		{"urll", ` (did you mean "url" or "urls"?)`},
		{"modle", ` (did you mean "model"?)`},
		{"flux_capacitor", ""},
		{"x", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Suggest(tt.name, names))
		})
	}
	assert.Equal(t, ` (did you mean "a", "b" or "c"?)`, Suggest("z", []string{"c", "b", "a", "d", "a"}), "at most three, sorted, each once")
}

func TestCellIDAndLabel(t *testing.T) {
	a := []Param{{"concurrency", 4}, {"synthetic_input_tokens_mean", 128}}
	b := []Param{{"synthetic_input_tokens_mean", 128}, {"concurrency", 4}}
	assert.Equal(t, CellID("s", a), CellID("s", b), "order of parameters does not matter")
	assert.NotEqual(t, CellID("s", a), CellID("t", a))
	assert.Len(t, CellID("s", a), 12)
	assert.Equal(t, "concurrency_4__synthetic_input_tokens_mean_128", CellLabel(a))
	assert.Equal(t, "model_a-b__x_none", CellLabel([]Param{{"model", "a/b"}, {"x", nil}}))
	tr := Trial{Sweep: "my sweep", Cell: Cell{ID: "abc", Label: "c_1"}, Number: 2}
	assert.Equal(t, "abc/0002", tr.Key())
	assert.Equal(t, "my-sweep/c_1/trial_0002", tr.Dir())
	sw := Sweep{Name: "s", Trials: 2, Cells: []Cell{{ID: "1"}, {ID: "2"}}}
	trials := sw.TrialList()
	require.Len(t, trials, 4)
	assert.Equal(t, []int{1, 2, 1, 2}, []int{trials[0].Number, trials[1].Number, trials[2].Number, trials[3].Number})
	assert.True(t, strings.HasPrefix(trials[2].Cell.ID, "2"))
}

func TestPhaseString(t *testing.T) {
	assert.Equal(t, "warmup(concurrency 4, 40 requests)",
		Phase{Name: "warmup", Kind: KindWarmup, Concurrency: 4, Requests: 40}.String())
	assert.Equal(t, "steady(profiling, poisson 20 req/s, cap 16, 90s, seamless)",
		Phase{Name: "steady", Kind: KindProfiling, Rate: 20, RateMode: RatePoisson, Concurrency: 16, Duration: 90, Seamless: true}.String())
}

func TestSweepDigest(t *testing.T) {
	cell := func(isl int) Cell {
		p := valid()
		p.SyntheticInputTokensMean = isl
		params := []Param{{"synthetic_input_tokens_mean", isl}}
		return Cell{ID: CellID("s", params), Params: params, Profile: p}
	}
	a := Sweep{Name: "s", Trials: 2, Cells: []Cell{cell(128), cell(512)}}
	b := a
	b.Trials, b.CooldownSeconds = 5, 3
	assert.Equal(t, a.Digest(), b.Digest(), "more trials or a cooldown is the same plan")
	c := Sweep{Name: "s", Cells: []Cell{cell(128), cell(512)}}
	c.Cells[1].Profile.URL = []string{"http://other:1"}
	assert.NotEqual(t, a.Digest(), c.Digest(), "a different --set url is a different plan")
	d := Sweep{Name: "s", Cells: []Cell{cell(128), cell(512)}}
	d.Cells[0].Profile.APIKey = "sk-1"
	e := d
	e.Cells = []Cell{cell(128), cell(512)}
	e.Cells[0].Profile.APIKey = "sk-2"
	assert.Equal(t, d.Digest(), e.Digest(), "secrets are not part of the digest")
}

// TestSearchDigestLeavesIntegrationsOut: where a search's results are also
// sent (OTel, MLflow and its parent run, a metrics listener) is no part of
// what it runs, as for a sweep: a search resumed with other integration
// flags, or with the MLflow parent run of its new process, continues.
func TestSearchDigestLeavesIntegrationsOut(t *testing.T) {
	a := Search{Name: "s", Base: valid()}
	b := a
	b.Base.OtelURL, b.Base.MLflowTrackingURI, b.Base.MLflowParentRunID = "http://otel:4318", "http://mlflow:5000", "r1"
	b.Base.MetricsListen = "127.0.0.1:9090"
	assert.Equal(t, a.Digest(), b.Digest())
	c := a
	c.Base.URL = []string{"http://other:1"}
	assert.NotEqual(t, a.Digest(), c.Digest(), "what it runs is")
}

// TestPhaseUndriven: a concurrency phase that sends fewer requests than its
// concurrency never has that many in flight; a duration, a rate (whose
// concurrency is a cap) or sessions bound it otherwise.
func TestPhaseUndriven(t *testing.T) {
	assert.Equal(t, "its concurrency 8 is more than the 4 requests it sends: at most 4 are ever in flight",
		Phase{Concurrency: 8, Requests: 4}.Undriven())
	assert.Empty(t, Phase{Concurrency: 4, Requests: 4}.Undriven())
	assert.Empty(t, Phase{Concurrency: 8, Requests: 4, Duration: 10}.Undriven())
	assert.Empty(t, Phase{Concurrency: 8, Rate: 5, Requests: 4}.Undriven(), "a rate phase's concurrency is a cap")
	assert.Empty(t, Phase{Concurrency: 8, Requests: 4, Sessions: 2}.Undriven())
}

// TestPhaseRampShort: a ramp that cannot reach its target before the phase
// stops sending is flagged with the load it reaches: a concurrency ramp
// whose last slot opens at or after the duration's end (8 slots over 10 s,
// one every 1.43 s: 2 open in 2 s), a rate ramp still rising at the end of
// the duration (40 req/s over 10 s: 12 req/s at 3 s) or once its count has
// come due. A count under a concurrency ramp may end before the ramp opens
// the slots it could fill, which the count's message says.
func TestPhaseRampShort(t *testing.T) {
	assert.Equal(t, "its 10 s concurrency ramp opens one more of its 8 slots every 1.43 s, so only 2 are open before its "+
		"2 s duration ends: at most 2 are ever in flight, never 8", Phase{Concurrency: 8, ConcurrencyRamp: 10, Duration: 2}.RampShort())
	assert.NotEmpty(t, Phase{Concurrency: 8, ConcurrencyRamp: 10, Duration: 10}.RampShort(), "the last slot opens as it ends")
	assert.Empty(t, Phase{Concurrency: 8, ConcurrencyRamp: 10, Duration: 10.5}.RampShort())
	assert.Empty(t, Phase{Concurrency: 8, ConcurrencyRamp: 10, Requests: 6}.RampShort(), "no duration: the count's (Undriven)")
	assert.Empty(t, Phase{Concurrency: 8, Rate: 5, ConcurrencyRamp: 10, Duration: 2}.RampShort(), "a rate phase's cap")
	assert.Equal(t, "its 10 s rate ramp has reached only 12 req/s of its 40 req/s when its 3 s duration ends: it never "+
		"sends at its rate", Phase{Rate: 40, RateRamp: 10, Duration: 3}.RampShort())
	assert.Empty(t, Phase{Rate: 40, RateRamp: 10, Duration: 11}.RampShort())
	// 40 req/s over 10 s: ∫ rate ≈ 200 requests before the ramp ends.
	assert.Contains(t, Phase{Rate: 40, RateRamp: 10, Requests: 50}.RampShort(), "when its 50 requests have come due (about 5 s in)")
	assert.Empty(t, Phase{Rate: 40, RateRamp: 10, Requests: 250}.RampShort())

	assert.Equal(t, "its concurrency 8 is more than the 6 requests it sends: at most 6 are ever in flight, fewer if they "+
		"end before its 20 s concurrency ramp opens 6 slots (one every 2.86 s)", Phase{Concurrency: 8, ConcurrencyRamp: 20, Requests: 6}.Undriven())
	name, why := Undriven([]Phase{{Name: "warmup", Kind: KindWarmup, Concurrency: 8, ConcurrencyRamp: 10, Duration: 2},
		{Name: "profiling", Kind: KindProfiling, Rate: 40, RateRamp: 10, Duration: 3}})
	assert.Equal(t, "profiling", name)
	assert.Contains(t, why, "12 req/s of its 40 req/s")
}
