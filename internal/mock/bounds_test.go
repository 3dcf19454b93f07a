package mock

import (
	"bufio"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMaxModelLen: a max_tokens past what the context length leaves is
// refused with vLLM's 400 (a non-streaming reply is built whole, so an
// absurd one took gigabytes); without max_tokens the output stops at the
// context length with finish_reason "length"; a prompt that fills it is
// refused.
func TestMaxModelLen(t *testing.T) {
	_, url := start(t, Config{MaxModelLen: 40})
	msg := func(text string) []map[string]string { return []map[string]string{{"role": "user", "content": text}} }

	resp := post(t, url+"/v1/chat/completions", map[string]any{"model": "m", "messages": msg("hi"), "max_tokens": 1 << 40})
	body := readAll(t, resp)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
	assert.Contains(t, body, "'max_tokens' or 'max_completion_tokens' is too large: 1099511627776")
	assert.Contains(t, body, "maximum context length is 40 tokens")

	resp = post(t, url+"/v1/completions", map[string]any{"model": "m", "prompt": strings.Repeat("word ", 30)})
	var w wireChunk
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&w))
	require.Len(t, w.Choices, 1)
	require.NotNil(t, w.Choices[0].FinishReason)
	assert.Equal(t, "length", *w.Choices[0].FinishReason)
	assert.Equal(t, 40, w.Usage.PromptTokens+w.Usage.CompletionTokens, "the output stops where the context ends")

	resp = post(t, url+"/v1/completions", map[string]any{"model": "m", "prompt": strings.Repeat("word ", 200), "max_tokens": 1})
	body = readAll(t, resp)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
	assert.Contains(t, body, `"This model's maximum context length is 40 tokens. However, your request has 250 input tokens. Please reduce the length of the input messages."`)

	_, err := New(Config{MaxModelLen: -1})
	assert.ErrorContains(t, err, "--max-model-len must be >= 0")
}

// TestEventLogBytesCap: the event log is bounded in bytes too: requests
// with a thousand long header names each (a hostile client's) are counted
// as dropped once their names fill the budget, instead of growing the log
// by a megabyte a request.
func TestEventLogBytesCap(t *testing.T) {
	s, err := New(Config{})
	require.NoError(t, err)
	names := make([]string, 1000)
	for i := range names {
		names[i] = "X-" + strings.Repeat("a", 1000) + string(rune('a'+i%26))
	}
	for range 200 {
		s.record(Event{Kind: EventRequestStart, Path: "/v1/chat/completions", HeaderNames: names})
	}
	c := s.Control()
	assert.Less(t, len(c.Events), 200)
	assert.Equal(t, 200, len(c.Events)+c.DroppedEvents)
	held := 0
	for _, e := range c.Events {
		held += eventBytes(e)
	}
	assert.LessOrEqual(t, held, maxEventBytes)
}

// TestSlowBodyIsCut: a client that sends its headers and then trickles its
// body is cut after the body timeout (as slow headers are), while a reply
// that takes longer than that timeout is not.
func TestSlowBodyIsCut(t *testing.T) {
	s, url := start(t, Config{TTFT: 300, ITL: 1})
	s.bodyTimeout = 100 * time.Millisecond

	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Write([]byte("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"))
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(20*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err == nil { // the handler saw the body's read fail: a 400, then the connection ends
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
		resp.Body.Close()
	}
	var ne net.Error
	if err != nil && assert.ErrorAs(t, err, &ne) {
		assert.False(t, ne.Timeout(), "the server never cut the connection")
	}

	resp = post(t, url+"/v1/chat/completions", map[string]any{"model": "m", "stream": true, "max_tokens": 3,
		"messages": []map[string]string{{"role": "user", "content": "hi"}}})
	body := readAll(t, resp)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body, "[DONE]", "a reply longer than the body timeout is served whole")
}
