package mock

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// askIDs sends a completions prompt of token ids and returns its
// cached_tokens.
func askIDs(t *testing.T, base string, ids []int) int {
	t.Helper()
	r := askBody(t, base+"/v1/completions", map[string]any{"prompt": ids, "max_tokens": 1})
	require.Equal(t, len(ids), r.Usage.PromptTokens)
	return *r.Usage.PromptDetails.CachedTokens
}

// askBody sends a non-streaming request and returns the reply.
func askBody(t testing.TB, url string, body map[string]any) wireChunk {
	t.Helper()
	resp := post(t, url, body)
	raw := readAll(t, resp)
	require.Equal(t, http.StatusOK, resp.StatusCode, raw)
	var c wireChunk
	require.NoError(t, jsonUnmarshal(raw, &c))
	require.NotNil(t, c.Usage, raw)
	require.NotNil(t, c.Usage.PromptDetails, raw)
	return c
}

// seq returns the ids from, from+1, ... (n of them).
func seq(from, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = from + i
	}
	return out
}

func cat(parts ...[]int) []int {
	var out []int
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func TestBlockHashing(t *testing.T) {
	_, base := start(t, Config{Fast: true, BlockSize: 4})
	a := seq(1, 14) // 3 full blocks and 2 tokens
	assert.Zero(t, askIDs(t, base, a), "cold")
	assert.Equal(t, 12, askIDs(t, base, a), "every full block; a partial block is never cached")
	assert.Equal(t, 12, askIDs(t, base, cat(a[:12], seq(100, 3))), "a shared prefix of 3 blocks is 3 blocks cached")
	assert.Equal(t, 8, askIDs(t, base, cat(a[:10], seq(200, 4))), "diverging mid-block: that block misses")
	assert.Zero(t, askIDs(t, base, cat([]int{99}, a[1:])), "a different first token: every block after it differs")
	assert.Zero(t, askIDs(t, base, cat(a[4:8], seq(300, 4))), "a cached block's tokens at another position are another block")
	assert.Equal(t, 4, askIDs(t, base, a[:7]), "a shorter prompt hits its full blocks")
}

func TestLRUEviction(t *testing.T) {
	s, base := start(t, Config{Fast: true, BlockSize: 4, KVCacheTokens: 16}) // 4 blocks
	p1, p2, p3 := seq(1, 8), seq(101, 8), seq(201, 8)
	askIDs(t, base, p1)
	askIDs(t, base, p2)
	assert.Equal(t, 4, s.Control().CacheEntries)
	assert.Equal(t, 4, askIDs(t, base, p1), "p1 is now the most recently used (a hit leaves out the last block, as vLLM recomputes the last token)")
	assert.Zero(t, askIDs(t, base, p3), "p3 evicts the least recently used, p2")
	assert.Equal(t, 4, s.Control().CacheEntries, "never above capacity")
	assert.Equal(t, 4, askIDs(t, base, p1), "p1 survived")
	assert.Zero(t, askIDs(t, base, p2), "p2 was evicted (and now evicts p3)")
	assert.Zero(t, askIDs(t, base, p3))

	long := seq(1000, 24) // 6 blocks in a 4-block cache
	askIDs(t, base, long)
	assert.Equal(t, 16, askIDs(t, base, long), "a prompt larger than the cache keeps its head")
	assert.Equal(t, 4, s.Control().CacheEntries)
}

// o200k returns the default tokenizer.
func o200k(t testing.TB) tokenizer.Tokenizer {
	t.Helper()
	tok, err := tokenizer.Load(tokenizer.Default)
	require.NoError(t, err)
	return tok
}

// Multi-turn chat: turn k's prompt is turns 1..k-1 and their replies
// followed by a new user message. The reply the mock generated is cached
// with the prompt, so the next turn hits every full block of the previous
// prompt and its reply, as on a real server with a chat template.
func TestMultiTurnEchoHits(t *testing.T) {
	tok := o200k(t)
	const bs, replyTokens = 16, 21
	for _, tc := range []struct {
		model     string
		withReply bool // the reply's blocks hit (a reasoning model's cached reply starts with reasoning the client does not echo)
	}{{"mock-model", true}, {"Qwen/Qwen3-8B", false}} {
		t.Run(tc.model, func(t *testing.T) {
			_, base := start(t, Config{Fast: true, EncodeTokens: tok.Encode})
			for session := range 3 {
				var msgs []map[string]any
				prevPrompt := 0
				for turn := 1; turn <= 5; turn++ {
					msgs = append(msgs, map[string]any{"role": "user",
						"content": fmt.Sprintf("Session %d, question %d: %s?", session, turn, strings.Repeat("why is the sky blue ", turn+session))})
					body := map[string]any{"model": tc.model, "messages": msgs, "max_tokens": replyTokens}
					stream := turn%2 == 0
					var reply string
					var u *wireUsage
					if stream {
						body["stream"] = true
						body["stream_options"] = map[string]any{"include_usage": true}
						chunks := readSSE(t, post(t, base+"/v1/chat/completions", body).Body)
						for _, c := range chunks {
							if len(c.Choices) > 0 && c.Choices[0].Delta.Content != nil {
								reply += *c.Choices[0].Delta.Content
							}
						}
						u = chunks[len(chunks)-1].Usage
					} else {
						c := askBody(t, base+"/v1/chat/completions", body)
						reply, u = c.Choices[0].Message.Content, c.Usage
					}
					cached := *u.PromptDetails.CachedTokens
					if turn == 1 {
						assert.Zero(t, cached, "session %d turn 1", session)
					} else {
						want := prevPrompt / bs * bs
						if tc.withReply {
							want = (prevPrompt + replyTokens) / bs * bs
						}
						assert.Equal(t, want, cached, "session %d turn %d: the previous prompt%s in whole blocks",
							session, turn, map[bool]string{true: " and reply"}[tc.withReply])
					}
					prevPrompt = u.PromptTokens
					msgs = append(msgs, map[string]any{"role": "assistant", "content": reply})
				}
			}
		})
	}
}

// BenchmarkPrefixCacheLookup measures the prefix-cache work per request:
// hashing a prompt's token ids into blocks and looking them up (all hits,
// the steady state of a benchmark that repeats its prompts).
func BenchmarkPrefixCacheLookup(b *testing.B) {
	for _, n := range []int{32, 2048, 32768} {
		b.Run(fmt.Sprintf("tokens=%d", n), func(b *testing.B) {
			s, err := New(Config{Fast: true})
			require.NoError(b, err)
			ids := make([]uint32, n)
			for i := range ids {
				ids[i] = uint32(i * 7919 % 200000)
			}
			b.ReportAllocs()
			for b.Loop() {
				h := newBlockHasher(s.blockSeed, s.blockSize, n)
				h.add(segment{ids: ids, tag: roleTag("user")})
				s.cache.Serve(h.Hashes())
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/token")
		})
	}
}
