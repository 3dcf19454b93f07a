package mock

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// start serves a mock built from cfg on a random loopback port.
func start(t testing.TB, cfg Config) (*Server, string) {
	t.Helper()
	s, err := New(cfg)
	require.NoError(t, err)
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return s, ts.URL
}

// post sends body as JSON with optional headers (name, value pairs).
func post(t testing.TB, url string, body any, headers ...string) *http.Response {
	t.Helper()
	var rd io.Reader = http.NoBody
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(http.MethodPost, url, rd)
	require.NoError(t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// readAll returns the body and closes it.
func readAll(t testing.TB, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	return string(b)
}

// wireChunk is a streaming chunk or non-streaming reply as a client sees it.
type wireChunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Index int     `json:"index"`
		Text  *string `json:"text"`
		Delta *struct {
			Role             *string `json:"role"`
			Content          *string `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
		} `json:"delta"`
		Message *struct {
			Role             string `json:"role"`
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
		} `json:"message"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage   *wireUsage `json:"usage"`
	Metrics *struct {
		SpeculativeDecoding *specDecoding `json:"speculative_decoding"`
	} `json:"metrics"`
}

// wireUsage is a reply's usage as a client sees it.
type wireUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	PromptDetails    *struct {
		CachedTokens *int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	Details *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// jsonUnmarshal decodes a JSON text.
func jsonUnmarshal(raw string, v any) error { return json.Unmarshal([]byte(raw), v) }

// readSSE parses a strict SSE body (see parseSSE) and fails t on error.
func readSSE(t testing.TB, body io.Reader) []wireChunk {
	t.Helper()
	chunks, err := parseSSE(body)
	require.NoError(t, err)
	return chunks
}

// parseSSE parses a strict SSE body: every event is one `data: ` line
// followed by a blank line, and [DONE] is the last event.
func parseSSE(body io.Reader) ([]wireChunk, error) {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var chunks []wireChunk
	done := false
	for sc.Scan() {
		line := sc.Text()
		if done {
			return nil, fmt.Errorf("data after [DONE]: %q", line)
		}
		payload, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			return nil, fmt.Errorf("line without 'data: ': %q", line)
		}
		if !sc.Scan() || sc.Text() != "" {
			return nil, fmt.Errorf("event %q not followed by a blank line", line)
		}
		if payload == "[DONE]" {
			done = true
			continue
		}
		var c wireChunk
		if err := json.Unmarshal([]byte(payload), &c); err != nil {
			return nil, fmt.Errorf("chunk %q: %w", payload, err)
		}
		chunks = append(chunks, c)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !done {
		return nil, errors.New("stream ended without [DONE]")
	}
	return chunks, nil
}

// getControl reads GET /mock/control (with query, e.g. "?events=admin").
func getControl(t testing.TB, base string, query ...string) (Control, string) {
	t.Helper()
	resp, err := http.Get(base + "/mock/control" + strings.Join(query, ""))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	raw := readAll(t, resp)
	var c Control
	require.NoError(t, json.Unmarshal([]byte(raw), &c))
	return c, raw
}

// kinds lists the kinds of events.
func kinds(events []Event) []EventKind {
	out := make([]EventKind, len(events))
	for i, e := range events {
		out[i] = e.Kind
	}
	return out
}

func chatBody(model string, maxTokens int, stream, includeUsage bool) map[string]any {
	b := map[string]any{
		"model":    model,
		"messages": []map[string]any{{"role": "user", "content": "Hello there, how are you today?"}},
		"stream":   stream,
	}
	if maxTokens > 0 {
		b["max_tokens"] = maxTokens
	}
	if stream {
		b["stream_options"] = map[string]any{"include_usage": includeUsage}
	}
	return b
}
