package endpoint

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/media"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/payload"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// sseHandler streams pieces with net/http's chunked encoding, flushing each,
// and ends the body cleanly (the terminating chunk is written).
func sseHandler(pieces ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, p := range pieces {
			io.WriteString(w, p)
			w.(http.Flusher).Flush()
		}
	}
}

// TestStreamEndingCleanlyAfterFinishReasonIsComplete: a chat or completions
// stream whose body ends cleanly (chunked body terminated, no transport
// error) without data: [DONE] is complete once choice 0 had its
// finish_reason and the usage chunk asked for arrived; it ends at the last
// event read. Without the finish_reason, or without the usage chunk that
// was asked for, it is still an incomplete stream.
func TestStreamEndingCleanlyAfterFinishReasonIsComplete(t *testing.T) {
	cmplTok := func(s string) string {
		return `data: {"choices":[{"index":0,"text":"` + s + `","finish_reason":null}]}` + "\n\n"
	}
	cmplFin := `data: {"choices":[{"index":0,"text":"","finish_reason":"stop"}]}` + "\n\n"
	noUsage := map[string]any{"stream_options": map[string]any{"include_usage": false}}
	tests := []struct {
		name       string
		completion bool
		extra      map[string]any
		wire       []string
		texts      []string
		usage      bool
		err        string // "" success; else the IncompleteStream message holds it
	}{
		{name: "finish_reason then usage", wire: []string{role, tokA, tokB, fin, usage},
			texts: []string{"A", "B"}, usage: true},
		{name: "finish_reason and usage on one chunk (llama.cpp without include_usage)",
			wire:  []string{tokA, tokB, `data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2}}` + "\n\n"},
			texts: []string{"A", "B"}, usage: true},
		{name: "usage not asked for", extra: noUsage, wire: []string{tokA, tokB, fin},
			texts: []string{"A", "B"}},
		{name: "completions", completion: true, wire: []string{cmplTok("A"), cmplTok("B"), cmplFin, usage},
			texts: []string{"A", "B"}, usage: true},
		{name: "no finish_reason", wire: []string{role, tokA, tokB},
			texts: []string{"A", "B"}, err: "stream ended before data: [DONE] and before choice 0's finish_reason"},
		{name: "usage before the finish_reason only", wire: []string{tokA, tokB,
			`data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2}}` + "\n\n",
			`data: {"choices":[{"index":0,"delta":{"content":"C"},"finish_reason":null}]}` + "\n\n"},
			texts: []string{"A", "B", "C"}, usage: true, err: "before choice 0's finish_reason"},
		{name: "finish_reason null", wire: []string{tokA, `data: {"choices":[{"index":0,"delta":{},"finish_reason":null}]}` + "\n\n"},
			texts: []string{"A"}, err: "before choice 0's finish_reason"},
		{name: "finish_reason empty", wire: []string{tokA, `data: {"choices":[{"index":0,"delta":{},"finish_reason":""}]}` + "\n\n"},
			texts: []string{"A"}, err: "before choice 0's finish_reason"},
		{name: "finish_reason on another choice", wire: []string{tokA,
			`data: {"choices":[{"index":1,"delta":{},"finish_reason":"stop"}]}` + "\n\n", usage},
			texts: []string{"A"}, usage: true, err: "before choice 0's finish_reason"},
		{name: "usage asked for and missing", wire: []string{tokA, tokB, fin},
			texts: []string{"A", "B"},
			err:   "before the usage chunk that stream_options.include_usage asks for (choice 0 had finished)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(sseHandler(tc.wire...))
			t.Cleanup(srv.Close)
			c := newTestClient(t, Options{})
			req := chatReq(srv.URL+"/v1/chat/completions", true)
			if tc.completion {
				req.EndpointType = plan.EndpointCompletions
			}
			req.Extra = tc.extra
			req.Raw = &metrics.Raw{}
			res := c.Do(context.Background(), req)
			texts, _ := outputs(res.Chunks)
			assert.Equal(t, tc.texts, texts)
			assert.Equal(t, tc.usage, res.Usage != nil)
			if tc.err != "" {
				require.NotNil(t, res.Err)
				assert.Equal(t, ErrTypeIncompleteStream, res.Err.Type)
				assert.Equal(t, 200, res.Err.Code)
				assert.Contains(t, res.Err.Message, tc.err)
				return
			}
			require.Nil(t, res.Err)
			// The reply ends at its last event, as it would at [DONE].
			require.NotEmpty(t, req.Raw.Responses)
			assert.Equal(t, req.Raw.Responses[len(req.Raw.Responses)-1].At, res.EndNs)
			assertStamps(t, res)
		})
	}
}

// TestStreamBrokenAfterFinishReasonIsIncomplete: a stream whose connection
// breaks (a chunked body cut mid-chunk) after choice 0's finish_reason is
// still an incomplete stream: only a clean end of the body says the server
// sent all it meant to.
func TestStreamBrokenAfterFinishReasonIsIncomplete(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
		for _, p := range []string{tokA, tokB, fin, usage} {
			fmt.Fprintf(buf, "%x\r\n%s\r\n", len(p), p)
		}
		buf.WriteString("20\r\ndata: {\"choi") // a chunk of 32 bytes announced, 12 sent
		buf.Flush()
	}))
	t.Cleanup(srv.Close)
	res := newTestClient(t, Options{}).Do(context.Background(), chatReq(srv.URL+"/v1/chat/completions", true))
	texts, _ := outputs(res.Chunks)
	assert.Equal(t, []string{"A", "B"}, texts)
	require.NotNil(t, res.Err)
	assert.Equal(t, ErrTypeIncompleteStream, res.Err.Type)
	assert.Equal(t, 200, res.Err.Code)
}

// TestUnwrappedErrorFrameFailsTheRequest: vLLM's ErrorResponse sent as it
// is ({"object": "error", "message", "type", "code"}, not inside "error")
// fails the request with its code, in a stream after content as in a
// whole body, instead of being skipped as a malformed line.
func TestUnwrappedErrorFrameFailsTheRequest(t *testing.T) {
	oom := `{"object":"error","message":"CUDA out of memory","type":"InternalServerError","param":null,"code":500}`
	tests := []struct {
		name      string
		streaming bool
		body      string
		code      int
		message   string
	}{
		{"stream, after three content chunks", true, tokA + tokB + tokA + "data: " + oom + "\n\n" + done, 500, "CUDA out of memory"},
		{"stream, without object", true, tokA + `data: {"message":"queue full","type":"ServiceUnavailableError","code":503}` + "\n\n" + done,
			503, "queue full"},
		{"stream, a code that is no HTTP status", true, tokA + `data: {"object":"error","message":"bad","code":-1}` + "\n\n" + done,
			200, "bad"},
		{"stream, event: error", true, tokA + "event: error\ndata: " + oom + "\n\n" + done, 500, "CUDA out of memory"},
		{"whole body", false, oom, 500, "CUDA out of memory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				if tc.streaming {
					w.Header().Set("Content-Type", "text/event-stream")
				} else {
					w.Header().Set("Content-Type", "application/json")
				}
				io.WriteString(w, tc.body)
			}))
			t.Cleanup(srv.Close)
			res := newTestClient(t, Options{}).Do(context.Background(), chatReq(srv.URL+"/v1/chat/completions", tc.streaming))
			require.NotNil(t, res.Err)
			assert.Equal(t, ErrTypeStream, res.Err.Type)
			assert.Equal(t, tc.code, res.Err.Code)
			assert.Equal(t, tc.message, res.Err.Message)
		})
	}

	// Lines that only look like it are still skipped as malformed.
	for _, line := range []string{`{"object":"ping"}`, `{"message":"hello"}`, `{"message":"","code":500}`, `{"message":"hi","code":"500"}`} {
		t.Run("not an error: "+line, func(t *testing.T) {
			srv := httptest.NewServer(sseHandler(tokA, "data: "+line+"\n\n", done))
			t.Cleanup(srv.Close)
			res := newTestClient(t, Options{}).Do(context.Background(), chatReq(srv.URL+"/v1/chat/completions", true))
			require.Nil(t, res.Err)
			assert.Equal(t, 1, res.MalformedChunks)
		})
	}
}

// TestWholeRepliesOfEveryAPIFailOnTheUnwrappedError: vLLM's unwrapped
// error object sent with HTTP 200 as the whole reply of embeddings,
// rankings, images, audio transcription and the other APIs read whole
// fails the request with StreamError and the body's code, as a chat reply
// does, not as a reply of the wrong shape (InvalidResponse 200); a code
// that is no HTTP error status leaves the reply's.
func TestWholeRepliesOfEveryAPIFailOnTheUnwrappedError(t *testing.T) {
	auds, err := media.Audios(context.Background(), media.AudioOptions{LengthMean: 0.05, Batch: 1, Format: media.FormatWAV}, 1, 1)
	require.NoError(t, err)
	imgs, err := media.Images(context.Background(), media.ImageOptions{WidthMean: 8, HeightMean: 8, Batch: 1, Format: media.FormatPNG}, 1, 1)
	require.NoError(t, err)
	uploads := map[string][]media.Item{plan.EndpointAudioTranscription: auds, plan.EndpointImageEdit: imgs, plan.EndpointImageRetrieval: imgs}
	for _, tc := range []struct {
		body string
		code int
	}{
		{`{"object":"error","message":"auth failed","type":"BadRequestError","param":null,"code":400}`, 400},
		{`{"message":"auth failed","type":"BadRequestError","code":-1}`, 200},
	} {
		srv := newRawServer(t, respond(fixed(200, "application/json", tc.body)))
		for _, typ := range []string{plan.EndpointEmbeddings, plan.EndpointNIMRankings, plan.EndpointHFTEIRankings,
			plan.EndpointCohereRankings, plan.EndpointImageGeneration, plan.EndpointImageEdit, plan.EndpointAudioTranscription,
			plan.EndpointImageRetrieval, plan.EndpointSolidoRAG, plan.EndpointResponses, plan.EndpointMessages,
			plan.EndpointHuggingFaceGenerate} {
			t.Run(typ+" "+tc.body, func(t *testing.T) {
				req := apiReq(srv.url("/"), typ, false)
				req.Media = uploads[typ]
				res := newTestClient(t, Options{}).Do(context.Background(), req)
				require.NotNil(t, res.Err)
				assert.Equal(t, metrics.Error{Code: tc.code, Type: ErrTypeStream, Message: "auth failed"}, *res.Err)
			})
		}
	}
}

// TestUnknownAPIErrorFramesFailTheRequest: a template or raw endpoint's
// reply, whose API aiperf does not know, fails on vLLM's unwrapped error
// object and on an "event: error" frame as a chat reply does, instead of
// counting as a success with the text before it.
func TestUnknownAPIErrorFramesFailTheRequest(t *testing.T) {
	oom := `{"object":"error","message":"CUDA out of memory","type":"InternalServerError","param":null,"code":500}`
	tmpl, err := payload.Load(`{"model": {{ model|tojson }}, "prompt": {{ text|tojson }}, "stream": {{ stream|lower }}}`)
	require.NoError(t, err)
	tests := []struct {
		name      string
		streaming bool
		body      string
		message   string
	}{
		{"stream, after content", true, tokA + tokB + "data: " + oom + "\n\n" + done, "CUDA out of memory"},
		{"stream, event: error", true, tokA + "event: error\ndata: {\"message\": \"evicted\"}\n\n" + done, "evicted"},
		{"whole body", false, oom, "CUDA out of memory"},
	}
	for _, typ := range []string{plan.EndpointTemplate, plan.EndpointRaw} {
		for _, tc := range tests {
			t.Run(typ+", "+tc.name, func(t *testing.T) {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					io.Copy(io.Discard, r.Body)
					w.Header().Set("Content-Type", map[bool]string{true: "text/event-stream", false: "application/json"}[tc.streaming])
					io.WriteString(w, tc.body)
				}))
				t.Cleanup(srv.Close)
				req := apiReq(srv.URL+"/v1/chat/completions", typ, tc.streaming)
				req.Template, req.Payload = tmpl, nil
				if typ == plan.EndpointRaw {
					req.Payload = []byte(`{"model":"m","prompt":"hi","stream":true}`)
				}
				res := newTestClient(t, Options{}).Do(context.Background(), req)
				require.NotNil(t, res.Err)
				assert.Equal(t, ErrTypeStream, res.Err.Type)
				assert.Contains(t, res.Err.Message, tc.message)
			})
		}
	}
}

// TestAbortedGenerationFailsTheRequest: a reply whose choice 0 ends with
// a finish_reason that says the server gave it up (vLLM's "abort" and
// "error", SGLang's {"type": "abort"}) is a failed request, streamed or
// whole, not a success with a short output; other reasons still succeed.
func TestAbortedGenerationFailsTheRequest(t *testing.T) {
	chunk := func(reason string) string {
		return `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":` + reason + `}]}` + "\n\n"
	}
	body := func(reason string) string {
		return `{"id":"c1","object":"chat.completion","choices":[{"index":0,"message":{"content":"A"},"finish_reason":` + reason + `}]}`
	}
	for _, tc := range []struct {
		reason string
		failed bool
	}{
		{`"abort"`, true}, {`"error"`, true}, {`{"type":"abort","message":"out of memory"}`, true},
		{`{"type":"error"}`, true}, {`"stop"`, false}, {`"length"`, false}, {`{"type":"stop"}`, false},
	} {
		for _, streaming := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s, streaming %v", tc.reason, streaming), func(t *testing.T) {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					io.Copy(io.Discard, r.Body)
					if !streaming {
						w.Header().Set("Content-Type", "application/json")
						io.WriteString(w, body(tc.reason))
						return
					}
					w.Header().Set("Content-Type", "text/event-stream")
					io.WriteString(w, tokA+chunk(tc.reason)+done)
				}))
				t.Cleanup(srv.Close)
				res := newTestClient(t, Options{}).Do(context.Background(), chatReq(srv.URL+"/v1/chat/completions", streaming))
				if !tc.failed {
					require.Nil(t, res.Err)
					return
				}
				require.NotNil(t, res.Err)
				assert.Equal(t, ErrTypeStream, res.Err.Type)
				assert.Equal(t, "the server gave the generation up: finish_reason "+tc.reason, res.Err.Message)
			})
		}
	}
}

// TestCertificateFailureNamesTheFix: a server certificate the client does
// not trust fails the request with the TLS error and how to fix it.
func TestCertificateFailureNamesTheFix(t *testing.T) {
	srv := httptest.NewTLSServer(sseHandler(tokA, fin, usage, done))
	t.Cleanup(srv.Close)
	c := newTestClient(t, Options{})
	// The handshake fails on the certificate, not on time: a machine too
	// busy to finish it in the client's 10 s must not turn this into a
	// timeout.
	c.keep.Transport.(*http.Transport).TLSHandshakeTimeout = 0
	res := c.Do(context.Background(), chatReq(srv.URL+"/v1/chat/completions", true))
	require.NotNil(t, res.Err)
	assert.Equal(t, ErrTypeConnection, res.Err.Type)
	assert.Contains(t, res.Err.Message, "x509: certificate signed by unknown authority")
	assert.True(t, strings.HasSuffix(res.Err.Message, "; trust the server's CA with SSL_CERT_FILE=ca.pem (Linux; on macOS, add it to the keychain)"), res.Err.Message)

	// Other transport errors get no such hint.
	res = newTestClient(t, Options{}).Do(context.Background(), chatReq("http://127.0.0.1:1/v1/chat/completions", true))
	require.NotNil(t, res.Err)
	assert.NotContains(t, res.Err.Message, "SSL_CERT_FILE")

	// Each kind of verification failure gets its own fix, and one with
	// no such fix (an expired certificate) none.
	for err, want := range map[error]string{
		x509.UnknownAuthorityError{}:                                         "SSL_CERT_FILE",
		x509.HostnameError{Host: "gpu1"}:                                     "subject alternative name",
		fmt.Errorf("dial: %w", x509.HostnameError{Host: "gpu1"}):             "subject alternative name",
		&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}: "SSL_CERT_FILE",
		x509.CertificateInvalidError{Reason: x509.Expired}:                   "",
		errors.New("x509: looks like one"):                                   "",
	} {
		if want == "" {
			assert.Empty(t, certHint(err), "%T", err)
		} else {
			assert.Contains(t, certHint(err), want, "%T", err)
		}
	}
}

// TestHTTPSToAPlainServerSaysUseHTTP: an https:// URL at a server that
// speaks plain HTTP (a newcomer's wrong scheme) fails each request with
// what to do about it, not net/http's words alone.
func TestHTTPSToAPlainServerSaysUseHTTP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, tokA+done)
	}))
	t.Cleanup(srv.Close)
	res := newTestClient(t, Options{}).Do(context.Background(), chatReq("https://"+srv.Listener.Addr().String()+"/v1/chat/completions", true))
	require.NotNil(t, res.Err)
	assert.Equal(t, ErrTypeConnection, res.Err.Type)
	assert.True(t, strings.HasSuffix(res.Err.Message, "server gave HTTP response to HTTPS client; the server speaks plain "+
		"HTTP: give --url with http://, not https://"), res.Err.Message)
	res = newTestClient(t, Options{}).Do(context.Background(), chatReq(srv.URL+"/v1/chat/completions", true))
	require.Nil(t, res.Err, "the same server by http://")
}
