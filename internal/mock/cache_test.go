package mock

import (
	"bufio"
	"encoding/json"
	"hash/fnv"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countWords counts whitespace-separated words, so test prompts have known
// token counts.
func countWords(s string) int { return len(strings.Fields(s)) }

// wordIDs is a tokenizer with one token per whitespace-separated word (its
// id a hash of the word), so prompts sharing leading words share tokens.
func wordIDs(s string) []int {
	var ids []int
	for _, w := range strings.Fields(s) {
		h := fnv.New32a()
		h.Write([]byte(w))
		ids = append(ids, int(h.Sum32()>>1))
	}
	return ids
}

// cacheReply is one request's usage as seen on the wire.
type cacheReply struct {
	promptTokens int
	cached       *int   // nil when prompt_tokens_details or cached_tokens is absent
	raw          string // the whole body (every SSE event when streaming)
}

// ask sends prompt to path (chat or completions), streaming with
// include_usage or not, and returns the reply's usage.
func ask(t *testing.T, base, path string, stream bool, prompt string) cacheReply {
	t.Helper()
	body := map[string]any{"model": "m", "max_tokens": 2, "stream": stream}
	if strings.Contains(path, "chat") {
		body["messages"] = []map[string]any{{"role": "user", "content": prompt}}
	} else {
		body["prompt"] = prompt
	}
	if stream {
		body["stream_options"] = map[string]any{"include_usage": true}
	}
	resp := post(t, base+path, body)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	raw := readAll(t, resp)
	var final wireChunk
	if stream {
		chunks := readSSE(t, strings.NewReader(raw))
		require.NotEmpty(t, chunks)
		final = chunks[len(chunks)-1]
	} else {
		require.NoError(t, json.Unmarshal([]byte(raw), &final))
	}
	require.NotNil(t, final.Usage, "usage in %s", raw)
	r := cacheReply{promptTokens: final.Usage.PromptTokens, raw: raw}
	if final.Usage.PromptDetails != nil {
		r.cached = final.Usage.PromptDetails.CachedTokens
	}
	return r
}

// cachedTokens returns the reply's cached_tokens, failing t when absent.
func (r cacheReply) cachedTokens(t *testing.T) int {
	t.Helper()
	require.NotNil(t, r.cached, "usage.prompt_tokens_details.cached_tokens missing in %s", r.raw)
	return *r.cached
}

func TestPrefixCacheHits(t *testing.T) {
	for _, tc := range []struct {
		name   string
		path   string
		stream bool
	}{
		{"chat stream", "/v1/chat/completions", true},
		{"chat non-stream", "/v1/chat/completions", false},
		{"completions stream", "/v1/completions", true},
		{"completions non-stream", "/v1/completions", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, base := start(t, Config{Fast: true, BlockSize: 2, EncodeTokens: wordIDs})
			const prompt = "the quick brown fox jumps"
			first := ask(t, base, tc.path, tc.stream, prompt)
			assert.Equal(t, 5, first.promptTokens)
			assert.Zero(t, first.cachedTokens(t), "a new prompt is a miss")
			assert.Contains(t, first.raw, `"prompt_tokens_details":{"cached_tokens":0}`)

			second := ask(t, base, tc.path, tc.stream, prompt)
			assert.Equal(t, 4, second.cachedTokens(t), "a repeated prompt is served from cache in whole blocks")

			longer := ask(t, base, tc.path, tc.stream, prompt+" over the dog")
			assert.Equal(t, 4, longer.cachedTokens(t), "a longer prompt hits on the blocks it shares")

			other := ask(t, base, tc.path, tc.stream, "a quick brown fox jumps")
			assert.Zero(t, other.cachedTokens(t), "a prompt that differs in its first block is a miss")
		})
	}
}

func TestPrefixCacheMessageBoundaries(t *testing.T) {
	_, base := start(t, Config{Fast: true, BlockSize: 1, EncodeTokens: wordIDs})
	send := func(msgs ...string) int { // role, content, role, content...
		var body []map[string]any
		for i := 0; i+1 < len(msgs); i += 2 {
			body = append(body, map[string]any{"role": msgs[i], "content": msgs[i+1]})
		}
		resp := post(t, base+"/v1/chat/completions", map[string]any{"messages": body, "max_tokens": 1})
		require.Equal(t, http.StatusOK, resp.StatusCode)
		var c wireChunk
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&c))
		require.NotNil(t, c.Usage.PromptDetails)
		return *c.Usage.PromptDetails.CachedTokens
	}
	assert.Zero(t, send("user", "a b", "user", "c"))
	assert.Equal(t, 1, send("user", "a", "user", "b c"), "message boundaries are part of the sequence")
	assert.Equal(t, 2, send("user", "a b", "assistant", "c"), "so are roles")
	assert.Equal(t, 1, send("user", "a b"), "a prefix of a cached prompt is a hit (but for its last token, always recomputed)")
	assert.Equal(t, 2, send("user", "a b", "user", "c"))
	assert.Zero(t, send("system", "a b", "user", "c"))
	assert.Equal(t, 2, send("user", "a b", "user", "", "user", "c"), "an empty message is part of the sequence too")
}

func TestPrefixCacheResets(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cfg    Config
		route  string
		status int
		clears bool
	}{
		{"reset_prefix_cache clears", Config{}, "/reset_prefix_cache", http.StatusOK, true},
		{"flush_cache clears", Config{}, "/flush_cache?timeout=5", http.StatusOK, true},
		{"failed reset keeps", Config{AdminFailStatus: 503, AdminFailCount: 1}, "/reset_prefix_cache", 503, false},
		{"failed flush keeps", Config{AdminFailStatus: 400, AdminFailCount: 1}, "/flush_cache", 400, false},
		{"rejected flush keeps", Config{}, "/flush_cache?timeout=abc", http.StatusBadRequest, false},
		{"reset-noop reset keeps", Config{ResetNoop: true}, "/reset_prefix_cache", http.StatusOK, false},
		{"reset-noop flush keeps", Config{ResetNoop: true}, "/flush_cache", http.StatusOK, false},
		{"success false keeps", Config{ResetSuccessFalse: true}, "/reset_prefix_cache", http.StatusOK, false},
		{"success false flush clears", Config{ResetSuccessFalse: true}, "/flush_cache", http.StatusOK, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Fast, tc.cfg.CountTokens, tc.cfg.BlockSize = true, countWords, 1
			s, base := start(t, tc.cfg)
			const prompt = "one two three four"
			ask(t, base, "/v1/completions", false, prompt)
			// 3 of 4: a hit never covers the last token (vLLM recomputes it).
			require.Equal(t, 3, ask(t, base, "/v1/completions", false, prompt).cachedTokens(t))

			resp := post(t, base+tc.route, nil)
			assert.Equal(t, tc.status, resp.StatusCode)
			readAll(t, resp)

			want, entries := 3, 4 // blocks of one token, the last never a hit
			if tc.clears {
				want, entries = 0, 0
			}
			assert.Equal(t, entries, s.Control().CacheEntries)
			assert.Equal(t, want, ask(t, base, "/v1/completions", true, prompt).cachedTokens(t))
		})
	}

	t.Run("only a successful reset clears", func(t *testing.T) {
		_, base := start(t, Config{Fast: true, BlockSize: 1, CountTokens: countWords, AdminFailStatus: 503, AdminFailCount: 1})
		ask(t, base, "/v1/chat/completions", false, "x y")
		require.Equal(t, 503, post(t, base+"/reset_prefix_cache", nil).StatusCode)
		require.Equal(t, 1, ask(t, base, "/v1/chat/completions", false, "x y").cachedTokens(t))
		require.Equal(t, http.StatusOK, post(t, base+"/reset_prefix_cache", nil).StatusCode)
		assert.Zero(t, ask(t, base, "/v1/chat/completions", false, "x y").cachedTokens(t), "the retry clears")
	})
}

func TestNoCacheReport(t *testing.T) {
	_, base := start(t, Config{Fast: true, NoCacheReport: true, CountTokens: countWords})
	for _, path := range []string{"/v1/chat/completions", "/v1/completions"} {
		for _, stream := range []bool{true, false} {
			for range 2 { // a miss, then a hit
				r := ask(t, base, path, stream, "hello world")
				assert.Equal(t, 2, r.promptTokens)
				assert.NotContains(t, r.raw, "prompt_tokens_details")
				assert.NotContains(t, r.raw, "cached_tokens")
			}
		}
	}
}

func TestCacheCounters(t *testing.T) {
	_, base := start(t, Config{Fast: true, BlockSize: 1, CountTokens: countWords})
	ask(t, base, "/v1/completions", false, "a b c")
	ask(t, base, "/v1/completions", false, "a b c")
	ask(t, base, "/v1/completions", true, "a b c")
	ask(t, base, "/v1/chat/completions", true, "d e")
	ask(t, base, "/v1/completions", false, "z") // a repeated one-token prompt is never a hit: its token is recomputed
	ask(t, base, "/v1/completions", false, "z")

	c, raw := getControl(t, base)
	assert.Equal(t, 2, c.CacheHits)
	assert.Equal(t, 6, c.CacheEntries, "blocks")
	assert.Contains(t, raw, `"cache_hits":2`)
	assert.Contains(t, raw, `"cache_entries":6`)

	require.Equal(t, http.StatusNoContent, post(t, base+"/mock/control/clear", nil).StatusCode)
	c, _ = getControl(t, base)
	assert.Zero(t, c.CacheHits, "clear zeroes the hit counter")
	assert.Equal(t, 6, c.CacheEntries, "clear keeps the cache")
	assert.Equal(t, 1, ask(t, base, "/v1/chat/completions", false, "d e").cachedTokens(t))
	c, _ = getControl(t, base)
	assert.Equal(t, 1, c.CacheHits)

	require.Equal(t, http.StatusOK, post(t, base+"/flush_cache", nil).StatusCode)
	c, _ = getControl(t, base)
	assert.Equal(t, 1, c.CacheHits, "a reset keeps the hit counter")
	assert.Zero(t, c.CacheEntries)
}

func TestCacheSkipsFailedRequests(t *testing.T) {
	s, base := start(t, Config{Fast: true, ErrorRate: 100})
	for range 3 {
		resp := post(t, base+"/v1/completions", map[string]any{"prompt": "p", "max_tokens": 1})
		assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)
	}
	resp := post(t, base+"/v1/completions", map[string]any{"max_tokens": 1})
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Zero(t, s.Control().CacheEntries, "only served requests reach the cache")
}

func TestCacheConcurrent(t *testing.T) {
	s, base := start(t, Config{Fast: true, BlockSize: 1, CountTokens: countWords})
	const n = 32
	cached := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			resp, err := http.Post(base+"/v1/completions", "application/json",
				strings.NewReader(`{"prompt":"same prompt here","max_tokens":1}`))
			if !assert.NoError(t, err) {
				return
			}
			defer resp.Body.Close()
			var c wireChunk
			if assert.NoError(t, json.NewDecoder(resp.Body).Decode(&c)) && assert.NotNil(t, c.Usage.PromptDetails) {
				cached[i] = *c.Usage.PromptDetails.CachedTokens
			}
		})
	}
	wg.Wait()
	misses := 0
	for _, c := range cached {
		if c == 0 {
			misses++
		} else {
			assert.Equal(t, 2, c, "all but the last of 3 tokens")
		}
	}
	assert.Equal(t, 1, misses, "exactly one request prefills")
	c := s.Control()
	assert.Equal(t, n-1, c.CacheHits)
	assert.Equal(t, 3, c.CacheEntries)
}

func TestPrefillTime(t *testing.T) {
	t.Run("per uncached token", func(t *testing.T) {
		s, err := New(Config{TTFT: 1, Prefill: 100})
		require.NoError(t, err)
		gen := func() *generation { // 1,000 tokens: 62 blocks of 16 and 8 more
			g := &generation{blocks: newBlockHasher(s.blockSeed, s.blockSize, 1000), usage: usage{PromptTokens: 1000}}
			g.blocks.add(segment{ids: make([]uint32, 1000)})
			return g
		}
		g := gen()
		assert.Equal(t, 1000, s.prefill(g), "cold: every prompt token")
		assert.Equal(t, 0, g.usage.PromptDetails.CachedTokens)
		assert.Equal(t, time.Millisecond+100*time.Millisecond, s.model.firstStep(1000))
		g = gen()
		assert.Equal(t, 8, s.prefill(g), "warm: only the partial block is left to prefill")
		assert.Equal(t, 992, g.usage.PromptDetails.CachedTokens)
		assert.Equal(t, time.Millisecond+800*time.Microsecond, s.model.firstStep(8))
	})
	t.Run("fast has none", func(t *testing.T) {
		cfg := Config{Fast: true, TTFT: 20, ITL: 5, Prefill: 100, ITLPerSeq: 1, ITLPerOSL: 1, MaxBatchedTokens: 64}
		m := cfg.model()
		assert.False(t, m.paced())
		assert.Equal(t, latencyModel{budget: 64}, m, "only the budget is left")
		cfg.Fast = false
		m = cfg.model()
		assert.Equal(t, 100*time.Microsecond, m.prefill)
	})
	t.Run("uncached prompt over http", func(t *testing.T) {
		// Lower bound only: 1,000 uncached tokens at 100 µs take at least
		// 100 ms to the first token.
		_, base := start(t, Config{ITL: 0, TTFT: 0, Prefill: 100, CountTokens: countWords})
		body := map[string]any{"prompt": strings.Repeat("w ", 1000), "max_tokens": 3, "stream": true}
		began := time.Now()
		resp := post(t, base+"/v1/completions", body)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		line, err := bufio.NewReader(resp.Body).ReadString('\n')
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(line, "data: {"), line)
		assert.GreaterOrEqual(t, time.Since(began), 100*time.Millisecond)
	})
}

func TestPrefillValidation(t *testing.T) {
	_, err := New(Config{Prefill: -1})
	require.ErrorContains(t, err, "--prefill-us-per-token")
}
