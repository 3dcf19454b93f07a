package endpoint

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/payload"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// TestChatAndCompletionsRepliesMustHaveTheirShape: a chat reply has
// choices[].message, a completions reply choices[].text, each index is an
// integer: a reply of the other API, or of neither, is an invalid response
// naming the field, whatever its "object" says.
func TestChatAndCompletionsRepliesMustHaveTheirShape(t *testing.T) {
	chat := func(url string) Request { return apiReq(url, plan.EndpointChat, false) }
	cmpl := func(url string) Request { return apiReq(url, plan.EndpointCompletions, false) }
	msg := `{"role":"assistant","content":"hello"}`
	t.Run("chat", func(t *testing.T) {
		checkReplies(t, chat, []replyCase{
			{"vllm", `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":` + msg + `,"finish_reason":"stop"}]}`, ""},
			{"no object (llama.cpp)", `{"choices":[{"index":0,"message":` + msg + `}]}`, ""},
			{"no index", `{"choices":[{"message":` + msg + `}]}`, ""},
			{"empty object", `{"object":"","choices":[{"message":` + msg + `}]}`, ""},
			{"a completions reply", `{"id":"x","object":"text_completion","choices":[{"index":0,"text":"hello there","finish_reason":"stop"}]}`,
				"choices[0] has no message object (a chat completions reply's choices carry one)"},
			{"completions choices without object", `{"choices":[{"index":0,"text":"hello there"}]}`,
				"choices[0] has no message object (a chat completions reply's choices carry one)"},
			{"null message", `{"object":"chat.completion","choices":[{"index":0,"message":null}]}`,
				"choices[0].message is null, expected an object (a chat completions reply)"},
			{"index a string", `{"choices":[{"index":"0","message":` + msg + `}]}`, "choices[0].index is not a non-negative integer"},
			{"index null", `{"choices":[{"index":null,"message":` + msg + `}]}`, "choices[0].index is not a non-negative integer"},
			{"index negative", `{"choices":[{"index":-1,"message":` + msg + `}]}`, "choices[0].index is not a non-negative integer"},
			{"message a string", `{"choices":[{"index":0,"message":"hello world"}]}`, "choices.message is a JSON string, not an object"},
			{"content a number", `{"choices":[{"index":0,"message":{"role":"assistant","content":12345}}]}`,
				"choices.message.content is a JSON number, not a string"},
			{"choices an object", `{"choices":{"index":0,"message":` + msg + `}}`, "choices is a JSON object, not an array"},
		})
	})
	t.Run("completions", func(t *testing.T) {
		checkReplies(t, cmpl, []replyCase{
			{"vllm", `{"object":"text_completion","choices":[{"index":0,"text":"hello there"}]}`, ""},
			{"no object", `{"choices":[{"index":0,"text":""}]}`, ""},
			{"a chat reply", `{"object":"chat.completion","choices":[{"index":0,"message":` + msg + `}]}`,
				"choices[0] has no text (a completions reply's choices carry one)"},
			{"chat choices without object", `{"choices":[{"index":0,"message":` + msg + `}]}`,
				"choices[0] has no text (a completions reply's choices carry one)"},
			{"null text", `{"choices":[{"index":0,"text":null}]}`, "choices[0].text is null, expected a string"},
			{"text a number", `{"object":"text_completion","choices":[{"index":0,"text":42}]}`, "choices.text is a JSON number, not a string"},
		})
	})
}

// TestStreamChunksOfAnotherAPIAreNotChunks: a chat stream's chunks carry
// a delta; a completions stream's, text. Chunks of the other API are
// malformed lines, so a stream of only them fails, naming why; so does
// one of them and the usage chunk (its choices list empty), which is not
// the cause.
func TestStreamChunksOfAnotherAPIAreNotChunks(t *testing.T) {
	cmplChunk := func(s string) string {
		return `data: {"object":"text_completion","choices":[{"index":0,"text":"` + s + `"}]}` + "\n\n"
	}
	for _, tc := range []struct {
		name, typ string
		wire      []string
		invalid   string // "" for a success
	}{
		{"chat chunks", plan.EndpointChat, []string{role, tokA, fin, done}, ""},
		{"chat chunks without object and a bare finish (llama.cpp)", plan.EndpointChat, []string{
			`data: {"choices":[{"index":0,"delta":{"content":"A"}}]}` + "\n\n",
			`data: {"choices":[{"index":0,"finish_reason":"stop"}]}` + "\n\n", done}, ""},
		{"chat chunks named chat.completion", plan.EndpointChat, []string{
			`data: {"object":"chat.completion","choices":[{"index":0,"delta":{"content":"A"}}]}` + "\n\n", done}, ""},
		{"completions chunks on chat", plan.EndpointChat, []string{cmplChunk("A"), cmplChunk("B"), done},
			`data: [DONE] arrived before any response chunk: 2 data line(s) were not one (first: "{\"object\":\"text_completion\"`},
		{"completions chunks and the usage chunk on chat", plan.EndpointChat, []string{cmplChunk("A"), cmplChunk("B"), usage, done},
			`data: [DONE] arrived before any chunk carried choice 0: 2 data line(s) were not response chunks (first: "{\"object\":\"text_completion\"`},
		{"chat chunks and the usage chunk on completions", plan.EndpointCompletions, []string{role, tokA, fin, usage, done},
			`data: [DONE] arrived before any chunk carried choice 0: 3 data line(s) were not response chunks (first: "{\"id\":\"c1\"`},
		{"completions chunks and the usage chunk on chat, no [DONE]", plan.EndpointChat, []string{cmplChunk("A"), usage},
			`the stream ended before any chunk carried choice 0: 1 data line(s) were not response chunks (first: "{\"object\"`},
		{"completions chunks without object on chat", plan.EndpointChat, []string{`data: {"choices":[{"index":0,"text":"A"}]}` + "\n\n", done},
			"choices[0] has no delta object"},
		{"whole chat replies in a chat stream", plan.EndpointChat, []string{
			`data: {"object":"chat.completion","choices":[{"index":0,"message":{"content":"A"}}]}` + "\n\n", done},
			"choices[0] has no delta object"},
		{"completions chunks", plan.EndpointCompletions, []string{cmplChunk("A"), cmplChunk("B"), done}, ""},
		{"chat chunks on completions", plan.EndpointCompletions, []string{role, tokA, done},
			"choices[0] has no text (a completions reply's stream chunks carry it, not a delta or message)"},
		{"chat chunks labelled text_completion (TGI 1.4)", plan.EndpointChat, []string{
			`data: {"object":"text_completion","choices":[{"index":0,"delta":{"content":"A"}}]}` + "\n\n", done}, ""},
		{"index a string", plan.EndpointChat, []string{`data: {"choices":[{"index":"0","delta":{"content":"A"}}]}` + "\n\n", done},
			"choices[0].index is not a non-negative integer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newRawServer(t, respond(chunked(200, "text/event-stream", tc.wire...)))
			res := newTestClient(t, Options{}).Do(context.Background(), apiReq(srv.url("/"), tc.typ, true))
			if tc.invalid == "" {
				require.Nil(t, res.Err)
				assert.NotEmpty(t, res.Chunks)
				return
			}
			require.NotNil(t, res.Err)
			assert.Equal(t, ErrTypeInvalidResponse, res.Err.Type)
			assert.Contains(t, res.Err.Message, tc.invalid)
			assert.Empty(t, res.Chunks)
		})
	}
}

// TestStreamLabelledHTMLIsInvalid: a stream whose Content-Type is an HTML
// page's fails, whatever its lines; text/event-stream with parameters does
// not.
func TestStreamLabelledHTMLIsInvalid(t *testing.T) {
	for _, tc := range []struct{ ct, invalid string }{
		{"text/event-stream; charset=utf-8", ""},
		{"text/html", "not an OpenAI response (text/html): a stream's Content-Type is text/event-stream, not an HTML page's"},
		{"text/html; charset=utf-8", "(text/html): a stream's Content-Type is text/event-stream"},
	} {
		t.Run(tc.ct, func(t *testing.T) {
			srv := newRawServer(t, respond(chunked(200, tc.ct, role, tokA, done)))
			res := newTestClient(t, Options{}).Do(context.Background(), chatReq(srv.url("/"), true))
			if tc.invalid == "" {
				require.Nil(t, res.Err)
				return
			}
			require.NotNil(t, res.Err)
			assert.Equal(t, ErrTypeInvalidResponse, res.Err.Type)
			assert.Contains(t, res.Err.Message, tc.invalid)
			assert.Empty(t, res.Chunks)
		})
	}
}

// TestTemplateHTMLReplyIsInvalid: a template reply that is an HTML page
// (by its Content-Type or its body) is not generated text; plain text is
// (AIPerf's reading of a non-JSON reply).
func TestTemplateHTMLReplyIsInvalid(t *testing.T) {
	tmpl, err := payload.Load(`{"model": {{ model|tojson }}, "prompt": {{ text|tojson }}}`)
	require.NoError(t, err)
	page := "<!DOCTYPE html><html><body>Gateway</body></html>"
	for _, tc := range []struct{ name, raw, invalid string }{
		{"html", fixed(200, "text/html", page), `not a recognised response (text/html): the reply is an HTML page`},
		{"plain text labelled text/html (Flask, Express)", fixed(200, "text/html; charset=utf-8", "hello there"), ""},
		{"html labelled text/plain", fixed(200, "text/plain", page), "not a recognised response (text/plain): the reply is an HTML page"},
		{"plain text", fixed(200, "text/plain", "hello there"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newRawServer(t, respond(tc.raw))
			req := apiReq(srv.url("/"), plan.EndpointTemplate, false)
			req.Template = tmpl
			res := newTestClient(t, Options{}).Do(context.Background(), req)
			if tc.invalid == "" {
				require.Nil(t, res.Err)
				text, _ := res.Output()
				assert.Equal(t, "hello there", text)
				return
			}
			require.NotNil(t, res.Err)
			assert.Equal(t, ErrTypeInvalidResponse, res.Err.Type)
			assert.Contains(t, res.Err.Message, tc.invalid)
			assert.Empty(t, res.Chunks)
		})
	}
}

// TestOtherAPIRepliesNameTheWrongField: a valid JSON reply whose field has
// the wrong type names the field and the type expected, not "the body is
// not a JSON object"; the article before the API's name is right.
func TestOtherAPIRepliesNameTheWrongField(t *testing.T) {
	for _, tc := range []struct{ typ, body, want string }{
		{plan.EndpointResponses, `{"object":"response","status":"completed","output":{"text":"x"}}`,
			"not an OpenAI Responses response (application/json): output is a JSON object, not an array"},
		{plan.EndpointMessages, `{"type":"message","content":"hello there"}`,
			"not an Anthropic Messages response (application/json): content is a JSON string, not an array"},
		{plan.EndpointHuggingFaceGenerate, `{"generated_text":7}`, "not a TGI response (application/json): generated_text is a JSON number, not a string"},
		{plan.EndpointHuggingFaceGenerate, `[{"generated_text":7}]`, "generated_text is a JSON number, not a string"},
		{plan.EndpointSolidoRAG, `{"content":42}`, "not a SOLIDO RAG response (application/json): content is a JSON number, not a string"},
		{plan.EndpointImageGeneration, `{"data":[{"url":5}]}`, "not an images response (application/json): data.url is a JSON number, not a string"},
		{plan.EndpointNIMRankings, `{"rankings":{"index":0}}`, "not a rankings response (application/json): rankings is a JSON object, not an array"},
		{plan.EndpointEmbeddings, `{"data":{"index":0}}`, "not an embeddings response (application/json): data is a JSON object, not an array"},
	} {
		t.Run(tc.typ+" "+tc.body, func(t *testing.T) {
			srv := newRawServer(t, respond(fixed(200, "application/json", tc.body)))
			res := newTestClient(t, Options{}).Do(context.Background(), apiReq(srv.url("/"), tc.typ, false))
			require.NotNil(t, res.Err)
			assert.Equal(t, ErrTypeInvalidResponse, res.Err.Type)
			assert.Contains(t, res.Err.Message, tc.want)
			assert.NotContains(t, res.Err.Message, "the body is not a JSON object")
		})
	}
}

// TestResponsesRepliesMustBeComplete: a Responses reply needs its output;
// a stream ends with response.completed (not [DONE] alone), and a
// response.completed event of a response that failed is invalid.
func TestResponsesRepliesMustBeComplete(t *testing.T) {
	ok := `{"object":"response","status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"hi"}]}],"usage":{"input_tokens":5,"output_tokens":1}}`
	t.Run("whole", func(t *testing.T) {
		checkReplies(t, func(url string) Request { return apiReq(url, plan.EndpointResponses, false) }, []replyCase{
			{"ok", ok, ""},
			{"empty output", `{"object":"response","status":"completed","output":[]}`, ""},
			{"no output", `{"object":"response","status":"completed","usage":{"input_tokens":5,"output_tokens":2}}`,
				"the response has no output (an array of output items)"},
			{"null output", `{"object":"response","status":"completed","output":null}`, "the response has no output"},
		})
	})
	created := event("response.created", `{"type":"response.created","response":{"object":"response","status":"in_progress"}}`)
	delta := event("response.output_text.delta", `{"type":"response.output_text.delta","delta":"Hello"}`)
	for _, tc := range []struct {
		name    string
		wire    []string
		typ     string // error type, "" for a success
		message string
	}{
		{"completed", []string{created, delta, event("response.completed", `{"type":"response.completed","response":`+ok+`}`)}, "", ""},
		{"completed with status failed", []string{created, delta, event("response.completed",
			`{"type":"response.completed","response":{"object":"response","status":"failed","output":[]}}`)},
			ErrTypeInvalidResponse, `not an OpenAI Responses response (text/event-stream): response.completed carries response.status "failed", expected "completed"`},
		{"[DONE] without response.completed", []string{created, delta, done},
			ErrTypeIncompleteStream, "data: [DONE] arrived before response.completed"},
		{"only [DONE]", []string{done}, ErrTypeInvalidResponse, "data: [DONE] arrived before any response chunk"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newRawServer(t, respond(chunked(200, "text/event-stream", tc.wire...)))
			res := newTestClient(t, Options{}).Do(context.Background(), apiReq(srv.url("/"), plan.EndpointResponses, true))
			if tc.typ == "" {
				require.Nil(t, res.Err)
				return
			}
			require.NotNil(t, res.Err)
			assert.Equal(t, tc.typ, res.Err.Type)
			assert.Contains(t, res.Err.Message, tc.message)
		})
	}
}

// TestUsageProblemsNameTheServersFields: Messages and Responses usage
// problems name input_tokens and output_tokens, the fields sent.
func TestUsageProblemsNameTheServersFields(t *testing.T) {
	for _, tc := range []struct{ typ, body, want string }{
		{plan.EndpointMessages, `{"type":"message","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":-5,"output_tokens":2}}`,
			"input_tokens is negative (-5)"},
		{plan.EndpointResponses, `{"object":"response","status":"completed","output":[],"usage":{"input_tokens":5,"output_tokens":-2}}`,
			"output_tokens is negative (-2)"},
		{plan.EndpointChat, `{"choices":[{"message":{"content":"hi"}}],"usage":{"prompt_tokens":-5,"completion_tokens":1}}`,
			"prompt_tokens is negative (-5)"},
		{plan.EndpointResponses, `{"object":"response","status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"hi"}]}],"usage":{"input_tokens":5,"output_tokens":0}}`,
			"output_tokens is 0, fewer than the 1 chunk(s) of generated text that arrived"},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			srv := newRawServer(t, respond(fixed(200, "application/json", tc.body)))
			res := newTestClient(t, Options{}).Do(context.Background(), apiReq(srv.url("/"), tc.typ, false))
			require.Nil(t, res.Err)
			require.NotNil(t, res.Usage)
			assert.Equal(t, tc.want, res.Usage.Untrusted)
		})
	}
}

// TestMoreImagesThanAskedForIsInvalid: an image reply holds at most the n
// images asked for (1 unless an extra input sets n; not checked for a
// payload sent as it is).
func TestMoreImagesThanAskedForIsInvalid(t *testing.T) {
	png := `{"b64_json":"iVBORw0KGgoAAAAAAAAAAAAAAAAAAAAAAAAAAA=="}`
	body := func(n int) string { return `{"data":[` + strings.TrimSuffix(strings.Repeat(png+",", n), ",") + `]}` }
	for _, tc := range []struct {
		name    string
		extra   map[string]any
		payload bool
		images  int
		invalid string
	}{
		{"one", nil, false, 1, ""},
		{"five for one", nil, false, 5, "5 images came back, more than the 1 asked for (n)"},
		{"two for n 2", map[string]any{"n": 2.0}, false, 2, ""},
		{"three for n 2", map[string]any{"n": 2}, false, 3, "3 images came back, more than the 2 asked for (n)"},
		{"payload", nil, true, 3, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newRawServer(t, respond(fixed(200, "application/json", body(tc.images))))
			req := apiReq(srv.url("/"), plan.EndpointImageGeneration, false)
			req.Extra = tc.extra
			if tc.payload {
				req.Payload = json.RawMessage(`{"prompt":"x","n":3}`)
			}
			res := newTestClient(t, Options{}).Do(context.Background(), req)
			if tc.invalid == "" {
				require.Nil(t, res.Err)
				assert.Equal(t, tc.images, res.Images)
				return
			}
			require.NotNil(t, res.Err)
			assert.Equal(t, ErrTypeInvalidResponse, res.Err.Type)
			assert.Contains(t, res.Err.Message, tc.invalid)
		})
	}
}

// TestErrorBodyCodeIsAnHTTPStatusOrNone: an error object's code stands
// for the record's code only when it is an HTTP error status (400-599,
// AIPerf's rule); any other code leaves the HTTP status.
func TestErrorBodyCodeIsAnHTTPStatusOrNone(t *testing.T) {
	for _, tc := range []struct {
		code string
		want int
	}{{"-1", 200}, {"99999999999999", 200}, {"200", 200}, {"302", 200}, {"1e3", 200}, {`"503"`, 200}, {"503", 503}, {"429", 429}} {
		t.Run(tc.code, func(t *testing.T) {
			body := `{"error":{"message":"weird","code":` + tc.code + `}}`
			srv := newRawServer(t, respond(fixed(200, "application/json", body)))
			res := newTestClient(t, Options{}).Do(context.Background(), chatReq(srv.url("/"), false))
			require.NotNil(t, res.Err)
			assert.Equal(t, ErrTypeStream, res.Err.Type)
			assert.Equal(t, tc.want, res.Err.Code)
			assert.Equal(t, "weird", res.Err.Message)

			srv = newRawServer(t, respond(chunked(200, "text/event-stream", tokA, "data: "+body+"\n\n", done)))
			res = newTestClient(t, Options{}).Do(context.Background(), chatReq(srv.url("/"), true))
			require.NotNil(t, res.Err)
			assert.Equal(t, tc.want, res.Err.Code, "in a stream")
		})
	}
}

// TestVideoJobIDMustBeAPathSegment: a job id that would make the poll
// another path or URL is refused before any poll.
func TestVideoJobIDMustBeAPathSegment(t *testing.T) {
	t.Setenv(PollIntervalEnv, "0.1")
	for _, tc := range []struct{ id, want string }{
		{"../../../h/evil?x=", `holds ".." (a path step)`},
		{"http://127.0.0.1:1/steal", `holds '/'`},
		{"a?b", `holds '?'`},
		{"a#b", `holds '#'`},
		{"a%2Fb", `holds '%'`},
		{"a b", "holds white space"},
		{"..", `holds ".."`},
	} {
		t.Run(tc.id, func(t *testing.T) {
			var polls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost {
					b, _ := json.Marshal(map[string]string{"id": tc.id, "status": "queued"})
					_, _ = w.Write(b)
					return
				}
				polls.Add(1)
				_, _ = w.Write([]byte(`{"id":"x","status":"completed"}`))
			}))
			t.Cleanup(srv.Close)
			res := New(Options{}).Do(context.Background(), Request{URL: srv.URL + "/v1/videos", EndpointType: plan.EndpointVideoGeneration, Model: "wan", Prompt: "a lake"})
			require.NotNil(t, res.Err)
			assert.Equal(t, ErrTypeInvalidResponse, res.Err.Type)
			assert.Contains(t, res.Err.Message, "the job id")
			assert.Contains(t, res.Err.Message, tc.want)
			assert.Zero(t, polls.Load(), "no poll is sent")
		})
	}
}

// TestVideoJobOfAnUnknownStatusIsInvalid: a poll reply whose status is
// none of a job's fails at once, naming it, instead of being polled until
// the request times out; the pending statuses are polled again.
func TestVideoJobOfAnUnknownStatusIsInvalid(t *testing.T) {
	t.Setenv(PollIntervalEnv, "0.1")
	for _, tc := range []struct{ status, want string }{
		{`"weird"`, `poll the video job v1: the job has status "weird", expected one of queued, in_progress, completed or failed`},
		{`""`, "the job has no status"},
	} {
		t.Run(tc.status, func(t *testing.T) {
			url := videoServer(t, "", `{"id":"v1","status":`+tc.status+`}`)
			start := time.Now()
			res := New(Options{Timeout: 10 * time.Second}).Do(context.Background(),
				Request{URL: url, EndpointType: plan.EndpointVideoGeneration, Model: "wan", Prompt: "a lake"})
			require.NotNil(t, res.Err)
			assert.Equal(t, ErrTypeInvalidResponse, res.Err.Type)
			assert.Contains(t, res.Err.Message, tc.want)
			assert.Less(t, time.Since(start), 5*time.Second, "not polled until the timeout")
		})
	}
	var polls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			_, _ = w.Write([]byte(`{"id":"v1","status":"queued"}`))
			return
		}
		status := []string{"queued", "pending", "in_progress", "running", "processing", "completed"}[min(int(polls.Add(1))-1, 5)]
		_, _ = w.Write([]byte(`{"id":"v1","status":"` + status + `"}`))
	}))
	t.Cleanup(srv.Close)
	res := New(Options{}).Do(context.Background(), Request{URL: srv.URL + "/v1/videos", EndpointType: plan.EndpointVideoGeneration, Model: "wan", Prompt: "a lake"})
	require.Nil(t, res.Err)
	assert.Equal(t, int32(6), polls.Load())
}

// TestRedirectThatWouldDropTheBodyIsAFailure: a same-origin 301, 302 or
// 303 to a POST is not followed as a bodiless GET: the 3xx is the
// response, a failure saying why; a 307 keeps method and body and is
// followed.
func TestRedirectThatWouldDropTheBodyIsAFailure(t *testing.T) {
	for _, code := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			var mu sync.Mutex
			var got []string // method and body of each request
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				mu.Lock()
				got = append(got, r.Method+" "+r.URL.Path+" "+string(b))
				mu.Unlock()
				if r.URL.Path == "/old/v1/chat/completions" {
					http.Redirect(w, r, "/new/v1/chat/completions", code)
					return
				}
				_, _ = w.Write([]byte(`{"object":"chat.completion","choices":[{"index":0,"message":{"content":"hi"}}]}`))
			}))
			t.Cleanup(srv.Close)
			res := newTestClient(t, Options{}).Do(context.Background(), chatReq(srv.URL+"/old/v1/chat/completions", false))
			mu.Lock()
			defer mu.Unlock()
			if code == http.StatusTemporaryRedirect || code == http.StatusPermanentRedirect {
				require.Nil(t, res.Err)
				require.Len(t, got, 2)
				assert.True(t, strings.HasPrefix(got[1], "POST /new/v1/chat/completions {"), got[1])
				return
			}
			require.NotNil(t, res.Err)
			assert.Equal(t, ErrTypeHTTP, res.Err.Type)
			assert.Equal(t, code, res.Err.Code)
			host, _, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
			assert.Contains(t, res.Err.Message, "(a redirect to http://"+host)
			assert.Contains(t, res.Err.Message, "not followed as it would resend the POST as a GET without its body")
			assert.NotContains(t, res.Err.Message, "/new/", "the path is not quoted")
			assert.Len(t, got, 1, "the GET is never sent")
		})
	}
}
