package mock

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clientStream is what a raw client measured of one streaming reply: when
// it sent the request, and when it read each token chunk.
type clientStream struct {
	sent  time.Time
	reads []time.Time
}

// streamTokens sends a streaming request and times the token chunks as
// they are read (the role chunk and the usage chunk are not tokens).
func streamTokens(t *testing.T, url string, body any) clientStream {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	var cs clientStream
	cs.sent = time.Now()
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	require.NoError(t, err)
	defer resp.Body.Close()
	rd := bufio.NewReader(resp.Body)
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			break
		}
		now := time.Now()
		payload, ok := strings.CutPrefix(strings.TrimSpace(line), "data: ")
		if !ok || payload == "[DONE]" {
			continue
		}
		var c wireChunk
		require.NoError(t, json.Unmarshal([]byte(payload), &c))
		if len(c.Choices) == 0 {
			continue // usage
		}
		ch := c.Choices[0]
		if ch.Text != nil || ch.Delta != nil && (ch.Delta.Content != nil && *ch.Delta.Content != "" || ch.Delta.ReasoningContent != nil) {
			cs.reads = append(cs.reads, now)
		}
	}
	return cs
}

func getTiming(t *testing.T, base string) Timing {
	t.Helper()
	resp, err := http.Get(base + "/mock/timing")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	var tm Timing
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&tm))
	return tm
}

// GET /mock/timing counts every token chunk a client received, and what it
// reports agrees with what the client measured: the server's first-chunk
// offsets are at least --ttft and, request by request, at most the
// client's; its gaps add up to at least the schedule's; no chunk is early.
// Only inequalities that cannot fail on a slow machine are checked.
func TestTimingAgreesWithClient(t *testing.T) {
	const ttft, itl = 20 * time.Millisecond, 2 * time.Millisecond
	_, base := start(t, Config{TTFT: durationMS(ttft), ITL: durationMS(itl)})
	resp, err := http.Post(base+"/mock/timing/clear", "", nil)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)

	const tokens = 15
	bodies := []any{
		chatBody("m", tokens, true, true),
		chatBody("qwen", tokens, true, false), // reasoning_content first
		map[string]any{"prompt": "hello", "max_tokens": tokens, "stream": true},
		map[string]any{"prompt": "hello", "max_tokens": tokens, "stream": true, "stream_options": map[string]any{"include_usage": true}},
	}
	streams := make([]clientStream, len(bodies))
	var wg sync.WaitGroup
	for i, body := range bodies {
		path := "/v1/chat/completions"
		if _, ok := body.(map[string]any)["prompt"]; ok {
			path = "/v1/completions"
		}
		wg.Go(func() { streams[i] = streamTokens(t, base+path, body) })
	}
	wg.Wait()

	var chunks, gaps int
	var clientFirst, clientGaps time.Duration
	for _, cs := range streams {
		require.Len(t, cs.reads, tokens)
		chunks += len(cs.reads)
		gaps += len(cs.reads) - 1
		clientFirst += cs.reads[0].Sub(cs.sent)
		clientGaps += cs.reads[len(cs.reads)-1].Sub(cs.reads[0])
	}

	tm := getTiming(t, base)
	if runtime.GOOS == "linux" {
		assert.Equal(t, "thread", tm.Clock)
	}
	assert.Equal(t, 20.0, tm.TTFTMS)
	assert.Equal(t, 2.0, tm.ITLMS)
	assert.Positive(t, tm.WindowS)

	// Counts are exact.
	assert.Equal(t, uint64(len(bodies)), tm.FirstChunk.Count)
	assert.Equal(t, uint64(gaps), tm.Gap.Count)
	assert.Equal(t, uint64(chunks), tm.Lateness.Count)
	assert.Equal(t, uint64(chunks), tm.Release.Count)

	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	// No chunk goes out before it is due, nor is written before it is released.
	assert.GreaterOrEqual(t, tm.FirstChunk.MinUS, us(ttft))
	assert.GreaterOrEqual(t, tm.Lateness.MinUS, 0.0)
	assert.GreaterOrEqual(t, tm.Release.MinUS, 0.0)
	assert.GreaterOrEqual(t, tm.Lateness.SumUS, tm.Release.SumUS)
	// The server's arrival follows the client's send and its flush precedes
	// the client's read, so its first-chunk offsets are the smaller.
	assert.LessOrEqual(t, tm.FirstChunk.SumUS, us(clientFirst)+1)
	// A reply's gaps add up to its last flush minus its first, at least
	// (tokens−1)×ITL minus the first token's lateness.
	assert.GreaterOrEqual(t, tm.Gap.SumUS, float64(gaps)*us(itl)-float64(len(bodies))*tm.Lateness.MaxUS)
	// A reply's span as written (last flush − first flush) is at most its
	// span as read plus how late its first token was read: the last read
	// follows the last flush, and the first token's read delay is at most
	// the client's first-token time minus the server's (the server's
	// arrival follows the client's send). 1 µs per gap of rounding.
	assert.LessOrEqual(t, tm.Gap.SumUS, us(clientGaps)+us(clientFirst)-tm.FirstChunk.SumUS+float64(gaps))

	for name, h := range map[string]histStats{"first": tm.FirstChunk, "gap": tm.Gap, "lateness": tm.Lateness, "release": tm.Release} {
		assert.LessOrEqual(t, h.MinUS, h.P50US, name)
		assert.LessOrEqual(t, h.P50US, h.P90US, name)
		assert.LessOrEqual(t, h.P90US, h.P99US, name)
		assert.LessOrEqual(t, h.P99US, h.MaxUS, name)
		assert.InDelta(t, h.SumUS/float64(h.Count), h.MeanUS, 1e-6, name)
	}

	// Clearing starts afresh.
	resp, err = http.Post(base+"/mock/timing/clear", "", nil)
	require.NoError(t, err)
	resp.Body.Close()
	tm = getTiming(t, base)
	assert.Zero(t, tm.FirstChunk.Count+tm.Gap.Count+tm.Lateness.Count+tm.Release.Count)
	assert.Equal(t, histStats{}, tm.Lateness)
}

// Non-streaming replies and errors are not timed; GET is the only method
// of /mock/timing and POST of its clear route.
func TestTimingRoutes(t *testing.T) {
	_, base := start(t, Config{Fast: true})
	readAll(t, post(t, base+"/v1/chat/completions", chatBody("m", 3, false, false)))
	tm := getTiming(t, base)
	assert.Equal(t, "none", tm.Clock)
	assert.Zero(t, tm.Lateness.Count, "a non-streaming reply is not timed")

	readAll(t, post(t, base+"/v1/chat/completions", chatBody("m", 3, true, false)))
	tm = getTiming(t, base)
	assert.Equal(t, uint64(3), tm.Lateness.Count, "--fast streams are timed, every token due on arrival")
	assert.Equal(t, uint64(2), tm.Gap.Count)

	resp := post(t, base+"/mock/timing", nil)
	readAll(t, resp)
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	resp, err := http.Get(base + "/mock/timing/clear")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
}

func TestTimingClear(t *testing.T) {
	s, err := New(Config{Fast: true})
	require.NoError(t, err)
	st := s.timing.Load()
	st.gap.observe(5000)
	require.Equal(t, uint64(1), s.Timing().Gap.Count)
	s.clearTiming()
	tm := s.Timing()
	assert.Zero(t, tm.Gap.Count)
	assert.Zero(t, tm.Gap.SumUS)
	assert.Equal(t, "none", tm.Clock, "--fast paces nothing")
}
