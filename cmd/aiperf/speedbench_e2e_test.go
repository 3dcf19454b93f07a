package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// speedBenchRows is a small SPEED-Bench file: two coding rows (the second
// of two turns), a math row and a mixed-tier row.
const speedBenchRows = `{"question_id": "c0000000000000000000000000000001", "category": "coding", "messages": [{"role": "user", "content": "Write a Go function that reverses a slice."}]}
{"question_id": "m0000000000000000000000000000002", "category": "math", "messages": [{"role": "user", "content": "What is seventeen times twenty-three?"}]}
{"question_id": "c0000000000000000000000000000003", "category": "coding", "sub_category": "go", "messages": [{"role": "user", "content": "Explain what a select statement does."}, {"role": "user", "content": "Now add a timeout to it."}]}
{"question_id": "x0000000000000000000000000000004", "category": "mixed", "messages": [{"role": "user", "content": "The code word is PLUM. What is the code word?"}]}
`

// chatSeen is the messages of one chat request the mock received.
type chatSeen struct {
	Messages []struct{ Role, Content string }
}

// startRecordingMock is the mock behind a front end that keeps the
// messages of every chat request it receives.
func startRecordingMock(t *testing.T) (*mockServer, func() []chatSeen) {
	var mu sync.Mutex
	var seen []chatSeen
	m := startMockBehind(t, mock.Config{Fast: true}, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/chat/completions") {
				body, err := io.ReadAll(r.Body)
				require.NoError(t, err)
				var c chatSeen
				require.NoError(t, json.Unmarshal(body, &c))
				mu.Lock()
				seen = append(seen, c)
				mu.Unlock()
				r.Body = io.NopCloser(bytes.NewReader(body))
			}
			h.ServeHTTP(w, r)
		})
	})
	return m, func() []chatSeen {
		mu.Lock()
		defer mu.Unlock()
		return append([]chatSeen(nil), seen...)
	}
}

// --custom-dataset-type speed_bench_coding replays the coding rows of a
// local SPEED-Bench file, each a session whose messages are its turns:
// two sessions, three requests, the second session's second request
// carrying its first turn and the server's reply before its own; no other
// category's prompt is sent.
func TestSpeedBenchProfile(t *testing.T) {
	m, seen := startRecordingMock(t)
	dir := t.TempDir()
	writeFile(t, dir, "speed.jsonl", speedBenchRows)
	inv := cli(t, dir, "profile", "-m", "mock-model", "-u", m.URL, "--streaming", "--ui", "none", "--no-store",
		"--custom-dataset-type", "speed_bench_coding", "--input-file", "speed.jsonl", "--osl", "4",
		"--concurrency", "1", "--conversation-num", "2")
	require.Equal(t, ExitOK, inv.code, inv.stderr)

	reqs := seen()
	require.Len(t, reqs, 3, "the two coding sessions' three turns")
	var last []string
	for _, r := range reqs {
		require.NotEmpty(t, r.Messages)
		msg := r.Messages[len(r.Messages)-1]
		assert.Equal(t, "user", msg.Role)
		last = append(last, msg.Content)
	}
	assert.ElementsMatch(t, []string{"Write a Go function that reverses a slice.", "Explain what a select statement does.",
		"Now add a timeout to it."}, last, "the coding rows' messages, nothing of math or mixed")
	for _, r := range reqs {
		if r.Messages[len(r.Messages)-1].Content != "Now add a timeout to it." {
			continue
		}
		require.Len(t, r.Messages, 3, "the session's history: its first turn and the reply")
		assert.Equal(t, "Explain what a select statement does.", r.Messages[0].Content)
		assert.Equal(t, "assistant", r.Messages[1].Role)
	}

	assert.Equal(t, 3.0, metricAvg(t, onlyExport(t, dir), "request_count"))
	convs := map[string]int{}
	for _, r := range profilingRecords(t, dir) {
		convs[r.Metadata.ConversationID]++
	}
	assert.Equal(t, map[string]int{"c0000000000000000000000000000001": 1, "c0000000000000000000000000000003": 2}, convs,
		"each session is its row's question_id")
}

// A SPEED-Bench file that cannot be benchmarked as asked is refused before
// any traffic (exit 2), saying where and why: placeholder prompts, a
// category the file does not have, a malformed row.
func TestSpeedBenchRefusals(t *testing.T) {
	m, seen := startRecordingMock(t)
	placeholder := strings.Replace(speedBenchRows, "Write a Go function that reverses a slice.",
		"FULL BENCHMARK DATA SHOULD BE FETCHED FROM THE SOURCE USING SPECDEC_BENCH", 1)
	malformed := strings.Replace(speedBenchRows, `"content": "Now add a timeout to it."`, `"content": ""`, 1)
	for _, tc := range []struct {
		name, file, kind string
		want             []string
	}{
		{"placeholder", placeholder, "speed_bench_qualitative",
			[]string{"speed.jsonl:1: messages[0].content: is SPEED-Bench's placeholder", "SPECDEC_BENCH"}},
		{"no row of the category", speedBenchRows, "speed_bench_writing",
			[]string{`SPEED-Bench category filter "writing" matched no rows`, `"coding" (2), "math" (1), "mixed" (1)`}},
		{"no row of the tier", speedBenchRows, "speed_bench_throughput_2k_low_entropy",
			[]string{`SPEED-Bench category filter "low_entropy" matched no rows`}},
		{"malformed row", malformed, "speed_bench_math",
			[]string{`speed.jsonl:3: messages[1].content: expected a non-blank string, got ""`}},
	} {
		dir := t.TempDir()
		writeFile(t, dir, "speed.jsonl", tc.file)
		inv := cli(t, dir, "profile", "-m", "mock-model", "-u", m.URL, "--ui", "none", "--no-store", "--osl", "4",
			"--custom-dataset-type", tc.kind, "--input-file", "speed.jsonl", "--request-count", "3")
		assert.Equal(t, ExitUsage, inv.code, "%s: %s", tc.name, inv.stderr)
		for _, w := range tc.want {
			assert.Contains(t, inv.stderr, w, tc.name)
		}
		assert.Contains(t, inv.stderr, "nothing was sent", tc.name)
	}
	assert.Empty(t, seen(), "nothing was sent")
}
