package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

func ptr(n int) *int { return &n }

// groupRun is minimalRun's two requests with the server's usage (cache
// reads included), speculative decoding and max_tokens the server fell
// short of, and GPU energy.
func groupRun(cached bool) (*bytes.Buffer, string) {
	run := minimalRun()
	for i := range run.Records {
		r := &run.Records[i]
		r.Usage = &metrics.Usage{PromptTokens: 1000, CompletionTokens: r.OutputTokens, TotalTokens: new(1000 + r.OutputTokens)}
		if cached {
			r.Usage.CachedTokens = ptr(512 * i)
		}
		r.RequestedOutputTokens = 200
		r.SpecDecode = &metrics.SpecDecode{Engine: "vllm", MeanAcceptanceLength: 2.5, DraftAcceptanceRate: 0.5,
			NumAcceptedDraftTokens: 6, NumDraftTokens: 12, NumSpecSteps: 4, AcceptanceHistogram: map[int]int{0: 1, 2: 2, 9: 1}}
	}
	run.Profiling = metrics.Summarize(run.Records, false)
	metrics.AddEnergy(&run.Profiling, metrics.GPUEnergy{PowerW: 300, HasPower: true, EnergyJ: 450, HasEnergy: true}, 2)
	var buf bytes.Buffer
	Console(Wide(&buf), run)
	return &buf, buf.String()
}

// TestConsoleGroupTables: beside the main table, AIPerf's Usage table (the
// prompt cache's reads among the server's counts), its Spec Decode table
// with the pooled accepted-draft histogram, the GPU power-efficiency
// section and the OSL mismatch warning; the main table keeps only
// AIPerf's console metrics.
func TestConsoleGroupTables(t *testing.T) {
	_, out := groupRun(true)
	for _, want := range []string{
		UsageTitle, "Usage Prompt Cache Read Tokens (tokens)", "Total Usage Prompt Cache Read Tokens (tokens)",
		"Overall Usage Prompt Cache Read % (%)", "│    25.60 │", // 512 of 2,000 prompt tokens
		SpecDecodeTitle, "Acceptance Length (ratio)", "Token-Weighted Acceptance Length (ratio)",
		"Accepted drafts per step (% of steps): 0: 25%   1: 0%   2: 50%   3: 0%", "7: 0%   >=8: 25%",
		PowerTitle, "Output Tokens per Joule (tokens/J)", "Total GPU Energy (J)", "Energy per User (joules/user)",
		OSLTitle, "2 of 2 requests (100.0%) have an output length differing from the requested one",
		"min(requested × 5%, 50)", "average mismatch: -35.5%", "ignore_eos:true",
	} {
		assert.Contains(t, out, want)
	}
	assert.NotContains(t, out, "no prompt-cache read tokens were seen")
	main := out[:strings.Index(out, EffectiveTitle)]
	for _, hidden := range []string{"Usage Prompt Tokens", "OSL Mismatch Diff", "Draft Tokens", "Prefill Throughput"} {
		assert.NotContains(t, main, hidden, "exported, not in the main table")
	}
	assert.Less(t, strings.Index(out, "Usage Prompt Tokens"), strings.Index(out, "Usage Prompt Cache Read Tokens"),
		"AIPerf's display order")
	assert.Less(t, strings.Index(out, "Usage Prompt Cache Read Tokens"), strings.Index(out, "Usage Completion Tokens"))
}

// TestConsoleHintsAtCacheReporting: usage without cache reads gets
// AIPerf's hint to turn the server's cache reporting on.
func TestConsoleHintsAtCacheReporting(t *testing.T) {
	_, out := groupRun(false)
	assert.Contains(t, out, CacheReportingHint)
	assert.NotContains(t, out, "Cache Read")

	var buf bytes.Buffer
	Console(Wide(&buf), minimalRun())
	assert.NotContains(t, buf.String(), CacheReportingHint, "no usage, no hint")
	assert.NotContains(t, buf.String(), UsageTitle)
	assert.Equal(t, plan.KindProfiling, minimalRun().Records[0].PhaseKind)
}

// TestExportsCarrySpecDecode: the JSON export has AIPerf's pooled
// accepted-draft histogram, each JSONL record its acceptance struct.
func TestExportsCarrySpecDecode(t *testing.T) {
	run := minimalRun()
	r := &run.Records[0]
	r.Usage = &metrics.Usage{PromptTokens: 1000, CompletionTokens: 128, TotalTokens: new(1128)}
	r.SpecDecode = &metrics.SpecDecode{Engine: "vllm", MeanAcceptanceLength: 2.5, DraftAcceptanceRate: 0.5,
		NumAcceptedDraftTokens: 6, NumDraftTokens: 12, NumSpecSteps: 4, NumSpecTokens: ptr(3),
		AcceptanceHistogram: map[int]int{10: 1, 2: 2, 0: 1}}
	run.Profiling = metrics.Summarize(run.Records, false)

	var js bytes.Buffer
	require.NoError(t, WriteJSON(&js, run))
	var doc map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(js.Bytes(), &doc))
	assert.JSONEq(t, `{"0":1,"2":2,"10":1}`, string(doc["pooled_spec_decode_acceptance_histogram"]))
	assert.Contains(t, string(doc["pooled_spec_decode_acceptance_histogram"]), `"2": 2,`, "keys in numeric order")
	assert.JSONEq(t, `{"unit":"ratio","avg":2.5}`, string(doc["spec_decode_token_weighted_acceptance_length"]))
	assert.Contains(t, doc, "spec_decode_acceptance_length")

	var jl bytes.Buffer
	require.NoError(t, WriteJSONL(&jl, run))
	lines := strings.Split(strings.TrimSpace(jl.String()), "\n")
	require.Len(t, lines, 2)
	assert.Contains(t, lines[0], `},"spec_decode_acceptance":{"engine":"vllm","mean_acceptance_length":2.5,`+
		`"draft_acceptance_rate":0.5,"acceptance_histogram":{"0":1,"2":2,"10":1},"num_accepted_draft_tokens":6,`+
		`"num_draft_tokens":12,"num_spec_steps":4,"num_spec_tokens":3,"completion_tokens":128}}`, "no error key on success")
	assert.Contains(t, lines[0], `"spec_decode_acceptance_length":{"value":2.5,"unit":"ratio"}`)
	assert.NotContains(t, lines[1], "spec_decode", "the other request reported none")
}

// TestConsoleOSLMismatchTooLong: outputs past the cap are blamed on the
// cap, not on an early EOS.
func TestConsoleOSLMismatchTooLong(t *testing.T) {
	run := minimalRun()
	for i := range run.Records {
		run.Records[i].RequestedOutputTokens = 1 // every output is longer
	}
	run.Profiling = metrics.Summarize(run.Records, false)
	var buf bytes.Buffer
	Console(Wide(&buf), run)
	out := buf.String()
	assert.Contains(t, out, "Why, for outputs too long: the server did not apply the requested cap.")
	assert.Contains(t, out, "--use-legacy-max-tokens")
	assert.NotContains(t, out, "EOS")
}

// An OSL mismatch count or request count that is not a finite number (read
// back from a store another tool wrote) prints no warning with NaN% in it.
func TestOSLMismatchSkipsNonFiniteCounts(t *testing.T) {
	run := minimalRun()
	run.Profiling.Metrics = append(run.Profiling.Metrics,
		metrics.Metric{Tag: metrics.TagOSLMismatchCount, Value: math.Inf(1)},
		metrics.Metric{Tag: metrics.TagRequestCount, Value: math.Inf(1)})
	var buf bytes.Buffer
	Console(Wide(&buf), run)
	assert.NotContains(t, buf.String(), OSLTitle)
	assert.NotContains(t, buf.String(), "NaN")
}
