package metrics

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckUsage(t *testing.T) {
	rec := func(in, out, maxTokens int, u Usage) Record {
		return Record{InputTokens: in, OutputTokens: out, RequestedOutputTokens: maxTokens, Usage: &u}
	}
	withImage := func(r Record) Record {
		r.Media = &MediaStats{Images: 1}
		return r
	}
	tests := []struct {
		name      string
		r         Record
		untrusted string
	}{
		{"honest", rec(550, 64, 64, Usage{PromptTokens: 562, CompletionTokens: 64}), ""},
		{"tokenizers differ a little", rec(550, 60, 64, Usage{PromptTokens: 540, CompletionTokens: 64}), ""},
		{"tiny prompt, big chat template", rec(1, 5, 0, Usage{PromptTokens: 90, CompletionTokens: 5}), ""},
		{"hidden reasoning (OpenAI o-series)", rec(100, 20, 0, Usage{PromptTokens: 100, CompletionTokens: 9000, ReasoningTokens: 8980}), ""},
		{"more than max_tokens", rec(550, 64, 64, Usage{PromptTokens: 550, CompletionTokens: 5000}), "completion_tokens 5000 exceeds the 64 max tokens requested"},
		{"max_tokens slack", rec(550, 64, 64, Usage{PromptTokens: 550, CompletionTokens: 64 + 6 + 8}), ""},
		{"100x the client count", rec(550, 10, 0, Usage{PromptTokens: 550, CompletionTokens: 1_000_000}), "completion_tokens 1000000 is implausible beside the 10 tokens the client counted"},
		{"reasoning beyond completion", rec(550, 10, 0, Usage{PromptTokens: 550, CompletionTokens: 10, ReasoningTokens: 50}), "reasoning_tokens 50 exceeds completion_tokens 10"},
		{"prompt wildly short", rec(50_000, 10, 0, Usage{PromptTokens: 3, CompletionTokens: 10}), "prompt_tokens 3 is implausible beside the 50000 tokens the client sent"},
		{"already untrusted stays", rec(550, 10, 0, Usage{Untrusted: "completion_tokens is null"}), "completion_tokens is null"},
		{"no prompt tokens for a prompt", rec(16, 10, 0, Usage{PromptTokens: 0, CompletionTokens: 10}), "prompt_tokens is 0 for a prompt the client counted 16 tokens in"},
		{"no prompt, no prompt tokens", rec(0, 10, 0, Usage{PromptTokens: 0, CompletionTokens: 10}), ""},
		{"a short question about an image (the server counts the image)",
			withImage(rec(10, 10, 0, Usage{PromptTokens: 1_300, CompletionTokens: 10})), ""},
		{"with media, a prompt count below the text's", withImage(rec(5_000, 10, 0, Usage{PromptTokens: 3, CompletionTokens: 10})),
			"prompt_tokens 3 is implausible beside the 5000 tokens the client sent"},
		{"prompt 1e9 for 16 tokens", rec(16, 10, 0, Usage{PromptTokens: 1_000_000_000, CompletionTokens: 10}), "prompt_tokens 1000000000 is implausible beside the 16 tokens the client sent"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.r
			CheckUsage(&r)
			assert.Equal(t, tc.untrusted, r.Usage.Untrusted)
		})
	}
	failed := Record{Error: &Error{Type: "HTTPError"}, Usage: &Usage{CompletionTokens: 1 << 30}}
	CheckUsage(&failed)
	assert.Empty(t, failed.Usage.Untrusted, "a failed request's usage is not examined")
	none := Record{}
	CheckUsage(&none)
	assert.Nil(t, none.Usage)
	// A reply the client did not count has no count to judge the server's
	// by: only max_tokens bounds it.
	uncounted := Record{InputTokens: 16, Uncounted: true, RequestedOutputTokens: 500, Usage: &Usage{PromptTokens: 16, CompletionTokens: 400}}
	CheckUsage(&uncounted)
	assert.Empty(t, uncounted.Usage.Untrusted)
	uncounted.Usage.CompletionTokens = 5000
	CheckUsage(&uncounted)
	assert.Equal(t, "completion_tokens 5000 exceeds the 500 max tokens requested", uncounted.Usage.Untrusted)
}

// TestCheckUsageOfAnImage: an image reply's output_tokens (gpt-image-1:
// thousands for one image) are judged by neither the --osl the request did
// not send as max_tokens nor the text it did not bring; its prompt count
// is judged as any other.
func TestCheckUsageOfAnImage(t *testing.T) {
	img := Record{NoTokens: true, InputTokens: 16, RequestedOutputTokens: 8, Usage: &Usage{PromptTokens: 50, CompletionTokens: 4160}}
	CheckUsage(&img)
	assert.Empty(t, img.Usage.Untrusted)
	img.Usage.PromptTokens = 0
	CheckUsage(&img)
	assert.Equal(t, "prompt_tokens is 0 for a prompt the client counted 16 tokens in", img.Usage.Untrusted)
}

// TestUncountedReplyHasNoOSL: a reply the client did not count (an
// interrupted run) and no trusted usage gives an OSL of has no OSL, rather
// than 0: it is left out of every metric made from the OSL, and keeps its
// times; with trusted usage, its OSL is the server's.
func TestUncountedReplyHasNoOSL(t *testing.T) {
	counted := Record{SentNs: 0, EndNs: 10 * msNs, ResponseNs: StampsOf(2*msNs, 6*msNs, 10*msNs), InputTokens: 100,
		OutputTokens: 9, RequestedOutputTokens: 10}
	unknown := counted
	unknown.OutputTokens, unknown.Uncounted = 0, true
	refused := unknown
	refused.Usage = &Usage{PromptTokens: 100, CompletionTokens: 1, Untrusted: "completion_tokens is 1, fewer than the 3 chunk(s)"}
	server := unknown
	server.Usage = &Usage{PromptTokens: 100, CompletionTokens: 11}
	assert.False(t, OSLKnown(&unknown))
	assert.False(t, OSLKnown(&refused))
	assert.True(t, OSLKnown(&server))
	assert.True(t, OSLKnown(&counted))
	tt := Times(&unknown, true)
	assert.True(t, tt.NoOSL)
	assert.False(t, tt.HasITL)

	s := Summarize([]Record{counted, unknown, refused, server}, true)
	for tag, count := range map[string]int{TagOSL: 2, TagITL: 2, TagPerUserThroughput: 2, TagE2EOutputThroughput: 2, TagOSLMismatchDiffPct: 2,
		TagOutputTokenCount: 2, TagTTFT: 4, TagRequestLatency: 4, TagISL: 4} {
		m, ok := s.Get(tag)
		require.True(t, ok, tag)
		assert.Equal(t, count, m.Stats.Count, tag)
	}
	osl, _ := s.Get(TagOSL)
	assert.Equal(t, 9.0, osl.Stats.Min, "no OSL of 0")
	total, _ := s.Get(TagTotalOSL)
	assert.Equal(t, 20.0, total.Value, "the known OSLs: a lower bound")
	mismatch, _ := s.Get(TagOSLMismatchCount)
	assert.Equal(t, 2.0, mismatch.Value, "9 and the server's 11 miss the 10 asked; the unknown OSLs are not judged")
	rec := RecordMetrics(unknown, true)
	for _, v := range rec {
		assert.NotEqual(t, TagOSL, v.Tag, "the per-request export has no OSL for it")
	}
}

func TestUntrustedUsageFallsBackToClientCounts(t *testing.T) {
	ok := func(out int, u *Usage) Record {
		return Record{SentNs: 0, EndNs: 10 * msNs, ResponseNs: StampsOf(5*msNs, 10*msNs), InputTokens: 100, OutputTokens: out, Usage: u}
	}
	recs := []Record{
		ok(10, &Usage{PromptTokens: 100, CompletionTokens: 10}),                                                  // trusted, no discrepancy
		ok(10, &Usage{PromptTokens: 100, CompletionTokens: -5, Untrusted: "completion_tokens is negative (-5)"}), // refused
		ok(20, &Usage{PromptTokens: 130, CompletionTokens: 20}),                                                  // prompt 30% off: AIPerf's discrepancy
		ok(30, nil),
	}
	s := Summarize(recs, true)
	osl, _ := s.Get(TagOSL)
	require.NotNil(t, osl.Stats)
	assert.Equal(t, 10.0, osl.Stats.Min, "the refused -5 is not an OSL: the client's 10 stands in")
	assert.Equal(t, 70.0, osl.Stats.Sum)
	prompt, _ := s.Get(TagUsagePromptTokens)
	assert.Equal(t, 2, prompt.Stats.Count, "refused usage feeds no usage metric")
	d, ok2 := s.Get(TagUsageDiscrepancyCount)
	require.True(t, ok2)
	assert.Equal(t, 2.0, d.Value, "the refused usage and the 30% prompt difference")
	_, has := Summarize([]Record{ok(5, nil)}, true).Get(TagUsageDiscrepancyCount)
	assert.False(t, has, "no usage reported, no usage discrepancy count")
}

func TestMalformedChunksSummed(t *testing.T) {
	recs := []Record{
		{EndNs: 5, ResponseNs: StampsOf(5), MalformedChunks: 2},
		{EndNs: 5, Error: &Error{Type: "InvalidResponse"}, MalformedChunks: 3},
		{EndNs: 5, ResponseNs: StampsOf(5)},
	}
	m, ok := Summarize(recs, true).Get(TagMalformedChunkCount)
	require.True(t, ok)
	assert.Equal(t, 5.0, m.Value)
	_, ok = Summarize(recs[2:], true).Get(TagMalformedChunkCount)
	assert.False(t, ok)
}

// TestUsageProblemsNameTheAPIsFields: a usage problem names the counts as
// the server sent them: input_tokens and output_tokens for the Responses
// and Messages APIs (whose prompt count holds the cache's reads and
// writes), prompt_tokens and completion_tokens for chat's.
func TestUsageProblemsNameTheAPIsFields(t *testing.T) {
	check := func(names UsageNames, in, out, maxTokens int, u Usage, text int) string {
		u.Names = names
		r := Record{InputTokens: in, OutputTokens: out, RequestedOutputTokens: maxTokens, Usage: &u}
		CheckUsage(&r)
		CheckReceived(&r, text, 0)
		return r.Usage.Untrusted
	}
	for _, tc := range []struct {
		names                   UsageNames
		over, prompt0, absurdIn string
		reasoning, textTooShort string
	}{
		{ChatNames, "completion_tokens 7777 exceeds the 8 max tokens requested", "prompt_tokens is 0 for a prompt the client counted 16 tokens in",
			"prompt_tokens 3 is implausible beside the 50000 tokens the client sent", "reasoning_tokens 50 exceeds completion_tokens 10",
			"completion_tokens 590, more than the 30 byte(s) of generated text that arrived could hold"},
		{InputOutputNames, "output_tokens 7777 exceeds the 8 max tokens requested", "input_tokens is 0 for a prompt the client counted 16 tokens in",
			"input_tokens 3 is implausible beside the 50000 tokens the client sent", "reasoning_tokens 50 exceeds output_tokens 10",
			"output_tokens 590, more than the 30 byte(s) of generated text that arrived could hold"},
		{MessagesNames, "output_tokens 7777 exceeds the 8 max tokens requested", "input_tokens is 0 for a prompt the client counted 16 tokens in",
			"input_tokens with the cache's reads and writes, 3 is implausible beside the 50000 tokens the client sent",
			"reasoning_tokens 50 exceeds output_tokens 10", "output_tokens 590, more than the 30 byte(s) of generated text that arrived could hold"},
	} {
		assert.Equal(t, tc.over, check(tc.names, 16, 8, 8, Usage{PromptTokens: 16, CompletionTokens: 7777}, 40))
		assert.Equal(t, tc.prompt0, check(tc.names, 16, 8, 0, Usage{CompletionTokens: 8}, 40))
		assert.Equal(t, tc.absurdIn, check(tc.names, 50_000, 8, 0, Usage{PromptTokens: 3, CompletionTokens: 8}, 40))
		assert.Equal(t, tc.reasoning, check(tc.names, 550, 10, 0, Usage{PromptTokens: 550, CompletionTokens: 10, ReasoningTokens: 50}, 40))
		assert.Equal(t, tc.textTooShort, check(tc.names, 16, 590, 0, Usage{PromptTokens: 16, CompletionTokens: 590}, 30))
	}
}
