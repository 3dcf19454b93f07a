package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInputOptionsAreChecked(t *testing.T) {
	file := func(p *Profile) { p.InputFile = "trace.jsonl" }
	tests := []struct {
		name string
		edit func(*Profile)
		want string // "" when valid
	}{
		{"a trace", func(p *Profile) { file(p); p.CustomDatasetType = "mooncake_trace" }, ""},
		{"sessions", func(p *Profile) { p.ConversationNum = Ptr(20); p.ConversationTurnMean = 5; p.Concurrency = Ptr(4) }, ""},
		{"fixed schedule with offsets", func(p *Profile) {
			file(p)
			p.FixedSchedule, p.FixedScheduleStartOffset, p.FixedScheduleEndOffset, p.ReplaySpeedup = true, Ptr(10), Ptr(20), Ptr(2.0)
		}, ""},
		{"type without file", func(p *Profile) { p.CustomDatasetType = "multi_turn" }, "--custom-dataset-type needs --input-file"},
		{"public without file", func(p *Profile) { p.PublicDataset = "sharegpt" }, "--public-dataset needs --input-file"},
		{"public and custom", func(p *Profile) { file(p); p.PublicDataset, p.CustomDatasetType = "sharegpt", "single_turn" }, "--public-dataset cannot be used with --custom-dataset-type"},
		{"random corpus", func(p *Profile) { p.PromptCorpus = "random" }, ""},
		{"sonnet corpus on a file", func(p *Profile) { file(p); p.PromptCorpus = "sonnet" }, ""},
		{"coding corpus", func(p *Profile) { p.PromptCorpus = "coding" }, ""},
		{"unknown corpus", func(p *Profile) { p.PromptCorpus = "shakespeare" }, "--prompt-corpus"},
		{"random corpus on a file", func(p *Profile) { file(p); p.PromptCorpus = "random" }, "--prompt-corpus random shapes synthetic prompts only"},
		{"fixed without file", func(p *Profile) { p.FixedSchedule = true }, "--fixed-schedule needs --input-file"},
		{"fixed and no fixed", func(p *Profile) { file(p); p.FixedSchedule, p.NoFixedSchedule = true, true }, "--no-fixed-schedule cannot be used with --fixed-schedule"},
		{"offset without a schedule", func(p *Profile) { p.FixedScheduleEndOffset = Ptr(5) }, "--fixed-schedule-end-offset applies to a fixed schedule"},
		{"start after end", func(p *Profile) {
			file(p)
			p.FixedScheduleStartOffset, p.FixedScheduleEndOffset = Ptr(30), Ptr(20)
		}, "--fixed-schedule-start-offset must be at most --fixed-schedule-end-offset (20), got 30"},
		{"auto and start", func(p *Profile) { file(p); p.FixedScheduleAutoOffset, p.FixedScheduleStartOffset = true, Ptr(1) }, "--fixed-schedule-auto-offset cannot be used with --fixed-schedule-start-offset"},
		{"speedup zero", func(p *Profile) { file(p); p.ReplaySpeedup = Ptr(0.0) }, "--replay-speedup must be greater than 0"},
		{"sampling on a schedule", func(p *Profile) { file(p); p.FixedSchedule, p.DatasetSamplingStrategy = true, "random" }, "--dataset-sampling-strategy cannot be used with --fixed-schedule"},
		{"rate on a schedule", func(p *Profile) { file(p); p.FixedSchedule, p.RequestRate = true, Ptr(5.0) }, "--request-rate cannot be used with --fixed-schedule"},
		{"sessions and requests", func(p *Profile) { p.ConversationNum, p.RequestCount = Ptr(5), Ptr(5) }, "--conversation-num cannot be used with --request-count"},
		{"more slots than sessions", func(p *Profile) { p.ConversationNum, p.Concurrency = Ptr(2), Ptr(8) }, "--concurrency (8) cannot be greater than --conversation-num (2)"},
		{"multi-turn completions", func(p *Profile) { p.ConversationTurnMean, p.EndpointType = 3, EndpointCompletions }, "--conversation-turn-mean needs --endpoint-type chat, responses or messages"},
		{"negative delay", func(p *Profile) { p.ConversationTurnDelayMean = -1 }, "--conversation-turn-delay-mean must be between 0"},
		{"prefix half set", func(p *Profile) { p.PromptPrefixLength = 100 }, "--prompt-prefix-pool-size and --prompt-prefix-length go together"},
		{"two kinds of prefix", func(p *Profile) {
			p.PromptPrefixLength, p.PromptPrefixPoolSize, p.SharedSystemPromptLength = 10, 2, Ptr(100)
		}, "pick one"},
		{"synthetic shaping on a file", func(p *Profile) { file(p); p.ConversationTurnMean, p.SharedSystemPromptLength = 4, Ptr(10) },
			"--input-file cannot be used with --conversation-turn-mean, --shared-system-prompt-length"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := valid()
			tc.edit(&p)
			err := p.Check()
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestPhaseListForSessionsAndSchedules(t *testing.T) {
	p := valid()
	p.ConversationNum, p.Concurrency = Ptr(20), Ptr(4)
	ph := p.PhaseList()[0]
	assert.Equal(t, 20, ph.Sessions)
	assert.Zero(t, ph.Requests, "sessions, not a request count, end the phase")

	p = valid()
	p.InputFile, p.FixedSchedule, p.ReplaySpeedup = "t.jsonl", true, Ptr(4.0)
	p.WarmupRequestCount = Ptr(3)
	phases := p.PhaseList()
	require.Len(t, phases, 2)
	assert.False(t, phases[0].Fixed, "warmup never replays the schedule")
	assert.Equal(t, 1, phases[0].Concurrency)
	assert.True(t, phases[1].Fixed)
	assert.Equal(t, 4.0, phases[1].Speedup)
	assert.Zero(t, phases[1].Requests, "the schedule's entries are the count")
}

func TestScrapeTargets(t *testing.T) {
	p := valid()
	p.URL = []string{"http://gpu1:8000/v1", "gpu1:8000", "http://gpu2:9000"}
	p.ServerMetrics = []string{"gpu1:10001", "http://router:8080/custom"}
	p.GPUTelemetry = []string{"gpu1:9400"}
	server, gpu := p.ScrapeTargets()
	assert.Equal(t, []string{"http://gpu1:8000/metrics", "http://gpu2:9000/metrics", "http://gpu1:10001/metrics",
		"http://router:8080/custom"}, server, "each origin once, /metrics unless a path is given")
	assert.Equal(t, []string{"http://gpu1:9400/metrics"}, gpu)

	p.ServerMetrics, p.NoServerMetrics, p.GPUTelemetry = nil, true, nil
	server, gpu = p.ScrapeTargets()
	assert.Empty(t, server)
	assert.Empty(t, gpu)

	bad := valid()
	bad.ServerMetrics, bad.NoServerMetrics = []string{"ftp://x"}, true
	bad.ServerMetricsInterval = Ptr(0.0)
	bad.SliceDuration = Ptr(0.1)
	err := bad.Check()
	require.Error(t, err)
	for _, want := range []string{`--server-metrics must use http or https, got "ftp"`, "--no-server-metrics cannot be used with --server-metrics",
		"--server-metrics-interval must be between 0.01 and 3600 seconds, got 0", "--slice-duration must be at least the scrape interval (0.333 s), got 0.1"} {
		assert.Contains(t, err.Error(), want)
	}
}
