package endpoint

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// longStream is a chat stream of n content chunks (every third with JSON
// escapes, every fifth with reasoning), far longer than the SSE reader's
// buffer, and the texts and reasonings it carries.
func longStream(n int) (wire []string, texts, reasonings []string) {
	for i := range n {
		text, enc := fmt.Sprintf(" tok%d", i), fmt.Sprintf(" tok%d", i)
		if i%3 == 0 {
			text, enc = fmt.Sprintf("é\n\"%d\"", i), fmt.Sprintf(`\u00e9\n\"%d\"`, i)
		}
		reasoning := ""
		delta := fmt.Sprintf(`"content":"%s"`, enc)
		if i%5 == 0 {
			reasoning = fmt.Sprintf("think %d", i)
			delta += fmt.Sprintf(`,"reasoning_content":"%s"`, reasoning)
		}
		wire = append(wire, fmt.Sprintf(`data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{%s},`+
			`"logprobs":null,"finish_reason":null}],"padding":"%s"}`+"\n\n", delta, strings.Repeat("x", 200)))
		texts, reasonings = append(texts, text), append(reasonings, reasoning)
	}
	return append(wire, usage, done), texts, reasonings
}

// The read loop decodes each event into strings that alias the SSE reader's
// buffer and is then overwritten: every chunk's text must still be its own
// after the whole stream (of ~60 reader buffers) was read, whether the
// response's text buffer was sized for it (MaxTokens) or had to grow.
func TestStreamTextOutlivesReaderBuffer(t *testing.T) {
	const n = 4000
	wire, texts, reasonings := longStream(n)
	srv := newRawServer(t, sseClose(wire...))
	c := newTestClient(t, Options{})
	for _, maxTokens := range []int{0, 1, n} {
		t.Run(fmt.Sprintf("max_tokens %d", maxTokens), func(t *testing.T) {
			req := chatReq(srv.url("/v1/chat/completions"), true)
			req.MaxTokens = maxTokens
			res := c.Do(context.Background(), req)
			require.Nil(t, res.Err)
			gotTexts, gotReasonings := outputs(res.Chunks)
			require.Equal(t, texts, gotTexts)
			require.Equal(t, reasonings, gotReasonings)
			text, reasoning := res.Output()
			assert.Equal(t, strings.Join(texts, ""), text)
			assert.Equal(t, strings.Join(reasonings, ""), reasoning)
		})
	}
}

// A non-streaming response's text is its one chunk and its Output.
func TestWholeOutput(t *testing.T) {
	srv := newRawServer(t, respond(fixed(200, "application/json",
		`{"choices":[{"index":0,"message":{"content":"hello","reasoning_content":"hmm"}}]}`)))
	c := newTestClient(t, Options{})
	res := c.Do(context.Background(), chatReq(srv.url("/v1/chat/completions"), false))
	require.Nil(t, res.Err)
	require.Len(t, res.Chunks, 1)
	text, reasoning := res.Output()
	assert.Equal(t, "hello", text)
	assert.Equal(t, "hmm", reasoning)
}

// A request not asked to stream whose body's extras said "stream": true is
// answered with a stream: it is read as one (as AIPerf reads by the
// Content-Type), its text and usage whole, not failed as a broken JSON reply.
func TestUnaskedStreamIsRead(t *testing.T) {
	wire, texts, _ := longStream(3)
	srv := newRawServer(t, sseClose(wire...))
	c := newTestClient(t, Options{})
	req := chatReq(srv.url("/v1/chat/completions"), false)
	req.Extra = map[string]any{"stream": true}
	res := c.Do(context.Background(), req)
	require.Nil(t, res.Err)
	text, _ := res.Output()
	assert.Equal(t, strings.Join(texts, ""), text)
	require.NotNil(t, res.Usage)
	assert.Equal(t, 2, res.Usage.CompletionTokens)
}

// readAllocs is the allocations of reading one stream of n chunks, its
// response sized as Do sizes it for max_tokens n; traced, its body is read
// as a traced request's is (Options.Trace: each read stamped).
func readAllocs(t *testing.T, n int, traced, strict bool) float64 {
	wire, _, _ := longStream(n)
	body := []byte(strings.Join(wire, ""))
	c := New(Options{RequireStreamCompletion: strict})
	defer c.Close()
	req := chatReq("http://x/v1/chat/completions", true)
	h := http.Header{"Content-Type": []string{"text/event-stream"}}
	f := formatFor(&req)
	if strict {
		f = openaiFormat{api: apiChat, req: &req, strict: true}
	}
	src := bytes.NewReader(body)
	var in io.Reader = src
	if traced {
		in = &tracked{r: src, trace: &tracer{now: c.now}}
	}
	return testing.AllocsPerRun(20, func() {
		src.Reset(body)
		res := Response{Chunks: make([]Chunk, 0, n+1), textHint: n * textPerToken}
		c.readStream(context.Background(), context.Background(), in, h, f, &res, streamHooks{})
		if res.Err != nil || len(res.Chunks) != n {
			t.Fatalf("bad stream: %v, %d chunks", res.Err, len(res.Chunks))
		}
	})
}

// Reading a stream allocates per response, never per chunk: the SSE reader
// and the decoder are reused, the response's buffers sized once and, past
// their size, doubled (a few allocations per stream, none per chunk).
func TestReadStreamAllocatesNothingPerChunk(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	for _, traced := range []bool{false, true} {
		short, long := readAllocs(t, 64, traced, false), readAllocs(t, 4096, traced, false)
		assert.Less(t, short, 64.0, "allocations of a 64-chunk stream (traced %v)", traced)
		assert.Less(t, (long-short)/(4096-64), 0.01, "allocations per chunk (%v for 64 chunks, %v for 4,096; traced %v)",
			short, long, traced)
	}
	// --require-stream-completion tracks the choices seen in bits, and
	// reads what follows [DONE] with the same reader.
	short, long := readAllocs(t, 64, false, true), readAllocs(t, 4096, false, true)
	assert.Less(t, short, 64.0, "allocations of a 64-chunk strict stream")
	assert.Less(t, (long-short)/(4096-64), 0.01, "allocations per chunk of a strict stream (%v for 64 chunks, %v for 4,096)", short, long)
}

// endless streams piece until the client goes away (at most a million
// times, so that a client that never does fails the test instead of
// hanging it).
func endless(piece string) rawHandler {
	return func(_ *rawServer, conn net.Conn, _ int, _ *http.Request, _ []byte) bool {
		io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
		for range 1_000_000 {
			if _, err := io.WriteString(conn, piece); err != nil {
				break
			}
		}
		return false
	}
}

// A stream that never ends keeps and drops at most 16 MiB (its text and
// chunks, and what it read and kept nothing of), or --max-event-bytes,
// four times that with its raw events, and then fails as too large,
// instead of growing the client's memory (or reading junk at full CPU)
// until the request timeout.
func TestEndlessStreamIsBounded(t *testing.T) {
	cases := []struct {
		name, piece string
		raw         bool
	}{
		{"text", `data: {"choices":[{"index":0,"delta":{"content":"` + strings.Repeat("x", 8000) + `"}}]}` + "\n\n", false},
		{"raw events without text", `data: {"choices":[{"index":0,"delta":{}}],"pad":"` + strings.Repeat("x", 8000) + `"}` + "\n\n", true},
		// What is read and dropped costs what it sends: comments, chunks
		// without text, malformed lines, usage chunks again and again.
		{"comments", ": ping " + strings.Repeat("x", 64) + "\n\n", false},
		{"keep-alives", "data:" + strings.Repeat(" ", 64) + "\n\n", false},
		{"empty deltas", `data: {"choices":[{"index":0,"delta":{"content":""}}]}` + "\n\n", false},
		{"comments between empty events", ": " + strings.Repeat("x", 64) + "\nevent: ping\n\n", false},
		{"malformed lines", `data: {"foo": "` + strings.Repeat("x", 64) + `"}` + "\n\n", false},
		{"usage chunks", `data: {"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}` + "\n\n", false},
		{"ignored fields", "id: " + strings.Repeat("1", 64) + "\nretry: 5\n\n", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newRawServer(t, endless(tc.piece))
			c := newTestClient(t, Options{})
			req := chatReq(srv.url("/v1/chat/completions"), true)
			if tc.raw {
				req.Raw = &metrics.Raw{}
			}
			res := c.Do(context.Background(), req)
			require.NotNil(t, res.Err)
			assert.Equal(t, ErrTypeTooLarge, res.Err.Type, res.Err.Message)
			assert.LessOrEqual(t, res.kept+res.dropped, c.maxReply(&res)+2*len(tc.piece), "at most one event over")
		})
	}
}
