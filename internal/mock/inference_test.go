package mock

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInferenceOutput(t *testing.T) {
	// CountTokens counts words, so the prompt below is 6 tokens.
	_, base := start(t, Config{Fast: true, CountTokens: func(s string) int { return len(strings.Fields(s)) }})
	const prompt = "Hello there, how are you today?"
	for _, tc := range []struct {
		name         string
		path         string
		limitField   string
		stream       bool
		includeUsage bool
	}{
		{"chat stream usage", "/v1/chat/completions", "max_tokens", true, true},
		{"chat stream no usage", "/v1/chat/completions", "max_completion_tokens", true, false},
		{"chat non-stream", "/v1/chat/completions", "max_completion_tokens", false, false},
		{"completions stream usage", "/v1/completions", "max_completion_tokens", true, true},
		{"completions stream no usage", "/v1/completions", "max_tokens", true, false},
		{"completions non-stream", "/v1/completions", "max_tokens", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 37
			chat := strings.Contains(tc.path, "chat")
			body := map[string]any{"model": "any-model", "stream": tc.stream, tc.limitField: n}
			if chat {
				body["messages"] = []map[string]any{{"role": "user", "content": prompt}}
			} else {
				body["prompt"] = prompt
			}
			if tc.stream {
				body["stream_options"] = map[string]any{"include_usage": tc.includeUsage}
			}
			resp := post(t, base+tc.path, body)
			require.Equal(t, http.StatusOK, resp.StatusCode)

			var pieces []string
			var final wireChunk
			if tc.stream {
				assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
				chunks := readSSE(t, resp.Body)
				if chat {
					require.NotEmpty(t, chunks)
					role := chunks[0].Choices[0].Delta
					require.NotNil(t, role.Role, "first chat chunk carries the role")
					assert.Equal(t, "assistant", *role.Role)
					require.NotNil(t, role.Content)
					assert.Empty(t, *role.Content, "role chunk carries no text")
					assert.Nil(t, chunks[0].Choices[0].FinishReason)
					chunks = chunks[1:]
				}
				if tc.includeUsage {
					require.NotEmpty(t, chunks)
					final = chunks[len(chunks)-1]
					assert.Empty(t, final.Choices, "usage chunk has no choices")
					chunks = chunks[:len(chunks)-1]
				}
				for i, c := range chunks {
					require.Len(t, c.Choices, 1)
					assert.Nil(t, c.Usage, "usage only in the final chunk")
					ch := c.Choices[0]
					if chat {
						require.NotNil(t, ch.Delta.Content)
						assert.Nil(t, ch.Delta.Role)
						pieces = append(pieces, *ch.Delta.Content)
						assert.Equal(t, "chat.completion.chunk", c.Object)
					} else {
						require.NotNil(t, ch.Text)
						pieces = append(pieces, *ch.Text)
						assert.Equal(t, "text_completion", c.Object)
					}
					assert.Equal(t, "any-model", c.Model)
					if i == len(chunks)-1 {
						require.NotNil(t, ch.FinishReason)
						assert.Equal(t, "length", *ch.FinishReason)
					} else {
						assert.Nil(t, ch.FinishReason)
					}
				}
				assert.Len(t, pieces, n, "one token per chunk")
				for _, p := range pieces {
					assert.Contains(t, words, p)
				}
			} else {
				assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
				require.NoError(t, json.NewDecoder(resp.Body).Decode(&final))
				require.Len(t, final.Choices, 1)
				var text string
				if chat {
					assert.Equal(t, "chat.completion", final.Object)
					assert.Equal(t, "assistant", final.Choices[0].Message.Role)
					text = final.Choices[0].Message.Content
				} else {
					assert.Equal(t, "text_completion", final.Object)
					text = *final.Choices[0].Text
				}
				assert.Equal(t, n, strings.Count(text, " "), "n space-led words")
				assert.Equal(t, "length", *final.Choices[0].FinishReason)
			}
			if !tc.stream || tc.includeUsage {
				require.NotNil(t, final.Usage)
				assert.Equal(t, 6, final.Usage.PromptTokens)
				assert.Equal(t, n, final.Usage.CompletionTokens)
				assert.Equal(t, 6+n, final.Usage.TotalTokens)
			}
		})
	}
}

func TestOutputLengthWithoutMaxTokens(t *testing.T) {
	var calls atomic.Int32
	count := func(s string) int { calls.Add(1); return len(strings.Fields(s)) }
	_, base := start(t, Config{Fast: true, RandomSeed: 7, CountTokens: count})
	prompt := strings.Repeat("word ", 100)
	for range 20 {
		resp := post(t, base+"/v1/completions", map[string]any{"model": "m", "prompt": prompt})
		require.Equal(t, http.StatusOK, resp.StatusCode)
		var c wireChunk
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&c))
		assert.Equal(t, 100, c.Usage.PromptTokens)
		assert.GreaterOrEqual(t, c.Usage.CompletionTokens, 80)
		assert.LessOrEqual(t, c.Usage.CompletionTokens, 120)
		assert.Equal(t, "stop", *c.Choices[0].FinishReason)
	}
	assert.Equal(t, int32(1), calls.Load(), "the prompt count is cached")

	// A one-token prompt still produces at least one token.
	resp := post(t, base+"/v1/completions", map[string]any{"prompt": "x"})
	var c wireChunk
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&c))
	assert.Equal(t, 1, c.Usage.CompletionTokens)
}

func TestMaxCompletionTokensWins(t *testing.T) {
	_, base := start(t, Config{Fast: true})
	body := chatBody("m", 5, false, false)
	body["max_completion_tokens"] = 9
	var c wireChunk
	require.NoError(t, json.NewDecoder(post(t, base+"/v1/chat/completions", body).Body).Decode(&c))
	assert.Equal(t, 9, c.Usage.CompletionTokens)
}

func TestPromptShapes(t *testing.T) {
	_, base := start(t, Config{Fast: true, CountTokens: func(s string) int { return len(strings.Fields(s)) }})
	for _, tc := range []struct {
		name string
		path string
		body map[string]any
		want int
	}{
		{"chat parts", "/v1/chat/completions", map[string]any{"messages": []map[string]any{
			{"role": "system", "content": "be brief"},
			{"role": "user", "content": []map[string]any{{"type": "text", "text": "one two three"}}},
		}}, 5},
		{"prompt strings", "/v1/completions", map[string]any{"prompt": []string{"a b c"}}, 3}, // one prompt: several are refused
		{"prompt ids", "/v1/completions", map[string]any{"prompt": []int{1, 2, 3, 4}}, 4},
		{"prompt id batches", "/v1/completions", map[string]any{"prompt": [][]int{{1, 2, 3}}}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.body["max_tokens"] = 2
			resp := post(t, base+tc.path, tc.body)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			var c wireChunk
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&c))
			assert.Equal(t, tc.want, c.Usage.PromptTokens)
		})
	}
}

func TestApproximatePromptTokens(t *testing.T) {
	_, base := start(t, Config{Fast: true})
	resp := post(t, base+"/v1/completions", map[string]any{"prompt": strings.Repeat("x", 40), "max_tokens": 1})
	var c wireChunk
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&c))
	assert.Equal(t, 10, c.Usage.PromptTokens, "about four bytes per token")
}

func TestReasoningModels(t *testing.T) {
	_, base := start(t, Config{Fast: true})
	for _, tc := range []struct {
		model     string
		reasoning int
	}{{"Qwen/Qwen3-8B", 3}, {"openai/gpt-oss-20b", 3}, {"mock-model", 0}} {
		t.Run(tc.model, func(t *testing.T) {
			chunks := readSSE(t, post(t, base+"/v1/chat/completions", chatBody(tc.model, 12, true, true)).Body)
			require.Len(t, chunks, 1+12+1)
			var reasoning, content int
			for _, c := range chunks[1:13] {
				d := c.Choices[0].Delta
				switch {
				case d.ReasoningContent != nil:
					assert.Zero(t, content, "reasoning comes first")
					assert.Nil(t, d.Content)
					reasoning++
				case d.Content != nil:
					content++
				}
			}
			assert.Equal(t, tc.reasoning, reasoning)
			assert.Equal(t, 12-tc.reasoning, content)
			u := chunks[13].Usage
			assert.Equal(t, 12, u.CompletionTokens, "reasoning counts as completion tokens")
			if tc.reasoning > 0 {
				assert.Equal(t, tc.reasoning, u.Details.ReasoningTokens)
			} else {
				assert.Nil(t, u.Details)
			}

			var c wireChunk
			require.NoError(t, json.NewDecoder(post(t, base+"/v1/chat/completions", chatBody(tc.model, 12, false, false)).Body).Decode(&c))
			m := c.Choices[0].Message
			assert.Equal(t, tc.reasoning, strings.Count(m.ReasoningContent, " "))
			assert.Equal(t, 12-tc.reasoning, strings.Count(m.Content, " "))
		})
	}
}

func TestBadRequests(t *testing.T) {
	_, base := start(t, Config{Fast: true})
	for _, tc := range []struct {
		name, path, body, want string
	}{
		{"not json", "/v1/chat/completions", "{", "decode request body"},
		{"zero max_tokens", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"max_tokens":0}`, "max_tokens must be at least 1"},
		{"no messages", "/v1/chat/completions", `{"model":"m"}`, "messages is required"},
		{"no prompt", "/v1/completions", `{"model":"m"}`, "prompt is required"},
		{"bad prompt", "/v1/completions", `{"prompt":{"a":1}}`, "prompt: expected"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := http.Post(base+tc.path, "application/json", strings.NewReader(tc.body))
			require.NoError(t, err)
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
			assert.Contains(t, readAll(t, resp), tc.want)
		})
	}
	resp, err := http.Get(base + "/v1/chat/completions")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
}

func TestAuth(t *testing.T) {
	const key = "sk-secret-value"
	_, base := start(t, Config{Fast: true, APIKey: key})
	for _, tc := range []struct {
		name    string
		headers []string
		want    int
	}{
		{"missing", nil, http.StatusUnauthorized},
		{"wrong key", []string{"Authorization", "Bearer nope"}, http.StatusUnauthorized},
		{"not bearer", []string{"Authorization", key}, http.StatusUnauthorized},
		{"right key", []string{"Authorization", "Bearer " + key}, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, path := range []string{"/v1/chat/completions", "/v1/completions"} {
				body := chatBody("m", 3, true, true)
				body["prompt"] = "hi"
				resp := post(t, base+path, body, tc.headers...)
				assert.Equal(t, tc.want, resp.StatusCode, path)
				raw := readAll(t, resp)
				assert.NotContains(t, raw, key)
				if tc.want == http.StatusUnauthorized {
					var e struct {
						Error struct {
							Message string `json:"message"`
							Code    int    `json:"code"`
						} `json:"error"`
					}
					require.NoError(t, json.Unmarshal([]byte(raw), &e), raw)
					assert.Equal(t, 401, e.Error.Code)
					assert.Contains(t, e.Error.Message, "API key")
				}
			}
		})
	}
	t.Run("admin routes need no key", func(t *testing.T) {
		for _, path := range []string{"/reset_prefix_cache", "/flush_cache", "/start_profile", "/stop_profile"} {
			assert.Equal(t, http.StatusOK, post(t, base+path, nil).StatusCode, path)
		}
	})
}

func TestErrorRate(t *testing.T) {
	t.Run("100 percent", func(t *testing.T) {
		_, base := start(t, Config{Fast: true, ErrorRate: 100})
		for _, stream := range []bool{true, false} {
			resp := post(t, base+"/v1/chat/completions", chatBody("m", 4, stream, true))
			assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)
			assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			var e struct {
				Error struct {
					Code int `json:"code"`
				} `json:"error"`
			}
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&e))
			assert.Equal(t, 500, e.Error.Code)
		}
	})
	t.Run("50 percent is seeded", func(t *testing.T) {
		outcomes := func() string {
			_, base := start(t, Config{Fast: true, ErrorRate: 50, RandomSeed: 42})
			var b strings.Builder
			for range 60 {
				fmt.Fprint(&b, post(t, base+"/v1/completions", map[string]any{"prompt": "x", "max_tokens": 1}).StatusCode/100)
			}
			return b.String()
		}
		first := outcomes()
		assert.Contains(t, first, "2")
		assert.Contains(t, first, "5")
		assert.Equal(t, first, outcomes(), "same seed, same failures")
	})
}

func TestModelsAndHealth(t *testing.T) {
	_, base := start(t, Config{Model: "served-model"})
	resp, err := http.Get(base + "/v1/models")
	require.NoError(t, err)
	var list struct {
		Object string `json:"object"`
		Data   []struct {
			ID     string `json:"id"`
			Object string `json:"object"`
		} `json:"data"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&list))
	resp.Body.Close()
	assert.Equal(t, "list", list.Object)
	require.Len(t, list.Data, 1)
	assert.Equal(t, "served-model", list.Data[0].ID)
	assert.Equal(t, "model", list.Data[0].Object)

	resp, err = http.Get(base + "/health")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

func TestStreamTiming(t *testing.T) {
	t.Run("headers at once", func(t *testing.T) {
		_, base := start(t, Config{TTFT: float64(time.Hour / time.Millisecond)})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		body, _ := json.Marshal(chatBody("m", 3, true, false))
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/chat/completions", bytes.NewReader(body))
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err, "the headers do not wait for the first token")
		assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
		cancel()
		resp.Body.Close()
	})
	t.Run("nothing before the first token is due", func(t *testing.T) {
		_, base := start(t, Config{TTFT: 40, ITL: 1})
		began := time.Now()
		resp := post(t, base+"/v1/chat/completions", chatBody("m", 3, true, false))
		// The role chunk comes with the first token, as in vLLM, so even
		// the first body byte is at least --ttft late.
		first := make([]byte, 1)
		_, err := io.ReadFull(resp.Body, first)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, time.Since(began), 40*time.Millisecond)
		chunks := readSSE(t, io.MultiReader(bytes.NewReader(first), resp.Body))
		require.Len(t, chunks, 1+3)
		assert.Equal(t, "assistant", *chunks[0].Choices[0].Delta.Role)
	})
}

func TestConcurrentFastLoad(t *testing.T) {
	s, base := start(t, Config{Fast: true})
	const n = 200
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body, _ := json.Marshal(chatBody("m", 10+i%7, true, true))
			resp, err := http.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(string(body)))
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			chunks, err := parseSSE(resp.Body)
			if err != nil {
				errs <- fmt.Errorf("request %d: %w", i, err)
				return
			}
			if got, want := len(chunks), 1+10+i%7+1; got != want {
				errs <- fmt.Errorf("request %d: %d chunks, want %d", i, got, want)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	c := s.Control()
	assert.Equal(t, n, c.InferenceRequests)
	assert.Len(t, c.Events, 2*n)
	ends := 0
	for _, e := range c.Events {
		if e.Kind == EventRequestEnd {
			ends++
			assert.Equal(t, http.StatusOK, e.Status)
		}
	}
	assert.Equal(t, n, ends)
}

func TestClientGoneMidStream(t *testing.T) {
	s, base := start(t, Config{TTFT: 1, ITL: 50})
	ctx, cancel := context.WithCancel(context.Background())
	body, _ := json.Marshal(chatBody("m", 100, true, false))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/chat/completions", bytes.NewReader(body))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, err = resp.Body.Read(make([]byte, 512))
	require.NoError(t, err)
	cancel()
	resp.Body.Close()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		events := s.Control().Events
		require.Len(c, events, 2)
		assert.Equal(c, EventRequestEnd, events[1].Kind)
		assert.Equal(c, statusClientGone, events[1].Status)
	}, 5*time.Second, 10*time.Millisecond)
}
