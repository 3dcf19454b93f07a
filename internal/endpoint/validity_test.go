package endpoint

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
)

const nginxPage = "<!DOCTYPE html>\n<html>\n<head><title>Welcome to nginx!</title></head>\n<body><h1>Welcome to nginx!</h1></body>\n</html>\n"

// TestOnlyAPIResponsesSucceed: a 200 is a success only when its body is an
// OpenAI response; everything else fails with a typed error naming what
// arrived.
func TestOnlyAPIResponsesSucceed(t *testing.T) {
	tests := []struct {
		name      string
		streaming bool
		raw       string
		want      string // in the message
	}{
		{"html page", false, fixed(200, "text/html", nginxPage), `(text/html): the body is not a JSON object: "<!DOCTYPE html> <html>`},
		{"html page to a streaming request", true, fixed(200, "text/html; charset=utf-8", nginxPage), `(text/html): a stream's Content-Type is text/event-stream, not an HTML page's: "<!DOCTYPE html> <html>`},
		{"empty object", false, fixed(200, "application/json", `{}`), "(application/json): the JSON body has no choices: \"{}\""},
		{"empty object to a streaming request", true, fixed(200, "application/json", `{}`), "the JSON body has no choices"},
		{"empty choices", false, fixed(200, "application/json", `{"choices":[]}`), "no choice with index 0"},
		{"usage only", false, fixed(200, "application/json", `{"usage":{"prompt_tokens":1,"completion_tokens":1}}`), "no choices"},
		{"array", false, fixed(200, "application/json", `[{"choices":[]}]`), "not a JSON object"},
		{"truncated json", false, fixed(200, "application/json", `{"choices":[{"message":`), "not a JSON object"},
		{"empty body", false, fixed(200, "application/json", ``), "(application/json): the body is empty"},
		{"no content type", false, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", "(no Content-Type): the body is not a JSON object: \"ok\""},
		{"stream of unparseable lines", true, chunked(200, "text/event-stream", "data: <b>oops</b>\n\n", "data: {\"not\":\"a chunk\"}\n\n", "data: [DONE]\n\n"),
			`(text/event-stream): data: [DONE] arrived before any response chunk: 2 data line(s) were not one (first: "<b>oops</b>")`},
		{"stream of only [DONE]", true, chunked(200, "text/event-stream", done), "data: [DONE] arrived before any response chunk (no data: line held one)"},
		{"stream of unparseable lines without [DONE]", true, chunked(200, "text/event-stream", "data: nope\n\n"), "the stream ended before any response chunk: 1 data line(s)"},
		{"plain text stream", true, chunked(200, "text/plain", "Hello\nworld\n"), "(text/plain): the stream ended before any response chunk"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newRawServer(t, respond(tc.raw))
			res := newTestClient(t, Options{}).Do(context.Background(), chatReq(srv.url("/"), tc.streaming))
			require.NotNil(t, res.Err, "a %s is not a success", tc.name)
			assert.Equal(t, ErrTypeInvalidResponse, res.Err.Type)
			assert.Equal(t, 200, res.Err.Code)
			assert.Contains(t, res.Err.Message, tc.want)
			assert.Empty(t, res.Chunks)
		})
	}
}

func TestMalformedLinesCountedInAValidStream(t *testing.T) {
	srv := newRawServer(t, respond(chunked(200, "text/event-stream",
		role, `data: {"object":"ping"}`+"\n\n", tokA, "data: not json\n\n", `data: {"choices":"odd"}`+"\n\n", tokB, ": comment\n\n", "data:\n\n", done)))
	res := newTestClient(t, Options{}).Do(context.Background(), chatReq(srv.url("/"), true))
	require.Nil(t, res.Err)
	texts, _ := outputs(res.Chunks)
	assert.Equal(t, []string{"A", "B"}, texts)
	assert.Equal(t, 3, res.MalformedChunks, "unparseable and foreign lines are counted; comments and empty keep-alives are not")
}

func TestOnlyChoiceZeroIsMeasured(t *testing.T) {
	choice := func(i int, text string) string {
		return fmt.Sprintf(`data: {"choices":[{"index":%d,"delta":{"content":%q}}]}`+"\n\n", i, text)
	}
	srv := newRawServer(t, respond(chunked(200, "text/event-stream",
		choice(0, "a"), choice(1, "X"), choice(1, "Y"), choice(0, "b"), choice(1, "Z"), done)))
	res := newTestClient(t, Options{}).Do(context.Background(), chatReq(srv.url("/"), true))
	require.Nil(t, res.Err)
	texts, _ := outputs(res.Chunks)
	assert.Equal(t, []string{"a", "b"}, texts, "choice 1 is neither merged into choice 0 nor timed as its tokens")
	assert.Zero(t, res.MalformedChunks)
}

// TestTextOnlyOnAnotherChoiceIsInvalid: a reply whose generated text came
// only on choices other than choice 0 (the one measured) is an invalid
// response, not a success with an OSL of 0, whether the other choice has
// its own chunks, shares them with an empty choice 0, or is in a whole body.
func TestTextOnlyOnAnotherChoiceIsInvalid(t *testing.T) {
	tests := []struct {
		name      string
		streaming bool
		raw       string
		want      string
	}{
		{"stream numbering its one choice 1", true, chunked(200, "text/event-stream",
			`data: {"choices":[{"index":1,"delta":{"role":"assistant","content":""}}]}`+"\n\n",
			`data: {"choices":[{"index":1,"delta":{"content":"X"}}]}`+"\n\n",
			`data: {"choices":[{"index":1,"delta":{"content":"Y"}}]}`+"\n\n",
			`data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`+"\n\n", done),
			"(text/event-stream): generated text arrived only on choice 1 (2 chunk(s)), none on choice 0, the one aiperf measures"},
		{"stream whose choice 0 stays empty beside choice 2", true, chunked(200, "text/event-stream",
			`data: {"choices":[{"index":0,"delta":{"role":"assistant"}},{"index":2,"delta":{"content":"X"}}]}`+"\n\n",
			`data: {"choices":[{"index":0,"delta":{}},{"index":2,"delta":{"reasoning_content":"hm"}}]}`+"\n\n", done),
			"generated text arrived only on choice 2 (2 chunk(s))"},
		{"whole body with an empty choice 0", false, fixed(200, "application/json",
			`{"choices":[{"index":0,"message":{"content":""}},{"index":1,"message":{"content":"hello"}}]}`),
			"(application/json): generated text arrived only on choice 1 (1 chunk(s))"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newRawServer(t, respond(tc.raw))
			res := newTestClient(t, Options{}).Do(context.Background(), chatReq(srv.url("/"), tc.streaming))
			require.NotNil(t, res.Err, "no text of choice 0 arrived: not a success")
			assert.Equal(t, ErrTypeInvalidResponse, res.Err.Type)
			assert.Equal(t, 200, res.Err.Code)
			assert.Contains(t, res.Err.Message, tc.want)
		})
	}
}

// TestAStreamWithoutAChoiceIsInvalid: a stream whose every chunk has an
// empty choices list (a usage-only chunk, or nothing) carried no
// completion: an invalid response, as the same body whole is, not a
// success with an OSL of 0. A reply of no tokens still has its choice 0.
func TestAStreamWithoutAChoiceIsInvalid(t *testing.T) {
	for name, chunks := range map[string][]string{
		"empty choices": {`data: {"id":"x","choices":[]}` + "\n\n"},
		"only usage":    {`data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":0,"total_tokens":5}}` + "\n\n"},
	} {
		t.Run(name, func(t *testing.T) {
			srv := newRawServer(t, respond(chunked(200, "text/event-stream", append(chunks, done)...)))
			res := newTestClient(t, Options{}).Do(context.Background(), chatReq(srv.url("/"), true))
			require.NotNil(t, res.Err, "nothing of a completion arrived: not a success")
			assert.Equal(t, ErrTypeInvalidResponse, res.Err.Type)
			assert.Contains(t, res.Err.Message, "no chunk carried a choice with index 0")
		})
	}
	srv := newRawServer(t, respond(chunked(200, "text/event-stream",
		`data: {"choices":[{"index":0,"delta":{"role":"assistant"}}]}`+"\n\n",
		`data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`+"\n\n", done)))
	res := newTestClient(t, Options{}).Do(context.Background(), chatReq(srv.url("/"), true))
	assert.Nil(t, res.Err, "a reply of no tokens, its choice 0 there")
}

// TestTooFewCompletionTokensAreUntrusted: usage claiming fewer completion
// tokens than the chunks of text that arrived (none, or a count sent on an
// early chunk and never updated) is flagged, so the client's count stands
// in for it; a reply that carried no text may say 0, and a count of at
// least the chunks is trusted.
func TestTooFewCompletionTokensAreUntrusted(t *testing.T) {
	zero := `{"prompt_tokens":5,"completion_tokens":0,"total_tokens":5}`
	one := `{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}`
	two := `{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}`
	for _, tc := range []struct {
		name      string
		streaming bool
		raw       string
		untrusted string
	}{
		{"stream", true, chunked(200, "text/event-stream", role, tokA, tokB, `data: {"choices":[],"usage":`+zero+"}\n\n", done),
			"completion_tokens is 0, fewer than the 2 chunk(s) of generated text that arrived"},
		{"whole body", false, fixed(200, "application/json", `{"choices":[{"message":{"content":"hi"}}],"usage":`+zero+"}"),
			"completion_tokens is 0, fewer than the 1 chunk(s) of generated text that arrived"},
		{"an empty reply", true, chunked(200, "text/event-stream", role, fin, `data: {"choices":[],"usage":`+zero+"}\n\n", done), ""},
		{"a stale count on the first chunk", true, chunked(200, "text/event-stream", role,
			`data: {"choices":[{"index":0,"delta":{"content":"A"}}],"usage":`+one+"}\n\n", tokB, tokA, done),
			"completion_tokens is 1, fewer than the 3 chunk(s) of generated text that arrived"},
		{"a count of the chunks", true, chunked(200, "text/event-stream", role, tokA, tokB, `data: {"choices":[],"usage":`+two+"}\n\n", done), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newRawServer(t, respond(tc.raw))
			res := newTestClient(t, Options{}).Do(context.Background(), chatReq(srv.url("/"), tc.streaming))
			require.Nil(t, res.Err)
			require.NotNil(t, res.Usage)
			assert.Equal(t, tc.untrusted, res.Usage.Untrusted)
		})
	}
}

func compress(t *testing.T, enc string, s string) string {
	var b bytes.Buffer
	var w io.WriteCloser
	switch enc {
	case "gzip":
		w = gzip.NewWriter(&b)
	case "zlib":
		w = zlib.NewWriter(&b)
	case "raw deflate":
		fw, err := flate.NewWriter(&b, flate.DefaultCompression)
		require.NoError(t, err)
		w = fw
	}
	_, err := io.WriteString(w, s)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return b.String()
}

func TestCompressedBodiesAreDecoded(t *testing.T) {
	whole := `{"choices":[{"message":{"content":"zipped"}}],"usage":{"prompt_tokens":2,"completion_tokens":1,"total_tokens":3}}`
	stream := tokA + tokB + usage + done
	for _, enc := range []struct{ name, header string }{{"gzip", "gzip"}, {"zlib", "deflate"}, {"raw deflate", "deflate"}} {
		t.Run(enc.name, func(t *testing.T) {
			for _, streaming := range []bool{false, true} {
				ct, body, want := "application/json", compress(t, enc.name, whole), []string{"zipped"}
				if streaming {
					ct, body, want = "text/event-stream", compress(t, enc.name, stream), []string{"A", "B"}
				}
				srv := newRawServer(t, respond(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Encoding: %s\r\nContent-Length: %d\r\n\r\n%s",
					ct, enc.header, len(body), body)))
				c := newTestClient(t, Options{})
				for range 2 {
					res := c.Do(context.Background(), chatReq(srv.url("/"), streaming))
					require.Nil(t, res.Err, "streaming=%v", streaming)
					texts, _ := outputs(res.Chunks)
					assert.Equal(t, want, texts)
					require.NotNil(t, res.Usage)
				}
				assert.EqualValues(t, 1, srv.conns.Load(), "a decoded body still returns its connection")
			}
		})
	}
	t.Run("compressed error body", func(t *testing.T) {
		body := compress(t, "gzip", `{"error":{"message":"model overloaded"}}`)
		srv := newRawServer(t, respond(fmt.Sprintf("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s", len(body), body)))
		res := newTestClient(t, Options{}).Do(context.Background(), chatReq(srv.url("/"), true))
		require.NotNil(t, res.Err)
		assert.Equal(t, metrics.Error{Code: 503, Type: ErrTypeHTTP, Message: "model overloaded"}, *res.Err)
	})
	for name, raw := range map[string]string{
		"brotli":             "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: br\r\nContent-Length: 4\r\n\r\n\x0b\x01\x80\x03",
		"gzip header lies":   fixed(200, "application/json", `{"choices":[]}`)[:len("HTTP/1.1 200 OK\r\n")] + "Content-Encoding: gzip\r\n" + fixed(200, "application/json", `{"choices":[]}`)[len("HTTP/1.1 200 OK\r\n"):],
		"zlib header broken": "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: deflate\r\nContent-Length: 2\r\n\r\n\x78\x01",
	} {
		t.Run(name, func(t *testing.T) {
			srv := newRawServer(t, respond(raw))
			res := newTestClient(t, Options{}).Do(context.Background(), chatReq(srv.url("/"), false))
			require.NotNil(t, res.Err)
			assert.Equal(t, ErrTypeInvalidResponse, res.Err.Type)
			assert.Contains(t, res.Err.Message, "Content-Encoding")
		})
	}
}

func TestResponsesOverTheSizeLimitFail(t *testing.T) {
	long := `data: {"choices":[{"delta":{"content":"` + strings.Repeat("x", 300) + `"}}]}` + "\n\n"
	tests := []struct {
		name      string
		streaming bool
		raw       string
	}{
		{"sse line", true, chunked(200, "text/event-stream", tokA, long, done)},
		{"sse event of many lines", true, chunked(200, "text/event-stream", tokA, strings.Repeat("data: 0123456789abcdef\n", 40)+"\n", done)},
		{"json body", false, fixed(200, "application/json", `{"choices":[{"message":{"content":"`+strings.Repeat("y", 300)+`"}}]}`)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newRawServer(t, respond(tc.raw))
			res := newTestClient(t, Options{MaxEventBytes: 256}).Do(context.Background(), chatReq(srv.url("/"), tc.streaming))
			require.NotNil(t, res.Err)
			assert.Equal(t, metrics.Error{Code: 200, Type: ErrTypeTooLarge,
				Message: res.Err.Message}, *res.Err)
			assert.Contains(t, res.Err.Message, "exceeds 256 bytes")
		})
	}
}

// TestDoneReturnsTheSlot: a server that keeps the body open after [DONE]
// costs one connection, not the request timeout.
func TestDoneReturnsTheSlot(t *testing.T) {
	closed := make(chan struct{}, 4)
	srv := newRawServer(t, func(s *rawServer, conn net.Conn, _ int, _ *http.Request, _ []byte) bool {
		io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
		fmt.Fprintf(conn, "%x\r\n%s\r\n", len(tokA+done), tokA+done)
		// Never send the terminating chunk: wait for the client to hang up.
		_, err := conn.Read(make([]byte, 1))
		if err != nil {
			closed <- struct{}{}
		}
		return false
	})
	c := newTestClient(t, Options{Timeout: time.Hour})
	for i := range 2 {
		got := make(chan Response, 1)
		go func() { got <- c.Do(context.Background(), chatReq(srv.url("/"), true)) }()
		select {
		case res := <-got:
			require.Nil(t, res.Err)
			require.Len(t, res.Chunks, 1)
		case <-time.After(time.Minute): // liveness only: the request timeout is an hour
			t.Fatalf("request %d: Do waited for the body to end after [DONE]", i)
		}
	}
	assert.EqualValues(t, 2, srv.conns.Load(), "the held connection is not reused")
	for range 2 {
		select {
		case <-closed:
		case <-time.After(time.Minute): // liveness only
			t.Fatal("the client never closed a connection held open after [DONE]")
		}
	}
}

func TestClientResourceErrors(t *testing.T) {
	// What net/http returns when socket() or connect() fails.
	dialErr := func(errno syscall.Errno) error {
		return &url.Error{Op: "Post", URL: "http://127.0.0.1:8000/v1/chat/completions",
			Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("socket", errno)}}
	}
	for errno, want := range map[syscall.Errno]string{
		syscall.EMFILE:        "out of file descriptors",
		syscall.ENFILE:        "out of file descriptors",
		syscall.EADDRNOTAVAIL: "out of local ports",
	} {
		e := clientError(dialErr(errno))
		require.NotNil(t, e, errno.Error())
		assert.Equal(t, ErrTypeClient, e.Type)
		assert.Contains(t, e.Message, want)
	}
	for _, errno := range []syscall.Errno{syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ETIMEDOUT} {
		assert.Nil(t, clientError(dialErr(errno)), "%v is not the client's failure", errno)
	}
}

func TestUsageCountsAreReadLeniently(t *testing.T) {
	tests := []struct {
		usage     string
		untrusted string // "" when trusted
		cached    *int
	}{
		{`{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7,"prompt_tokens_details":{"cached_tokens":3}}`, "", ptr(3)},
		{`{"prompt_tokens":5.0,"completion_tokens":2}`, "", nil},
		{`{"prompt_tokens":-5,"completion_tokens":2}`, "prompt_tokens is negative (-5)", nil},
		{`{"prompt_tokens":5,"completion_tokens":null}`, "completion_tokens is null", nil},
		{`{"prompt_tokens":5,"completion_tokens":2.5}`, "completion_tokens is not an integer (2.5)", nil},
		{`{"prompt_tokens":"5","completion_tokens":2}`, `prompt_tokens is not a number ("5")`, nil},
		{`{"prompt_tokens":5}`, "completion_tokens is missing", nil},
		{`{"prompt_tokens":5,"completion_tokens":1e300}`, "completion_tokens is out of range (1e300)", nil},
		{`{"prompt_tokens":5,"completion_tokens":2,"total_tokens":-1}`, "total_tokens is negative (-1)", nil},
		{`{"prompt_tokens":5,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":9}}`, "", nil},
		{`{"prompt_tokens":5,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":-1}}`, "", nil},
		{`"lots"`, "usage is not an object of token counts", nil},
		{`{"prompt_tokens_details":[],"prompt_tokens":1,"completion_tokens":1}`, "usage is not an object of token counts", nil},
	}
	for _, tc := range tests {
		t.Run(tc.usage, func(t *testing.T) {
			srv := newRawServer(t, respond(chunked(200, "text/event-stream", tokA,
				`data: {"choices":[],"usage":`+tc.usage+"}\n\n", done)))
			res := newTestClient(t, Options{}).Do(context.Background(), chatReq(srv.url("/"), true))
			require.Nil(t, res.Err, "bad counts do not fail the request")
			assert.Zero(t, res.MalformedChunks, "nor make its chunk unreadable")
			require.NotNil(t, res.Usage)
			assert.Equal(t, tc.untrusted, res.Usage.Untrusted)
			assert.Equal(t, tc.cached, res.Usage.CachedTokens)
		})
	}
}

// TestHTMLErrorPageIsReadAsText: a web server's error page (Python's
// http.server answering a POST it does not support) is described by its
// words, so the useful line is not cut off behind markup; a style element
// is dropped whole, and the <h1> repeating the <title> is said once.
func TestHTMLErrorPageIsReadAsText(t *testing.T) {
	page := "<!DOCTYPE HTML>\n<html lang=\"en\">\n    <head>\n        <meta charset=\"utf-8\">\n        <title>Error response</title>\n" +
		"<style>p { color: red; }</style>\n    </head>\n    <body>\n        <h1>Error response</h1>\n        <p>Error code: 501</p>\n" +
		"        <p>Message: Unsupported method (&#x27;POST&#x27;).</p>\n    </body>\n</html>\n"
	assert.Equal(t, "Error response Error code: 501 Message: Unsupported method ('POST').", bodyMessage([]byte(page)))
	assert.Equal(t, "<p>not a page", bodyMessage([]byte("<p>not a page")), "only a page is read as one")
	assert.Equal(t, "x", htmlText([]byte("<html><style>"+strings.Repeat("<style>", 1000)+"x")), "an unclosed style is looked for once")
	// Bytes whose lower case is shorter or longer (the Kelvin sign, invalid
	// UTF-8) keep the tags where they are.
	assert.Equal(t, strings.Repeat("\u212a", 10)+" x", htmlText([]byte("<html>"+strings.Repeat("\u212a", 10)+"<p>x</p>")))
	assert.Equal(t, "\xff\xff visible ok", htmlText([]byte("<html>\xff\xff<p>visible</p><style>p{}</style>ok")))
}

// TestHeldOpenAfterDoneIsCounted: replies whose server held the body open
// after [DONE] are counted once the client gave up waiting for its end and
// closed their connection, with as many draining at once as the idle pool
// holds (MaxConns, here 1): the others are closed at once, instead of
// each holding a descriptor for the drain's whole wait.
func TestHeldOpenAfterDoneIsCounted(t *testing.T) {
	srv := newRawServer(t, func(s *rawServer, conn net.Conn, _ int, _ *http.Request, _ []byte) bool {
		io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
		fmt.Fprintf(conn, "%x\r\n%s\r\n", len(tokA+done), tokA+done)
		_, _ = conn.Read(make([]byte, 1)) // never the terminating chunk: until the client hangs up
		return false
	})
	c := newTestClient(t, Options{Timeout: time.Hour, MaxConns: 1})
	const n = 5
	for range n {
		res := c.Do(context.Background(), chatReq(srv.url("/"), true))
		require.Nil(t, res.Err)
	}
	c.Close() // ends the one drain that may still wait for its body's end
	assert.EqualValues(t, n, c.HeldOpen(), "every connection held open after [DONE] is closed and counted")
	assert.EqualValues(t, n, srv.conns.Load(), "none was reused")
}

// TestCutRepliesAreNotHeldOpen: a request the client gave up on mid-stream
// (its timeout, or the caller's cancel: an interrupt) had not ended, so its
// connection is not one the server held open after the reply, however the
// drain of its body ends.
func TestCutRepliesAreNotHeldOpen(t *testing.T) {
	srv := newRawServer(t, func(s *rawServer, conn net.Conn, _ int, _ *http.Request, _ []byte) bool {
		io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
		fmt.Fprintf(conn, "%x\r\n%s\r\n", len(tokA), tokA)
		_, _ = conn.Read(make([]byte, 1)) // the rest never comes: until the client hangs up
		return false
	})
	t.Run("timeout", func(t *testing.T) {
		c := newTestClient(t, Options{Timeout: 50 * time.Millisecond, MaxConns: 4})
		res := c.Do(context.Background(), chatReq(srv.url("/"), true))
		require.NotNil(t, res.Err, "the request timed out")
		c.Close()
		assert.Zero(t, c.HeldOpen(), "a request that timed out is not a reply the server held open")
	})
	t.Run("cancel", func(t *testing.T) {
		c := newTestClient(t, Options{Timeout: time.Hour, MaxConns: 4})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req := chatReq(srv.url("/"), true)
		req.OnRead = cancel // cut once the first token was read, as an interrupt does
		res := c.Do(ctx, req)
		require.NotNil(t, res.Err, "the request was cut")
		c.Close()
		assert.Zero(t, c.HeldOpen(), "a request cut by its caller is not a reply the server held open")
	})
	t.Run("request cancellation", func(t *testing.T) {
		c := newTestClient(t, Options{Timeout: time.Hour, MaxConns: 4})
		req := chatReq(srv.url("/"), true)
		req.Cancel, req.CancelAfter = true, time.Millisecond // AIPerf's --request-cancellation-rate
		res := c.Do(context.Background(), req)
		require.True(t, res.Cancelled, "the request was cancelled")
		c.Close()
		assert.Zero(t, c.HeldOpen(), "a request cancelled on purpose is not a reply the server held open")
	})
}
