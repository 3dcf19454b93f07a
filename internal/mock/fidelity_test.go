package mock

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// postRaw sends body verbatim as JSON and returns the status and reply.
func postRaw(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	return resp.StatusCode, readAll(t, resp)
}

// errorMessage returns an OpenAI-shaped error body's message.
func errorMessage(t *testing.T, raw string) string {
	t.Helper()
	var e struct {
		Error struct {
			Message string `json:"message"`
			Code    int    `json:"code"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(raw), &e), raw)
	return e.Error.Message
}

// A reset whose client leaves during --admin-latency-ms still runs: once it
// is counted, the cache is empty.
func TestAbandonedResetStillResets(t *testing.T) {
	s, base := start(t, Config{Fast: true, BlockSize: 1, CountTokens: countWords, AdminLatencyMS: 1000})
	ask(t, base, "/v1/completions", false, "a b c")
	require.Equal(t, 3, s.Control().CacheEntries)

	// The client gives up as soon as its request is on the wire, long
	// before the latency ends: the request written whole on a connection
	// of its own, which is closed at once. (A canceled http.Client request
	// could close its connection before its buffered bytes were sent, and
	// a loaded machine then saw no reset at all.)
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	require.NoError(t, err)
	_, err = io.WriteString(conn, "POST /reset_prefix_cache HTTP/1.1\r\nHost: mock\r\nContent-Length: 0\r\n\r\n")
	require.NoError(t, err)
	require.NoError(t, conn.Close(), "the client left before the answer")

	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, 1, s.Control().ResetCount)
	}, 10*time.Second, 10*time.Millisecond)
	ctl, _ := getControl(t, base, "?events=admin")
	assert.Zero(t, ctl.CacheEntries, "a counted reset has emptied the cache")
	require.Len(t, ctl.Events, 1)
	assert.Equal(t, http.StatusOK, ctl.Events[0].Status)
	assert.Zero(t, ask(t, base, "/v1/completions", false, "a b c").cachedTokens(t))
}

// A hit never covers a prompt's last token (vLLM recomputes it for its
// logits): cached_tokens, the prefix-cache hit counter and the prefill
// time all see at most ⌊(n−1)/block⌋ blocks.
func TestCacheHitLeavesTheLastToken(t *testing.T) {
	s, base := start(t, Config{TTFT: 1, ITL: 0, Prefill: 1000}) // 1 ms per uncached token, blocks of 16
	ids := seq(1, 32)
	assert.Zero(t, askIDs(t, base, ids), "cold")
	assert.Equal(t, 16, askIDs(t, base, ids), "2 blocks cached: the second is recomputed for its last token")
	assert.Equal(t, 32, askIDs(t, base, append(ids, 99)), "one token more: both blocks are a hit")
	assert.Zero(t, askIDs(t, base, seq(1, 16)), "a one-block prompt is never a hit")

	first := s.Timing().Schedule.First
	assert.EqualValues(t, 4, first.Count)
	assert.InDelta(t, 33_000, first.MaxUS, 1e-6, "cold: 1 ms + 32 uncached tokens")
	assert.InDelta(t, 2_000, first.MinUS, 1e-6, "33 tokens, 32 cached: 1 ms + 1 uncached token")
	assert.InDelta(t, (33+17+2+17)*1000, first.SumUS, 1e-6, "the second request prefills its 16 recomputed tokens, the last 16")

	resp, err := http.Get(base + "/metrics")
	require.NoError(t, err)
	metrics := readAll(t, resp)
	hits := regexp.MustCompile(`(?m)^vllm:prefix_cache_hits_total\{[^}]*\} (\S+)$`).FindStringSubmatch(metrics)
	require.NotNil(t, hits, metrics)
	n, err := strconv.ParseFloat(hits[1], 64)
	require.NoError(t, err)
	assert.Equal(t, float64(16+32), n, "the hit counter counts the tokens reported cached")
	assert.Equal(t, 2, s.Control().CacheHits, "requests with cached_tokens > 0")
}

func TestLatencyFlagsBounded(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"ttft", Config{TTFT: 1e308}, "--ttft must be between 0 and 3600000 ms (one hour), got 1e+308"},
		{"ttft past an hour", Config{TTFT: 9.3e12}, "--ttft must be between 0 and 3600000 ms (one hour)"},
		{"itl", Config{ITL: 3_600_001}, "--itl must be between 0 and 3600000 ms (one hour)"},
		{"prefill", Config{Prefill: 1e308}, "--prefill-us-per-token must be between 0 and 3600000000 us (one hour)"},
		{"per-seq step", Config{ITLPerSeq: 1e308}, "--itl-concurrency-lin-ms must be between 0 and 3600000 ms"},
		{"per-osl step", Config{ITLPerOSL: 1e308}, "--itl-per-osl-token-ms must be between 0 and 3600000 ms"},
		{"video frame", Config{VideoGenMSPerFrame: 1e308}, "--video-gen-ms-per-frame must be between 0 and 3600000 ms"},
		{"image pixel", Config{ImageGenUSPerPixel: 1e308}, "--image-gen-us-per-pixel must be between 0 and 3600000000 us"},
		{"admin latency", Config{AdminLatencyMS: 1e308}, "--admin-latency-ms must be between 0 and 3600000 ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg)
			assert.ErrorContains(t, err, tc.want)
		})
	}

	// The largest values are allowed, and what they price never goes
	// negative: products with any count saturate.
	s, err := New(Config{TTFT: maxLatencyMS, ITL: maxLatencyMS, Prefill: maxLatencyUS, ITLPerSeq: maxLatencyMS, ITLPerOSL: maxLatencyMS})
	require.NoError(t, err)
	assert.Equal(t, float64(maxLatencyMS), s.Timing().TTFTMS)
	assert.Equal(t, float64(maxLatencyUS), s.Timing().PrefillUSPerToken)
	assert.Equal(t, maxDelay, s.model.firstStep(1<<40))
	assert.Equal(t, maxDelay, s.model.step(1<<40, 1<<40))
	assert.Equal(t, maxDelay, scaled(maxDelay, 1e300))
	var h logHist
	h.observeN(int64(maxDelay), 1<<40)
	h.observeN(int64(maxDelay), 1<<40)
	assert.Equal(t, int64(1<<63-1), h.snapshot().sum, "a sum saturates rather than wrapping")
}

func TestMinTokens(t *testing.T) {
	_, base := start(t, Config{Fast: true, MaxModelLen: 20, CountTokens: countWords})
	for _, stream := range []bool{false, true} {
		body := map[string]any{"prompt": "hi", "min_tokens": 7, "stream": stream, "stream_options": map[string]any{"include_usage": true}}
		resp := post(t, base+"/v1/completions", body)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		var c wireChunk
		if stream {
			chunks := readSSE(t, resp.Body)
			c = chunks[len(chunks)-1]
			c.Choices = chunks[len(chunks)-2].Choices
		} else {
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&c))
		}
		assert.Equal(t, 7, c.Usage.CompletionTokens, "a one-token prompt would draw one token; min_tokens raises it")
		assert.Equal(t, "stop", *c.Choices[0].FinishReason)
	}
	c := askBody(t, base+"/v1/completions", map[string]any{"prompt": "hi", "min_tokens": 5, "max_tokens": 5})
	assert.Equal(t, 5, c.Usage.CompletionTokens)

	for _, tc := range []struct{ body, want string }{
		{`{"prompt":"hi","min_tokens":7,"max_tokens":5}`, "min_tokens must be less than or equal to max_tokens=5, got 7."},
		{`{"prompt":"hi","min_tokens":7,"max_completion_tokens":6}`, "min_tokens must be less than or equal to max_tokens=6, got 7."},
		{`{"prompt":"hi","min_tokens":-1}`, "min_tokens must be greater than or equal to 0, got -1."},
		{`{"prompt":"hi","min_tokens":20}`, "min_tokens must be less than or equal to max_tokens=19, got 20."}, // the room --max-model-len leaves
	} {
		status, raw := postRaw(t, base+"/v1/completions", tc.body)
		assert.Equal(t, http.StatusBadRequest, status, tc.body)
		assert.Equal(t, tc.want, errorMessage(t, raw), tc.body)
	}
}

func TestOneChoiceOnly(t *testing.T) {
	_, base := start(t, Config{Fast: true})
	c := askBody(t, base+"/v1/completions", map[string]any{"prompt": "hi", "max_tokens": 2, "n": 1})
	assert.Len(t, c.Choices, 1)
	for body, want := range map[string]string{
		`{"prompt":"hi","n":2}`:                               "n must be 1: the mock returns one choice per request, got n=2",
		`{"messages":[{"role":"user","content":"hi"}],"n":4}`: "n must be 1: the mock returns one choice per request, got n=4",
		`{"prompt":"hi","n":0}`:                               "n must be at least 1, got 0.",
	} {
		path := "/v1/completions"
		if strings.Contains(body, "messages") {
			path = "/v1/chat/completions"
		}
		status, raw := postRaw(t, base+path, body)
		assert.Equal(t, http.StatusBadRequest, status, body)
		assert.Equal(t, want, errorMessage(t, raw), body)
	}
}

func TestBodyIsOneJSONValue(t *testing.T) {
	_, base := start(t, Config{Fast: true})
	for _, tc := range []struct {
		path, body string
		want       int
	}{
		{"/v1/completions", `{"prompt":"hi","max_tokens":1}{"x":1}`, http.StatusBadRequest},
		{"/v1/completions", `{"prompt":"hi","max_tokens":1} trailing`, http.StatusBadRequest},
		{"/v1/completions", `{"prompt":"hi","max_tokens":1}]`, http.StatusBadRequest},
		{"/v1/messages", `{"max_tokens":1,"messages":[{"role":"user","content":"hi"}]} {}`, http.StatusBadRequest},
		{"/v1/completions", "{\"prompt\":\"hi\",\"max_tokens\":1} \r\n\t", http.StatusOK},
		// every route that reads a JSON body, not only the inference ones
		{"/v1/embeddings", `{"model":"m","input":"hi"}{}`, http.StatusBadRequest},
		{"/v2/rerank", `{"model":"m","query":"q","documents":["a"]} x`, http.StatusBadRequest},
		{"/v1/infer", `{"input":[{"text":"q"}]}{}`, http.StatusBadRequest},
		{"/v1/images/generations", `{"prompt":"a cat"}{}`, http.StatusBadRequest},
		{"/v1/videos", `{"prompt":"a cat"}{}`, http.StatusBadRequest},
	} {
		status, raw := postRaw(t, base+tc.path, tc.body)
		assert.Equal(t, tc.want, status, "%s: %s", tc.body, raw)
		if tc.want != http.StatusOK {
			assert.Contains(t, errorMessage(t, raw), "decode request body", tc.body)
		}
	}
}

func TestEmptyPromptAndTokenIDs(t *testing.T) {
	_, base := start(t, Config{Fast: true})
	for _, tc := range []struct{ path, body, want string }{
		{"/v1/completions", `{"prompt":""}`, "The decoder prompt cannot be empty"},
		{"/v1/completions", `{"prompt":[]}`, "The decoder prompt cannot be empty"},
		{"/v1/completions", `{"prompt":[[]]}`, "The decoder prompt cannot be empty"},
		{"/generate", `{"inputs":""}`, "The decoder prompt cannot be empty"},
		{"/v1/completions", `{"prompt":[5,-2]}`, "Token id -2 is out of vocabulary"},
		{"/v1/completions", `{"prompt":[[1,-7]]}`, "Token id -7 is out of vocabulary"},
		{"/v1/completions", `{"prompt":[4294967296]}`, "Token id 4294967296 is out of vocabulary"},
	} {
		status, raw := postRaw(t, base+tc.path, tc.body)
		assert.Equal(t, http.StatusBadRequest, status, tc.body)
		assert.Equal(t, tc.want, errorMessage(t, raw), tc.body)
	}
	// A chat prompt has its template's tokens in vLLM, so an empty message
	// is accepted.
	c := askBody(t, base+"/v1/chat/completions", map[string]any{"messages": []map[string]any{{"role": "user", "content": ""}}, "max_tokens": 1})
	assert.Zero(t, c.Usage.PromptTokens)
}

func TestRefusalFidelity(t *testing.T) {
	s, base := start(t, Config{Fast: true, MaxModelLen: 8, CountTokens: countWords})
	// The 64 MiB body below is decoded as it arrives: under -race beside
	// CPU burners that takes longer than the mock's 30 s body timeout.
	s.bodyTimeout = time.Hour

	status, raw := postRaw(t, base+"/v1/completions", `{"prompt":"a b c d e f g h i j"}`)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "This model's maximum context length is 8 tokens. However, your request has 10 input tokens. Please reduce the length of the input messages.", errorMessage(t, raw))

	// max_tokens as pydantic reads an int: a whole float is that integer.
	for body, want := range map[string]int{
		`{"prompt":"hi","max_tokens":3.0}`:            3,
		`{"prompt":"hi","max_tokens":5e0}`:            5,
		`{"prompt":"hi","max_completion_tokens":2E0}`: 2,
	} {
		status, raw := postRaw(t, base+"/v1/completions", body)
		require.Equal(t, http.StatusOK, status, raw)
		var c wireChunk
		require.NoError(t, jsonUnmarshal(raw, &c))
		assert.Equal(t, want, c.Usage.CompletionTokens, body)
	}
	status, raw = postRaw(t, base+"/v1/completions", `{"prompt":"hi","max_tokens":1e9}`)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, errorMessage(t, raw), "'max_tokens' or 'max_completion_tokens' is too large: 1000000000.", "1e9 is read as an integer")
	for _, body := range []string{`{"prompt":"hi","max_tokens":1.5}`, `{"prompt":"hi","min_tokens":0.5}`, `{"prompt":"hi","n":1.25}`} {
		status, raw = postRaw(t, base+"/v1/completions", body)
		assert.Equal(t, http.StatusBadRequest, status, body)
		assert.Contains(t, errorMessage(t, raw), "input should be a valid integer, got a number with a fractional part", body)
	}
	status, raw = postRaw(t, base+"/v1/completions", `{"prompt":"hi","max_tokens":"3"}`)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, errorMessage(t, raw), "input should be a valid integer")

	// A body over the 64 MiB bound is 413.
	big := io.MultiReader(strings.NewReader(`{"prompt":"`), &repeatReader{b: 'a', n: maxRequestBytes}, strings.NewReader(`"}`))
	resp, err := http.Post(base+"/v1/completions", "application/json", big)
	require.NoError(t, err)
	raw = readAll(t, resp)
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, raw)
	assert.Contains(t, errorMessage(t, raw), "request body too large")

	// Any method but POST on an API route is the admin routes' JSON 405.
	for _, path := range []string{"/v1/chat/completions", "/v1/completions", "/v1/embeddings", "/generate", "/reset_prefix_cache"} {
		resp, err := http.Get(base + path)
		require.NoError(t, err)
		raw := readAll(t, resp)
		assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, path)
		assert.Equal(t, "application/json", resp.Header.Get("Content-Type"), path)
		assert.Equal(t, http.MethodPost, resp.Header.Get("Allow"), path)
		assert.JSONEq(t, `{"error":{"message":"GET is not allowed, use POST","type":"method_not_allowed","code":405}}`, raw, path)
	}
}

// repeatReader reads n copies of b.
type repeatReader struct {
	b byte
	n int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := min(len(p), r.n)
	for i := range k {
		p[i] = r.b
	}
	r.n -= k
	return k, nil
}
