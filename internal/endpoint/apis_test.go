package endpoint

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/payload"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// event is one SSE event, named or not.
func event(name, data string) string {
	if name == "" {
		return "data: " + data + "\n\n"
	}
	return "event: " + name + "\ndata: " + data + "\n\n"
}

func apiReq(url, typ string, streaming bool) Request {
	return Request{URL: url, EndpointType: typ, Model: "m", Prompt: "hi", MaxTokens: 4, Streaming: streaming,
		Inputs: []string{"a", "b"}, Query: "q", Passages: []string{"p1", "p2"}}
}

// TestAPIStreamsDecode: each API's stream gives its text, stamped chunks
// and usage, and ends at its end event.
func TestAPIStreamsDecode(t *testing.T) {
	tests := []struct {
		name, typ string
		events    []string
		text      []string
		usage     metrics.Usage
	}{
		{"responses", plan.EndpointResponses, []string{
			event("response.created", `{"type":"response.created","response":{"status":"in_progress"}}`),
			event("response.output_text.delta", `{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"A"}`),
			event("response.output_text.delta", `{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"B"}`),
			event("response.output_text.done", `{"type":"response.output_text.done","output_index":0,"content_index":0,"text":"AB"}`),
			event("response.completed", `{"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":5,"output_tokens":2,"total_tokens":7,"output_tokens_details":{"reasoning_tokens":0}}}}`),
		}, []string{"A", "B"}, metrics.Usage{PromptTokens: 5, CompletionTokens: 2, TotalTokens: new(7), ReasoningReported: true, Names: metrics.InputOutputNames}},
		{"messages", plan.EndpointMessages, []string{
			event("message_start", `{"type":"message_start","message":{"usage":{"input_tokens":5,"output_tokens":1}}}`),
			event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
			event("ping", `{"type":"ping"}`),
			event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"A"}}`),
			event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}`),
			event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"B"}}`),
			event("content_block_stop", `{"type":"content_block_stop","index":0}`),
			event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}`),
			event("message_stop", `{"type":"message_stop"}`),
		}, []string{"A", "", "B"}, metrics.Usage{PromptTokens: 5, CompletionTokens: 3, Names: metrics.MessagesNames}},
		{"tgi", plan.EndpointHuggingFaceGenerate, []string{
			event("", `{"index":1,"token":{"id":1,"text":"A","special":false},"generated_text":null,"details":null}`),
			event("", `{"index":2,"token":{"id":2,"text":"B","special":false},"generated_text":"AB","details":{"finish_reason":"length","generated_tokens":2}}`),
		}, []string{"A", "B"}, metrics.Usage{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newRawServer(t, respond(chunked(200, "text/event-stream", tc.events...)))
			res := newTestClient(t, Options{}).Do(context.Background(), apiReq(srv.url("/"), tc.typ, true))
			require.Nil(t, res.Err)
			texts, _ := outputs(res.Chunks)
			assert.Equal(t, tc.text, texts)
			assertStamps(t, res)
			if tc.usage == (metrics.Usage{}) {
				assert.Nil(t, res.Usage)
			} else {
				require.NotNil(t, res.Usage)
				assert.Equal(t, tc.usage, *res.Usage)
			}
			assert.Zero(t, res.MalformedChunks)
		})
	}
}

// TestAPIErrorFramesFail: an API's own error event inside a 200 stream is
// a failed request with the server's message; a stream cut before the
// API's end event is incomplete.
func TestAPIErrorFramesFail(t *testing.T) {
	tests := []struct {
		name, typ string
		events    []string
		errType   string
		msg       string
	}{
		{"messages error event", plan.EndpointMessages, []string{
			event("message_start", `{"type":"message_start","message":{"usage":{"input_tokens":5}}}`),
			event("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`),
		}, ErrTypeStream, "Overloaded"},
		{"messages cut before message_stop", plan.EndpointMessages, []string{
			event("content_block_delta", `{"type":"content_block_delta","delta":{"type":"text_delta","text":"A"}}`),
		}, ErrTypeIncompleteStream, "stream ended before message_stop"},
		{"responses failed", plan.EndpointResponses, []string{
			event("response.output_text.delta", `{"type":"response.output_text.delta","delta":"A"}`),
			event("response.failed", `{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"the model crashed"}}}`),
		}, ErrTypeStream, "the model crashed"},
		{"responses error event", plan.EndpointResponses, []string{
			event("error", `{"type":"error","code":"rate_limit_exceeded","message":"slow down"}`),
		}, ErrTypeStream, "slow down"},
		{"responses cut before completed", plan.EndpointResponses, []string{
			event("response.output_text.delta", `{"type":"response.output_text.delta","delta":"A"}`),
		}, ErrTypeIncompleteStream, "stream ended before response.completed"},
		{"tgi error", plan.EndpointHuggingFaceGenerate, []string{
			event("", `{"token":{"text":"A"},"generated_text":null}`),
			event("", `{"error":"Request failed during generation: out of memory","error_type":"generation"}`),
		}, ErrTypeStream, "out of memory"},
		{"tgi cut before generated_text", plan.EndpointHuggingFaceGenerate, []string{
			event("", `{"token":{"text":"A"},"generated_text":null}`),
		}, ErrTypeIncompleteStream, "stream ended before the event with generated_text"},
		{"messages stream of only message_stop", plan.EndpointMessages, []string{
			event("message_stop", `{"type":"message_stop"}`),
		}, ErrTypeInvalidResponse, "not an Anthropic Messages response (text/event-stream): message_stop arrived before any response chunk"},
		{"responses stream of chat chunks", plan.EndpointResponses, []string{tokA, done},
			ErrTypeInvalidResponse, "not an OpenAI Responses response (text/event-stream): data: [DONE] arrived before any response chunk: 1 data line(s)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newRawServer(t, sseClose(tc.events...))
			res := newTestClient(t, Options{}).Do(context.Background(), apiReq(srv.url("/"), tc.typ, true))
			require.NotNil(t, res.Err, "a %s is not a success", tc.name)
			assert.Equal(t, tc.errType, res.Err.Type)
			assert.Contains(t, res.Err.Message, tc.msg)
		})
	}
}

// TestAPIBodiesDecode: whole replies of every API, valid or not.
func TestAPIBodiesDecode(t *testing.T) {
	emb := func(n int) string {
		var d []string
		for i := range n {
			d = append(d, fmt.Sprintf(`{"object":"embedding","index":%d,"embedding":[0.1,0.2]}`, i))
		}
		return `{"object":"list","data":[` + strings.Join(d, ",") + `],"usage":{"prompt_tokens":6,"total_tokens":6}}`
	}
	tests := []struct {
		name, typ, body string
		text            string
		usage           *metrics.Usage
		invalid         string // the failure's message, "" for a success
	}{
		{"embeddings", plan.EndpointEmbeddings, emb(2), "", &metrics.Usage{PromptTokens: 6, TotalTokens: new(6)}, ""},
		{"embeddings count mismatch", plan.EndpointEmbeddings, emb(1), "", nil, "1 embeddings came back for 2 inputs"},
		{"embeddings without data", plan.EndpointEmbeddings, `{"object":"list","data":[]}`, "", nil, "no data"},
		{"embeddings of chat shape", plan.EndpointEmbeddings, `{"choices":[{"message":{"content":"x"}}]}`, "", nil, "no data"},
		{"embeddings error body", plan.EndpointEmbeddings, `{"error":{"message":"model not loaded","code":503}}`, "", nil, "model not loaded"},
		{"nim rankings", plan.EndpointNIMRankings, `{"rankings":[{"index":1,"logit":2.5},{"index":0,"logit":-1}]}`, "", nil, ""},
		{"nim rankings empty", plan.EndpointNIMRankings, `{"rankings":[]}`, "", nil, "no rankings"},
		{"tei rankings list", plan.EndpointHFTEIRankings, `[{"index":0,"score":0.9}]`, "", nil, ""},
		{"tei rankings of no index", plan.EndpointHFTEIRankings, `[{"score":0.9}]`, "", nil, "result 0 has no index"},
		{"cohere rankings", plan.EndpointCohereRankings, `{"results":[{"index":0,"relevance_score":0.9}]}`, "", nil, ""},
		{"cohere rankings in nim shape", plan.EndpointCohereRankings, `{"rankings":[{"index":0}]}`, "", nil, "no rankings"},
		{"responses", plan.EndpointResponses, `{"object":"response","status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"AB"}]}],"usage":{"input_tokens":3,"output_tokens":2,"total_tokens":5}}`,
			"AB", &metrics.Usage{PromptTokens: 3, CompletionTokens: 2, TotalTokens: new(5), Names: metrics.InputOutputNames}, ""},
		{"responses failed", plan.EndpointResponses, `{"object":"response","status":"failed","error":{"message":"boom"}}`, "", nil, "boom"},
		{"responses of chat shape", plan.EndpointResponses, `{"choices":[]}`, "", nil, `not a response object`},
		{"messages", plan.EndpointMessages, `{"type":"message","content":[{"type":"text","text":"AB"}],"usage":{"input_tokens":3,"output_tokens":2}}`,
			"AB", &metrics.Usage{PromptTokens: 3, CompletionTokens: 2, Names: metrics.MessagesNames}, ""},
		{"messages error", plan.EndpointMessages, `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: field required"}}`, "", nil, "max_tokens: field required"},
		{"tgi", plan.EndpointHuggingFaceGenerate, `{"generated_text":"AB"}`, "AB", nil, ""},
		{"tgi list", plan.EndpointHuggingFaceGenerate, `[{"generated_text":"AB"}]`, "AB", nil, ""},
		{"tgi without text", plan.EndpointHuggingFaceGenerate, `{"details":{}}`, "", nil, "no generated_text"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newRawServer(t, respond(fixed(200, "application/json", tc.body)))
			res := newTestClient(t, Options{}).Do(context.Background(), apiReq(srv.url("/"), tc.typ, false))
			if tc.invalid != "" {
				require.NotNil(t, res.Err)
				assert.Contains(t, res.Err.Message, tc.invalid)
				return
			}
			require.Nil(t, res.Err)
			texts, _ := outputs(res.Chunks)
			if tc.text == "" {
				assert.Empty(t, texts)
			} else {
				assert.Equal(t, []string{tc.text}, texts)
			}
			assert.Equal(t, tc.usage, res.Usage)
		})
	}
}

// TestAPIRequestBodies: each type's body has AIPerf's shape.
func TestAPIRequestBodies(t *testing.T) {
	tmpl, err := payload.Load(`{"q": {{ text|tojson }}, "n": {{ max_tokens }}, "s": {{ stream|lower }}}`)
	require.NoError(t, err)
	sys := []Message{{Role: "system", Content: "S"}, {Role: "user", Content: "hi"}}
	tests := []struct {
		name string
		req  Request
		want string
	}{
		{"embeddings", Request{EndpointType: plan.EndpointEmbeddings, Model: "m", Inputs: []string{"a", "b"}, MaxTokens: 4, Streaming: true},
			`{"input":["a","b"],"model":"m"}`},
		{"embeddings one prompt", Request{EndpointType: plan.EndpointNIMEmbeddings, Model: "m", Prompt: "a"}, `{"input":["a"],"model":"m"}`},
		{"chat embeddings", Request{EndpointType: plan.EndpointChatEmbeddings, Model: "m", Prompt: "a"},
			`{"messages":[{"role":"user","content":"a"}],"model":"m"}`},
		{"nim rankings", Request{EndpointType: plan.EndpointNIMRankings, Model: "m", Query: "q", Passages: []string{"p"}},
			`{"model":"m","passages":[{"text":"p"}],"query":{"text":"q"}}`},
		{"tei rankings", Request{EndpointType: plan.EndpointHFTEIRankings, Model: "m", Query: "q", Passages: []string{"p"}},
			`{"query":"q","texts":["p"]}`},
		{"cohere rankings", Request{EndpointType: plan.EndpointCohereRankings, Model: "m", Query: "q", Passages: []string{"p"}},
			`{"documents":["p"],"model":"m","query":"q"}`},
		{"responses", Request{EndpointType: plan.EndpointResponses, Model: "m", Messages: sys, MaxTokens: 4, Streaming: true},
			`{"input":[{"content":"hi","role":"user","type":"message"}],"instructions":"S","max_output_tokens":4,"model":"m","stream":true}`},
		{"messages", Request{EndpointType: plan.EndpointMessages, Model: "m", Messages: sys, MaxTokens: 4, Streaming: true},
			`{"max_tokens":4,"messages":[{"role":"user","content":"hi"}],"model":"m","stream":true,"system":"S"}`},
		{"messages without max tokens, not streaming", Request{EndpointType: plan.EndpointMessages, Model: "m", Prompt: "hi"},
			`{"max_tokens":1024,"messages":[{"role":"user","content":"hi"}],"model":"m"}`},
		{"tgi", Request{EndpointType: plan.EndpointHuggingFaceGenerate, Model: "m", Prompt: "hi", MaxTokens: 4, Streaming: true,
			Extra: map[string]any{"temperature": 0.5}, TurnExtra: map[string]any{"top": 1}},
			`{"inputs":"hi","parameters":{"max_new_tokens":4,"temperature":0.5},"top":1}`},
		{"template", Request{EndpointType: plan.EndpointTemplate, Model: "m", Prompt: `say "hi"`, MaxTokens: 4, Template: tmpl,
			Extra: map[string]any{"x": 1}}, `{"n":4,"q":"say \"hi\"","s":false,"x":1}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Body(tc.req)
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, string(b))
			assert.True(t, json.Valid(b))
		})
	}
}

// TestDetectedReplies: template and raw replies are read at response_field,
// or where replies usually hold their output; a stream may end without a
// marker.
func TestDetectedReplies(t *testing.T) {
	field, err := payload.ParseField("out.items[1].text")
	require.NoError(t, err)
	srv := newRawServer(t, respond(fixed(200, "application/json", `{"out":{"items":[{"text":"no"},{"text":"yes"}]}}`)))
	req := apiReq(srv.url("/"), plan.EndpointRaw, false)
	req.Payload, req.ResponseField = json.RawMessage(`{"x":1}`), field
	res := newTestClient(t, Options{}).Do(context.Background(), req)
	require.Nil(t, res.Err)
	texts, _ := outputs(res.Chunks)
	assert.Equal(t, []string{"yes"}, texts)

	srv = newRawServer(t, respond(fixed(200, "application/json", `{"nothing":"here"}`)))
	req.URL = srv.url("/")
	res = newTestClient(t, Options{}).Do(context.Background(), req)
	require.NotNil(t, res.Err)
	assert.Contains(t, res.Err.Message, "response_field out.items[1].text matched nothing in the reply")

	srv = newRawServer(t, sseClose(event("", `{"generated_text":"A"}`), event("", `{"choices":[{"delta":{"content":"B"}}]}`)))
	req = apiReq(srv.url("/"), plan.EndpointRaw, true)
	req.Payload = json.RawMessage(`{"x":1}`)
	res = newTestClient(t, Options{}).Do(context.Background(), req)
	require.Nil(t, res.Err, "a template stream may end without a marker")
	texts, _ = outputs(res.Chunks)
	assert.Equal(t, []string{"A", "B"}, texts)
}
