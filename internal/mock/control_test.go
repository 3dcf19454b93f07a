package mock

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAdminRoutes(t *testing.T) {
	_, base := start(t, Config{})
	for _, tc := range []struct {
		path, contentType, body string
	}{
		{"/reset_prefix_cache", "application/json", `{"success":true}`},
		{"/flush_cache", "text/plain; charset=utf-8", "Cache flushed."},
		{"/flush_cache?timeout=30", "text/plain; charset=utf-8", "Cache flushed."},
		{"/flush_cache?timeout=0.5", "text/plain; charset=utf-8", "Cache flushed."},
		{"/start_profile", "text/plain; charset=utf-8", "Start profiling."},
		{"/stop_profile", "text/plain; charset=utf-8", "Stop profiling. This will take some time."},
	} {
		t.Run(tc.path, func(t *testing.T) {
			resp := post(t, base+tc.path, nil)
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Equal(t, tc.contentType, resp.Header.Get("Content-Type"))
			assert.Equal(t, tc.body, readAll(t, resp))
		})
	}
	c, _ := getControl(t, base)
	assert.Equal(t, 4, c.ResetCount, "reset and flush share one counter")
	assert.Equal(t, 1, c.ProfilerStarts)
	assert.Equal(t, 1, c.ProfilerStops)
	assert.Zero(t, c.InferenceRequests, "admin calls are not inference")
	assert.Equal(t, []EventKind{EventReset, EventReset, EventReset, EventReset, EventStartProfile, EventStopProfile}, kinds(c.Events))
	assert.Equal(t, "/flush_cache", c.Events[2].Path)
}

func TestAdminRejects(t *testing.T) {
	_, base := start(t, Config{})
	for _, tc := range []struct {
		name, method, path string
		want               int
	}{
		{"non-numeric flush timeout", http.MethodPost, "/flush_cache?timeout=abc", http.StatusBadRequest},
		{"negative flush timeout", http.MethodPost, "/flush_cache?timeout=-1", http.StatusBadRequest},
		{"GET reset", http.MethodGet, "/reset_prefix_cache", http.StatusMethodNotAllowed},
		{"GET flush", http.MethodGet, "/flush_cache", http.StatusMethodNotAllowed},
		{"PUT start", http.MethodPut, "/start_profile", http.StatusMethodNotAllowed},
		{"GET stop", http.MethodGet, "/stop_profile", http.StatusMethodNotAllowed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, base+tc.path, http.NoBody)
			require.NoError(t, err)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			assert.Equal(t, tc.want, resp.StatusCode)
			assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			readAll(t, resp)
		})
	}
	c, _ := getControl(t, base)
	assert.Zero(t, c.ResetCount+c.ProfilerStarts+c.ProfilerStops, "rejected calls are not counted")
	require.Len(t, c.Events, 6, "rejected calls are still events")
	assert.Equal(t, http.StatusBadRequest, c.Events[0].Status)
	assert.Equal(t, http.StatusMethodNotAllowed, c.Events[5].Status)
}

func TestAdminFaults(t *testing.T) {
	s, base := start(t, Config{AdminFailStatus: 503, AdminFailCount: 3})
	paths := []string{"/reset_prefix_cache", "/start_profile", "/flush_cache", "/reset_prefix_cache", "/stop_profile"}
	var got []int
	for _, p := range paths {
		resp := post(t, base+p, nil)
		got = append(got, resp.StatusCode)
		if resp.StatusCode == 503 {
			var e struct {
				Error struct {
					Code int `json:"code"`
				} `json:"error"`
			}
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&e))
			assert.Equal(t, 503, e.Error.Code)
		}
	}
	assert.Equal(t, []int{503, 503, 503, 200, 200}, got, "the first N admin calls fail, across routes")
	// Inference does not consume the fault budget.
	assert.Equal(t, http.StatusOK, post(t, base+"/v1/completions", map[string]any{"prompt": "x", "max_tokens": 1}).StatusCode)

	c := s.Control()
	assert.Equal(t, 1, c.ResetCount, "failed calls are not counted")
	assert.Zero(t, c.ProfilerStarts)
	assert.Equal(t, 1, c.ProfilerStops)
	var statuses []int
	for _, e := range c.Events[:5] {
		statuses = append(statuses, e.Status)
	}
	assert.Equal(t, got, statuses, "failed calls are events with their status")

	// Clearing re-arms the knob.
	resp := post(t, base+"/mock/control/clear", nil)
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)
	assert.Equal(t, 503, post(t, base+"/stop_profile", nil).StatusCode)
}

func TestAdminLatency(t *testing.T) {
	_, base := start(t, Config{AdminLatencyMS: 30})
	began := time.Now()
	assert.Equal(t, http.StatusOK, post(t, base+"/start_profile", nil).StatusCode)
	assert.GreaterOrEqual(t, time.Since(began), 30*time.Millisecond)
}

func TestResetSuccessFalse(t *testing.T) {
	s, base := start(t, Config{ResetSuccessFalse: true})
	resp := post(t, base+"/reset_prefix_cache", nil)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.JSONEq(t, `{"success": false}`, readAll(t, resp))
	assert.Equal(t, "Cache flushed.", readAll(t, post(t, base+"/flush_cache", nil)), "SGLang's route is unaffected")
	assert.Equal(t, 2, s.Control().ResetCount)
}

func TestControlOrderingAndClear(t *testing.T) {
	const key = "sk-do-not-leak-42"
	_, base := start(t, Config{Fast: true, APIKey: key, BlockSize: 4})
	auth := []string{"Authorization", "Bearer " + key, "X-Custom", "v"}

	require.Equal(t, http.StatusOK, post(t, base+"/reset_prefix_cache", nil, auth...).StatusCode)
	resp := post(t, base+"/v1/chat/completions", chatBody("m", 5, true, true), auth...)
	require.Len(t, readSSE(t, resp.Body), 1+5+1)
	require.Equal(t, http.StatusOK, post(t, base+"/start_profile", nil, auth...).StatusCode)
	resp = post(t, base+"/v1/completions", map[string]any{"prompt": "x", "max_tokens": 2}, auth...)
	readAll(t, resp)
	require.Equal(t, http.StatusOK, post(t, base+"/stop_profile", nil).StatusCode)

	c, raw := getControl(t, base)
	assert.Equal(t, []EventKind{
		EventReset, EventRequestStart, EventRequestEnd, EventStartProfile,
		EventRequestStart, EventRequestEnd, EventStopProfile,
	}, kinds(c.Events))
	assert.Equal(t, 1, c.ResetCount)
	assert.Equal(t, 1, c.ProfilerStarts)
	assert.Equal(t, 1, c.ProfilerStops)
	assert.Equal(t, 2, c.InferenceRequests)
	for i, e := range c.Events {
		if i > 0 {
			assert.GreaterOrEqual(t, e.TNs, c.Events[i-1].TNs, "arrival order")
		}
		assert.Positive(t, e.TNs)
	}
	assert.Equal(t, "/v1/chat/completions", c.Events[1].Path)
	assert.Zero(t, c.Events[1].Status, "request_start has no status")
	assert.Equal(t, http.StatusOK, c.Events[2].Status)
	assert.Equal(t, http.StatusOK, c.Events[0].Status)
	assert.Contains(t, c.Events[0].HeaderNames, "Authorization")
	assert.Contains(t, c.Events[1].HeaderNames, "Authorization")
	assert.Contains(t, c.Events[1].HeaderNames, "X-Custom")
	assert.NotContains(t, c.Events[6].HeaderNames, "Authorization")
	assert.IsIncreasing(t, c.Events[1].HeaderNames, "sorted")
	assert.NotContains(t, raw, key, "header values never reach the control JSON")
	assert.NotContains(t, raw, `"v"`)
	admin, _ := getControl(t, base, "?events=admin")
	assert.Equal(t, []EventKind{EventReset, EventStartProfile, EventStopProfile}, kinds(admin.Events))
	assert.Equal(t, 2, admin.InferenceRequests, "the counters stay")
	none, _ := getControl(t, base, "?events=none")
	assert.Empty(t, none.Events)

	resp = post(t, base+"/mock/control/clear", nil)
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)
	c, raw = getControl(t, base)
	assert.Equal(t, Control{CacheEntries: 2, Events: []Event{}}, c, "the prefix cache (the chat prompt's 2 blocks) is server state and survives a clear")
	assert.Contains(t, raw, `"events":[]`)

	resp, err := http.Get(base + "/mock/control/clear")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
}

func TestEventCap(t *testing.T) {
	s, err := New(Config{})
	require.NoError(t, err)
	s.ctl.maxEvents = 3
	for range 5 {
		s.record(Event{Kind: EventReset})
	}
	c := s.Control()
	assert.Len(t, c.Events, 3)
	assert.Equal(t, 2, c.DroppedEvents)
}

// syncBuffer is a bytes.Buffer safe for a logger and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func TestAccessLogs(t *testing.T) {
	var out syncBuffer
	_, base := start(t, Config{Fast: true, AccessLogs: true, AccessLog: &out, APIKey: "sk-hidden", AdminFailStatus: 409, AdminFailCount: 1})
	post(t, base+"/reset_prefix_cache", nil)
	post(t, base+"/flush_cache?timeout=30", nil)
	readSSE(t, post(t, base+"/v1/chat/completions", chatBody("m", 3, true, true), "Authorization", "Bearer sk-hidden").Body)
	post(t, base+"/v1/completions", map[string]any{"prompt": "x"})
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		require.Len(c, lines, 4)
		assert.Contains(c, lines[0], "POST /reset_prefix_cache 409 ")
		assert.Contains(c, lines[1], "POST /flush_cache 200 ")
		assert.Contains(c, lines[2], "POST /v1/chat/completions 200 ")
		assert.Contains(c, lines[3], "POST /v1/completions 401 ")
	}, 5*time.Second, 10*time.Millisecond)
	assert.NotContains(t, out.String(), "sk-hidden")
}

// TestAccessLogEscapesPaths: a request path is logged as sent, percent-
// encoded and escaped: a decoded %1b]0;…%07 set the terminal's title and
// %1b[2J cleared it, and a %0a wrote a second, forged line.
func TestAccessLogEscapesPaths(t *testing.T) {
	var out syncBuffer
	_, base := start(t, Config{Fast: true, AccessLogs: true, AccessLog: &out})
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	rd := bufio.NewReader(conn)
	for _, path := range []string{"/%1b]0;PWNED%07%1b[2J", "/x%0a2026/12/04%2021:20:53.920545%20POST%20/reset_prefix_cache%20200%20149us",
		"/%c2%9b2J%e2%80%ae"} {
		_, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: mock\r\n\r\n", path)
		require.NoError(t, err)
		resp, err := http.ReadResponse(rd, nil) // the line is logged before the reply is sent
		require.NoError(t, err)
		readAll(t, resp)
		assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	}
	log := out.String()
	lines := strings.Split(strings.TrimSuffix(log, "\n"), "\n")
	require.Len(t, lines, 3, log)
	assert.Contains(t, lines[0], " GET /%1b]0;PWNED%07%1b[2J 404 ")
	assert.Contains(t, lines[1], " GET /x%0a2026/12/04%2021:20:53.920545%20POST%20/reset_prefix_cache%20200%20149us 404 ")
	assert.Contains(t, lines[2], " GET /%c2%9b2J%e2%80%ae 404 ")
	for i, c := range log {
		if c != '\n' && (c < 0x20 || c >= 0x7f && c <= 0x9f || c == 0x202e) {
			t.Fatalf("control character %U at byte %d of the log %q", c, i, log)
		}
	}
}
