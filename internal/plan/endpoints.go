package plan

import (
	"fmt"
	"slices"
	"strings"
)

// Endpoint types beyond chat and completions, with AIPerf's names.
const (
	EndpointEmbeddings          = "embeddings"
	EndpointChatEmbeddings      = "chat_embeddings"
	EndpointNIMEmbeddings       = "nim_embeddings"
	EndpointNIMRankings         = "nim_rankings"
	EndpointHFTEIRankings       = "hf_tei_rankings"
	EndpointCohereRankings      = "cohere_rankings"
	EndpointResponses           = "responses"
	EndpointMessages            = "messages"
	EndpointHuggingFaceGenerate = "huggingface_generate"
	EndpointTemplate            = "template"
	EndpointRaw                 = "raw"
	EndpointImageGeneration     = "image_generation"
	EndpointImageEdit           = "image_edit"
	EndpointVideoGeneration     = "video_generation"
	EndpointImageRetrieval      = "image_retrieval"
	EndpointSolidoRAG           = "solido_rag"
	// EndpointAudioTranscription uploads each request's audio as a
	// multipart/form-data file (OpenAI's /v1/audio/transcriptions).
	EndpointAudioTranscription = "audio_transcription"
)

// EndpointSpec is what AIPerf's plugin registry says of one endpoint type.
type EndpointSpec struct {
	// Path is appended to every --url ("" for template and raw: the URL is
	// used as it is); StreamPath replaces it when streaming (TGI).
	Path, StreamPath string
	// Streams: the API can stream; --streaming is ignored (with a notice)
	// for a type that cannot.
	Streams bool
	// Tokens: the API generates tokens, so the output metrics (OSL, TTFT,
	// ITL, output throughput) apply; embeddings and rankings have none.
	Tokens bool
	// Rankings: each request is a query and passages
	// (--rankings-passages-*, --rankings-query-*).
	Rankings bool
	// Batch: a request carries --prompt-batch-size texts.
	Batch bool
	// Messages: the body carries a conversation (a system prompt, a
	// session's history).
	Messages bool
	// Form: each body is multipart/form-data with a file part (image_edit's
	// reference image, audio_transcription's audio), never JSON.
	Form bool
}

var endpointSpecs = map[string]EndpointSpec{
	EndpointChat:                {Path: "/v1/chat/completions", Streams: true, Tokens: true, Messages: true},
	EndpointCompletions:         {Path: "/v1/completions", Streams: true, Tokens: true},
	EndpointEmbeddings:          {Path: "/v1/embeddings", Batch: true},
	EndpointChatEmbeddings:      {Path: "/v1/embeddings", Messages: true},
	EndpointNIMEmbeddings:       {Path: "/v1/embeddings", Batch: true},
	EndpointNIMRankings:         {Path: "/v1/ranking", Rankings: true},
	EndpointHFTEIRankings:       {Path: "/rerank", Rankings: true},
	EndpointCohereRankings:      {Path: "/v2/rerank", Rankings: true},
	EndpointResponses:           {Path: "/v1/responses", Streams: true, Tokens: true, Messages: true},
	EndpointMessages:            {Path: "/v1/messages", Streams: true, Tokens: true, Messages: true},
	EndpointHuggingFaceGenerate: {Path: "/generate", StreamPath: "/generate_stream", Streams: true, Tokens: true},
	EndpointTemplate:            {Streams: true, Tokens: true},
	EndpointRaw:                 {Streams: true, Tokens: true},
	EndpointImageGeneration:     {Path: "/v1/images/generations"},
	EndpointImageEdit:           {Path: "/v1/images/edits", Form: true},
	EndpointVideoGeneration:     {Path: "/v1/videos"},
	EndpointImageRetrieval:      {Path: "/v1/infer"},
	EndpointSolidoRAG:           {Path: "/rag/api/prompt", Tokens: true},
	EndpointAudioTranscription:  {Path: "/v1/audio/transcriptions", Form: true},
}

// EndpointTypes lists the --endpoint-type values, in AIPerf's order.
var EndpointTypes = []string{EndpointChat, EndpointCohereRankings, EndpointCompletions, EndpointResponses,
	EndpointMessages, EndpointChatEmbeddings, EndpointEmbeddings, EndpointHFTEIRankings,
	EndpointHuggingFaceGenerate, EndpointImageGeneration, EndpointImageEdit, EndpointVideoGeneration, EndpointImageRetrieval, EndpointNIMEmbeddings, EndpointNIMRankings,
	EndpointRaw, EndpointSolidoRAG, EndpointTemplate, EndpointAudioTranscription}

// Spec is the profile's endpoint type's spec (the zero spec for an unknown
// type, which Check refuses).
func (p *Profile) Spec() EndpointSpec { return endpointSpecs[p.EndpointType] }

// SpecOf is the spec of an endpoint type (the zero spec for an unknown
// one).
func SpecOf(endpointType string) EndpointSpec { return endpointSpecs[endpointType] }

// Streams reports whether requests stream: --streaming on a type that can.
func (p *Profile) Streams() bool { return p.Streaming && p.Spec().Streams }

// AnthropicVersion is the anthropic-version header sent to a messages
// endpoint unless a --header gives one.
const AnthropicVersion = "2023-06-01"

// Rankings flag defaults (AIPerf's).
const (
	DefaultRankingsPassages    = 1
	DefaultRankingsTokens      = 550
	DefaultPromptBatchSize     = 1
	TemplateKey, ResponseField = "payload_template", "response_field"
)

// checkEndpoint checks the endpoint type and the options that belong to
// some types only.
func (v *validator) checkEndpoint(p *Profile) {
	if _, ok := endpointSpecs[p.EndpointType]; !ok {
		v.add("endpoint_type", fmt.Sprintf("must be one of %s, got %q", strings.Join(EndpointTypes, ", "), p.EndpointType))
		return
	}
	spec := p.Spec()
	rankings := map[string]*int{
		"rankings_passages_mean": p.RankingsPassagesMean, "rankings_passages_stddev": p.RankingsPassagesStddev,
		"rankings_passages_prompt_token_mean": p.RankingsPassagesPromptTokenMean, "rankings_passages_prompt_token_stddev": p.RankingsPassagesPromptTokenStddev,
		"rankings_query_prompt_token_mean": p.RankingsQueryPromptTokenMean, "rankings_query_prompt_token_stddev": p.RankingsQueryPromptTokenStddev,
	}
	names := make([]string, 0, len(rankings))
	for name := range rankings {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		x := rankings[name]
		switch {
		case x == nil:
		case !spec.Rankings:
			v.add(name, fmt.Sprintf("applies to the rankings endpoint types (nim_rankings, hf_tei_rankings, cohere_rankings), not %s: remove it", p.EndpointType))
		case strings.HasSuffix(name, "_stddev"):
			v.intRange(name, x, 0, MaxTokens)
		default:
			v.intRange(name, x, 1, MaxTokens)
		}
	}
	if p.PromptBatchSize != DefaultPromptBatchSize {
		if spec.Batch {
			v.intRange("prompt_batch_size", &p.PromptBatchSize, 1, MaxDatasetEntries)
		} else {
			v.add("prompt_batch_size", fmt.Sprintf("applies to the embeddings and nim_embeddings endpoint types, not %s: remove it", p.EndpointType))
		}
	}
	switch {
	case spec.Rankings && p.InputFile != "":
		v.add("input_file", fmt.Sprintf("is not read by --endpoint-type %s: its queries and passages are synthesised (remove --input-file)", p.EndpointType))
	case spec.Batch && p.InputFile != "" && p.PromptBatchSize > 1:
		v.add("prompt_batch_size", "batches synthetic inputs only: with --input-file each record is one request (remove one of them)")
	}
	if !spec.Messages {
		for _, o := range []struct {
			name string
			set  bool
		}{{"shared_system_prompt_length", p.SharedSystemPromptLength != nil}, {"user_context_prompt_length", p.UserContextPromptLength != nil}} {
			v.check(!o.set, o.name, fmt.Sprintf("needs an endpoint type whose body carries messages (chat, responses, messages, chat_embeddings), not %s", p.EndpointType))
		}
	}
	if spec.Rankings {
		v.rankingsISL(p)
	}
	if spec.Rankings || p.PromptBatchSize > 1 {
		v.check(p.PromptPrefixPoolSize == 0, "prompt_prefix_pool_size", fmt.Sprintf("does not apply to the synthesised %s requests: remove it", p.EndpointType))
		v.check(!p.Multi(), "conversation_turn_mean", fmt.Sprintf("does not apply to %s requests, which are single-turn: remove it", p.EndpointType))
	}
	v.checkTemplate(p)
	v.audioTranscription(p)
	if p.EndpointType == EndpointRaw && p.InputFile == "" {
		v.add("endpoint_type", "raw sends each record's payload as it is: give --input-file with mooncake_trace payload rows")
	}
}

// rankingsISL refuses the synthetic prompt length (--isl, alias
// --synthetic-input-tokens-mean and --prompt-input-tokens-mean, and its
// stddev) with a rankings endpoint, as AIPerf does: its query and passages
// have lengths of their own, and the synthetic one would be dropped
// silently. The default 550 cannot be told from a given 550, which is the
// rankings lengths' default too.
func (v *validator) rankingsISL(p *Profile) {
	const use = "does not apply to --endpoint-type %s, whose query and passages have lengths of their own: " +
		"give --rankings-query-prompt-token-mean and --rankings-passages-prompt-token-mean (and their -stddev) instead"
	v.check(p.SyntheticInputTokensMean == NewProfile().SyntheticInputTokensMean, "synthetic_input_tokens_mean",
		"(--isl, --prompt-input-tokens-mean) "+fmt.Sprintf(use, p.EndpointType))
	v.check(p.SyntheticInputTokensStddev == 0, "synthetic_input_tokens_stddev",
		"(--isl-stddev, --prompt-input-tokens-stddev) "+fmt.Sprintf(use, p.EndpointType))
}

// Extras is the parsed --extra-inputs, merged in order (validated by Check).
func (p *Profile) Extras() map[string]any {
	out := map[string]any{}
	for _, e := range p.ExtraInputs {
		m, _ := ParseExtraInput(e)
		for k, val := range m {
			out[k] = val
		}
	}
	return out
}

// BodyExtras is --extra-inputs without the keys the template endpoint
// consumes (payload_template, response_field): what is merged into bodies.
func (p *Profile) BodyExtras() map[string]any {
	m := p.Extras()
	if p.EndpointType == EndpointTemplate || p.EndpointType == EndpointRaw {
		delete(m, TemplateKey)
		delete(m, ResponseField)
	}
	return m
}

// WritesOutputs reports whether the run writes outputs.json:
// --export-outputs-json, by default on with --export-level raw, as AIPerf.
func (p *Profile) WritesOutputs() bool {
	if p.ExportOutputsJSON != nil {
		return *p.ExportOutputsJSON
	}
	return p.ExportLevel == ExportRaw
}
