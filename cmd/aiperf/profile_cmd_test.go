package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// TestExplicitFlagsResolveAliases: whatever spelling the user typed (alias,
// short flag, --flag=value), explicitFlags names the option, so the flag
// overrides the YAML value.
func TestExplicitFlagsResolveAliases(t *testing.T) {
	var cli CLI
	parser, err := kong.New(&cli, append(parserOptions(), kong.Exit(func(int) { t.Fatal("kong exited") }))...)
	require.NoError(t, err)
	kctx, err := parser.Parse([]string{"profile", "--isl", "32", "--osl=8", "-m", "m", "-u", "http://a:1", "-u", "http://b:1",
		"--num-requests", "5", "-HX-Trace:1", "--isl-stddev", "2", "--ui", "none", "--reset-kv-cache"})
	require.NoError(t, err)

	got := explicitFlags(kctx)
	for _, name := range []string{"synthetic_input_tokens_mean", "output_tokens_mean", "model", "url", "request_count",
		"header", "synthetic_input_tokens_stddev", "reset_kv_cache"} {
		assert.Contains(t, got, name)
		_, ok := plan.LookupOption(name)
		assert.True(t, ok, "%s is a profile option", name)
	}
	assert.NotContains(t, got, "concurrency", "flags not given are not listed")

	yaml := plan.NewProfile()
	yaml.SyntheticInputTokensMean = 1024
	yaml.Concurrency = plan.Ptr(3)
	require.NoError(t, yaml.Overlay(&cli.Profile.Profile, got))
	assert.Equal(t, 32, yaml.SyntheticInputTokensMean, "--isl overrides the YAML value")
	assert.Equal(t, 8, *yaml.OutputTokensMean)
	assert.Equal(t, 5, *yaml.RequestCount, "--num-requests overrides the YAML value")
	assert.Equal(t, []string{"http://a:1", "http://b:1"}, yaml.URL)
	assert.Equal(t, 3, *yaml.Concurrency, "a flag not given keeps the YAML value")
}

func TestRedactedCommand(t *testing.T) {
	p := plan.NewProfile()
	p.APIKey = "sk-key"
	p.Header = []string{"Authorization: Bearer tok-1", "X-Trace:keep-me"}
	p.URL = []string{"http://user:pw@h:1", "http://u2:hunt%65r2@h:2"}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"separate values", []string{"profile", "--api-key", "sk-key", "-H", "Authorization: Bearer tok-1", "-H", "X-Trace:keep-me"},
			"aiperf profile --api-key '<redacted>' -H 'Authorization: <redacted>' -H X-Trace:keep-me"},
		{"inline values", []string{"profile", "--api-key=sk-key", "--header=Authorization: Bearer tok-1"},
			"aiperf profile '--api-key=<redacted>' '--header=Authorization: <redacted>'"},
		{"attached short flag", []string{"profile", "-HAuthorization: Bearer tok-1", "-vH", "Authorization: Bearer tok-1"},
			"aiperf profile '-HAuthorization: <redacted>' -vH 'Authorization: <redacted>'"},
		{"URL credentials", []string{"profile", "-u", "http://user:pw@h:1", "--url=http://user:pw@h:1", "-uhttp://user:pw@h:1"},
			"aiperf profile -u 'http://<redacted>@h:1' '--url=http://<redacted>@h:1' '-uhttp://<redacted>@h:1'"},
		{"escaped URL password", []string{"profile", "-u", "http://u2:hunt%65r2@h:2"}, "aiperf profile -u 'http://<redacted>@h:2'"},
		// Each argument is one word of the shell, so the command runs again
		// as it was given: a value with spaces or quotes is quoted.
		{"shell words", []string{"profile", "--goodput", "time_to_first_token:200 inter_token_latency:20", "--extra-inputs",
			`{"stop": "it's"}`, "--isl", "32"},
			`aiperf profile --goodput 'time_to_first_token:200 inter_token_latency:20' --extra-inputs '{"stop": "it'\''s"}' --isl 32`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := redactedCommand(tt.args, p.URL, p.Redactor())
			assert.Equal(t, tt.want, got)
			for _, secret := range []string{"sk-key", "tok-1", "pw@", "hunt"} {
				assert.NotContains(t, got, secret)
			}
		})
	}
}

// TestDefaultArtifactDirNamesYAMLPhases: a YAML file's profiling phases name
// the default directory, so two files with different loads do not write
// into one.
func TestDefaultArtifactDirNamesYAMLPhases(t *testing.T) {
	p := plan.NewProfile()
	p.Model = []string{"org/model"}
	assert.Equal(t, "artifacts/org_model-openai-chat-concurrency1", defaultArtifactDir(p, ""))
	p.Concurrency = plan.Ptr(8)
	assert.Equal(t, "artifacts/org_model-openai-chat-concurrency8", defaultArtifactDir(p, ""))
	p.Phases = []plan.Phase{{Kind: plan.KindWarmup, Concurrency: 2}, {Kind: plan.KindProfiling, Concurrency: 16},
		{Kind: plan.KindProfiling, Rate: 2.5}}
	assert.Equal(t, "artifacts/org_model-openai-chat-concurrency16-request_rate2.5", defaultArtifactDir(p, ""))
	assert.Equal(t, "artifacts/org_model-openai-chat-concurrency16-request_rate2.5-after_v2", defaultArtifactDir(p, "after/v2"),
		"a --name keeps the run's exports apart from another name's")
}

// TestDefaultArtifactDirIsAIPerfs: without --name the directory is the
// one AIPerf's UserConfig names (_get_artifact_stimulus and
// _get_artifact_model_name), so scripts that build the path find it.
func TestDefaultArtifactDirIsAIPerfs(t *testing.T) {
	base := plan.NewProfile()
	base.Model = []string{"Qwen/Qwen3-0.6B"}
	dir := func(edit func(p *plan.Profile)) string {
		p := base
		edit(&p)
		return strings.TrimPrefix(defaultArtifactDir(p, ""), "artifacts/Qwen_Qwen3-0.6B")
	}
	assert.Equal(t, "-openai-chat-concurrency100-request_rate200.0", dir(func(p *plan.Profile) {
		p.Concurrency, p.RequestRate = plan.Ptr(100), plan.Ptr(200.0)
	}))
	assert.Equal(t, "-openai-chat-request_rate2.5", dir(func(p *plan.Profile) { p.RequestRate = plan.Ptr(2.5) }))
	assert.Equal(t, "-openai-chat-request_rate1e-05", dir(func(p *plan.Profile) { p.RequestRate = plan.Ptr(0.00001) }))
	assert.Equal(t, "-openai-chat-user_centric-users4-qps10.0", dir(func(p *plan.Profile) {
		p.UserCentricRate, p.NumUsers = plan.Ptr(10.0), plan.Ptr(4)
	}))
	assert.Equal(t, "-openai-chat-fixed_schedule", dir(func(p *plan.Profile) {
		p.InputFile, p.FixedSchedule = "trace.jsonl", true
	}))
	trace := filepath.Join(t.TempDir(), "trace.jsonl")
	require.NoError(t, os.WriteFile(trace, []byte(`{"timestamp": 0, "input_length": 10, "output_length": 2}`+"\n"), 0o600))
	assert.Equal(t, "-openai-chat-fixed_schedule", dir(func(p *plan.Profile) {
		p.InputFile, p.CustomDatasetType = trace, "mooncake_trace"
	}), "a trace with timestamps is replayed on its schedule without --fixed-schedule")
	assert.Equal(t, "_multi-openai-chat-concurrency1", dir(func(p *plan.Profile) {
		p.Model = []string{"Qwen/Qwen3-0.6B", "other"}
	}))
}

// TestAIPerfSpellings: AIPerf's spellings of the options we implement parse
// to them (docs/cli-options.md of AIPerf), and -m a,b is two models as in
// AIPerf.
func TestAIPerfSpellings(t *testing.T) {
	var cli CLI
	parser, err := kong.New(&cli, append(parserOptions(), kong.Exit(func(int) { t.Fatal("kong exited") }))...)
	require.NoError(t, err)
	_, err = parser.Parse([]string{"profile", "--model-names", "a,b", "--custom-endpoint", "/v1/x", "--num-prompts", "7",
		"--prompt-input-tokens-mean", "32", "--prompt-input-tokens-stddev", "2", "--prompt-output-tokens-mean", "8",
		"--prompt-output-tokens-stddev", "1", "--num-warmup-requests", "3", "--output-artifact-dir", "out",
		"--ui-type", "none", "--arrival-pattern", "constant", "-vv", "--extra-verbose", "--log-level", "DEBUG"})
	require.NoError(t, err)
	p := cli.Profile.Profile
	assert.Equal(t, []string{"a", "b"}, p.Model)
	assert.Equal(t, "/v1/x", p.Endpoint)
	assert.Equal(t, 7, p.NumDatasetEntries)
	assert.Equal(t, 32, p.SyntheticInputTokensMean)
	assert.Equal(t, 2.0, p.SyntheticInputTokensStddev)
	assert.Equal(t, 8, *p.OutputTokensMean)
	assert.Equal(t, 1.0, p.OutputTokensStddev)
	assert.Equal(t, 3, *p.WarmupRequestCount)
	assert.Equal(t, "constant", p.RequestRateMode)
	assert.Equal(t, "out", cli.Profile.ArtifactDir)
	assert.Equal(t, "none", cli.Profile.UI)
	assert.Equal(t, 2, cli.Profile.Verbose)
	assert.True(t, cli.Profile.verbose())
}
