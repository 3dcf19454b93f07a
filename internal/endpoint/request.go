package endpoint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/aiperf-go/aiperf/internal/media"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/payload"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// Request is one inference request to send.
type Request struct {
	URL string // full URL including the path
	// SendBy, when above 0, is when (on the client's clock) the request
	// must be on its way: one handed to the transport at or after it is
	// not sent (Response.NotSent), as at the end of a phase's duration.
	SendBy       int64
	EndpointType string // plan.EndpointChat or plan.EndpointCompletions
	Model        string // "model" field
	Prompt       string // the user message (chat) or the bare prompt (completions)
	// Messages, when set, is the chat conversation sent instead of Prompt
	// (a session's history and its current turn).
	Messages []Message
	// RawMessages, when set, is a chat messages array sent as it is.
	RawMessages json.RawMessage
	// Payload, when set, is the whole request body, sent as it is.
	Payload json.RawMessage
	// Inputs, when set, are the texts of an embeddings request (a batch);
	// else Prompt is its one input.
	Inputs []string
	// Query and Passages are a rankings request's.
	Query    string
	Passages []string
	// Template renders the body of a template endpoint request;
	// ResponseField picks the reply's text (template, raw).
	Template      *payload.Template
	ResponseField *payload.Field
	// DownloadVideo reads a finished video_generation job's video, inside
	// the request's latency (--download-video-content).
	DownloadVideo bool
	// Media are the images, audios and videos of the user message a
	// request with Prompt sends (chat), after its text.
	Media     []media.Item
	Tools     json.RawMessage // sent as "tools" when set
	MaxTokens int             // 0: no max-tokens field is sent
	// LegacyMaxTokens sends chat's MaxTokens as "max_tokens" instead of
	// "max_completion_tokens" (AIPerf's --use-legacy-max-tokens).
	LegacyMaxTokens bool
	Streaming       bool           // ask for SSE with stream_options.include_usage
	Extra           map[string]any // merged into the body (--extra-inputs); its keys win
	TurnExtra       map[string]any // merged after Extra (a dataset turn's extra): its keys win over both
	RequestID       string         // sent as X-Request-ID when not empty
	// PerChunkUsage is AIPerf's --per-chunk-usage (chat only): the body
	// asks for usage on every chunk (stream_options.continuous_usage_stats,
	// an author's own stream_options values winning), and the reply's
	// Usage.FirstChunkTokens is the first content chunk's completion_tokens.
	PerChunkUsage bool
	// SessionID, when set, is sent as X-Correlation-ID and
	// X-Session-Affinity: every request of a session carries it.
	SessionID string
	// LastTurn marks the session's last request: under
	// --connection-reuse-strategy sticky-user-sessions its connection
	// closes after it.
	LastTurn bool
	// Cancel aborts the request CancelAfter after it was fully written,
	// unless it ended before (a request --request-cancellation-rate picked,
	// with AIPerf's --request-cancellation-delay); its error is then
	// ErrTypeCancelled and Response.Cancelled is set.
	Cancel      bool
	CancelAfter time.Duration
	// FirstToken, when set, is called once when a stream's first response
	// with text (content or reasoning) is read: the end of its prefill.
	FirstToken func()
	// OnChunk, when set, is called with each streamed response's text and
	// reasoning as it is read, after its stamp (aiperf chat prints them as
	// they come). The strings are valid only during the call.
	OnChunk func(text, reasoning string)
	// OnRead, when set, is called after every read of the response body
	// that returned bytes (before they are parsed), until the response
	// ends: not for what is drained after it. Any byte counts, a
	// keep-alive, a chunk without text or a whole body trickling in
	// (aiperf chat's AIPERF_CHAT_READ_TIMEOUT restarts on it).
	OnRead func()
	// Body, when set, is the request's JSON body as Body(req) builds it:
	// bodies depend only on the prompt, model and options, so a caller that
	// sends the same prompts again can build each once and reuse it.
	Body []byte
	// Raw, when set (--export-level raw), receives the body sent and every
	// response as read; nil costs nothing.
	Raw *metrics.Raw
	// parts collects the media of the body Body is building (media.go).
	parts *parts
}

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// Media, when set, makes the content a list of parts: Content's text
	// part (when not empty), then one part per item (media.go).
	Media []media.Item `json:"-"`
}

// Body returns the JSON request body of req's endpoint type, as AIPerf
// builds it (chat and completions here, the other APIs in their files): a
// form endpoint type's (plan.EndpointSpec.Form) holds its file as a
// formFile, and Client.Do sends it as multipart/form-data. A Payload is the
// body as it is. Extra, then TurnExtra, are merged last
// (shallow). Keys are sorted and HTML characters are not escaped.
func Body(req Request) ([]byte, error) {
	if len(req.Payload) > 0 {
		return req.Payload, nil
	}
	if (req.Messages != nil || len(req.RawMessages) > 0) && PromptOnly(req.EndpointType) {
		return nil, fmt.Errorf("build request body: --endpoint-type %s sends a prompt, and this request is a conversation's "+
			"messages (its history, its system message or a message row): use chat, responses or messages", req.EndpointType)
	}
	var m map[string]any
	switch req.EndpointType {
	case plan.EndpointChat, plan.EndpointCompletions:
		m = openaiBody(&req)
	case plan.EndpointEmbeddings, plan.EndpointNIMEmbeddings, plan.EndpointChatEmbeddings:
		m = embeddingsBody(&req)
	case plan.EndpointNIMRankings, plan.EndpointHFTEIRankings, plan.EndpointCohereRankings:
		m = rankingsBody(&req)
	case plan.EndpointResponses:
		m = responsesBody(&req)
	case plan.EndpointMessages:
		m = messagesBody(&req)
	case plan.EndpointHuggingFaceGenerate:
		return encode(tgiBody(&req))
	case plan.EndpointTemplate:
		return templateBody(&req)
	case plan.EndpointImageGeneration:
		m = imageGenBody(&req)
	case plan.EndpointVideoGeneration:
		m = videoGenBody(&req)
	case plan.EndpointImageRetrieval:
		var err error
		if m, err = imageRetrievalBody(&req); err != nil {
			return nil, err
		}
	case plan.EndpointSolidoRAG:
		m = solidoBody(&req)
	case plan.EndpointImageEdit:
		return imageEditBody(&req)
	case plan.EndpointAudioTranscription:
		return audioTranscriptionBody(&req)
	case plan.EndpointRaw:
		return nil, fmt.Errorf("build request body: --endpoint-type raw sends each record's payload as it is, and this record has none")
	default:
		return nil, fmt.Errorf("build request body: unknown endpoint type %q", req.EndpointType)
	}
	maps.Copy(m, req.Extra)
	maps.Copy(m, req.TurnExtra)
	if req.EndpointType == plan.EndpointChat || req.EndpointType == plan.EndpointCompletions {
		unstreamed(m)
		askUsage(m, continuousUsage(&req))
	}
	if req.parts == nil {
		return encode(m)
	}
	body, err := encode(m)
	if err != nil {
		return nil, err
	}
	return req.parts.splice(body)
}

// promptOnly are the endpoint types whose body carries a prompt (or an
// input) and no messages: a request of messages cannot be one of theirs.
var promptOnly = []string{plan.EndpointCompletions, plan.EndpointEmbeddings, plan.EndpointNIMEmbeddings,
	plan.EndpointHuggingFaceGenerate, plan.EndpointSolidoRAG, plan.EndpointImageGeneration, plan.EndpointVideoGeneration,
	plan.EndpointTemplate}

// PromptOnly reports whether endpointType's body carries a prompt and no
// messages, so that a request of a conversation's messages (its history,
// its system message) cannot be sent as one.
func PromptOnly(endpointType string) bool { return slices.Contains(promptOnly, endpointType) }

// encode writes a body: keys sorted, HTML characters not escaped.
func encode(m map[string]any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, fmt.Errorf("encode request body: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// messages is the chat conversation of req: RawMessages, Messages, or one
// user message.
func messages(req *Request) any {
	switch {
	case len(req.RawMessages) > 0:
		return req.RawMessages
	case req.Messages != nil:
		return req.withParts(req.Messages)
	}
	return req.withParts([]Message{{Role: "user", Content: req.Prompt, Media: req.Media}})
}

// openaiBody is chat's and completions' body: chat sends "messages" and
// "max_completion_tokens" ("max_tokens" with LegacyMaxTokens), completions
// "prompt" as a bare string and "max_tokens"; Tools is sent as "tools"; streaming adds
// "stream_options":{"include_usage":true}.
func openaiBody(req *Request) map[string]any {
	m := make(map[string]any, 6+len(req.Extra)+len(req.TurnExtra))
	m["model"] = req.Model
	m["stream"] = req.Streaming
	maxKey := "max_completion_tokens"
	if req.LegacyMaxTokens {
		maxKey = "max_tokens"
	}
	if req.EndpointType == plan.EndpointChat {
		m["messages"] = messages(req)
	} else {
		m["prompt"] = req.Prompt
		maxKey = "max_tokens"
	}
	if req.MaxTokens > 0 {
		m[maxKey] = req.MaxTokens
	}
	if len(req.Tools) > 0 {
		m["tools"] = req.Tools
	}
	if req.Streaming {
		m["stream_options"] = map[string]bool{"include_usage": true}
	}
	return m
}
