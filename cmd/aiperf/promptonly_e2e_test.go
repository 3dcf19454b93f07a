package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// TestConversationsNeedMessages: a file's conversation that re-sends its
// history, or opens with a system message, is a messages array; an
// endpoint type that sends a prompt is refused before any traffic (it used
// to send an empty prompt), and a trace's request of messages fails rather
// than succeed on nothing.
func TestConversationsNeedMessages(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	write := func(name, text string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	write("mt.jsonl", `{"session_id": "a", "turns": [{"text": "hello there"}, {"text": "and again"}]}`+"\n")
	write("sys.jsonl", `{"session_id": "b", "turns": [{"text": "be brief", "role": "system"}, {"text": "hi"}]}`+"\n")
	for _, file := range []string{"mt.jsonl", "sys.jsonl"} {
		for _, et := range []string{"completions", "embeddings"} {
			inv := cli(t, dir, "profile", "-m", "m", "--url", m.URL, "--endpoint-type", et, "--input-file", file,
				"--custom-dataset-type", "multi_turn", "--request-count", "2", "--ui", "none", "--no-store")
			assert.Equal(t, ExitUsage, inv.code, "%s on %s: %s", file, et, inv.stderr)
			assert.Contains(t, inv.stderr, "--endpoint-type "+et+" sends a prompt: use chat, responses or messages (nothing was sent)")
		}
	}
	assert.Zero(t, m.control().InferenceRequests)

	write("trace.jsonl", `{"session_id": "s", "input_length": 20, "output_length": 4}`+"\n"+
		`{"session_id": "s", "input_length": 30, "output_length": 4, "delay": 10}`+"\n")
	inv := cli(t, dir, "profile", "-m", "m", "--url", m.URL, "--endpoint-type", "embeddings", "--input-file", "trace.jsonl",
		"--custom-dataset-type", "mooncake_trace", "--ui", "none", "--no-store", "--artifact-dir", "trace")
	assert.Equal(t, ExitFailure, inv.code)
	assert.Contains(t, inv.stderr, "every profiling request failed: 2 of 2 (e.g. RequestError 0: build request body: "+
		"--endpoint-type embeddings sends a prompt, and this request is a conversation's messages")
	assert.Equal(t, 2.0, metricAvg(t, readJSON(t, filepath.Join(dir, "trace", "profile_export_aiperf.json")), "error_request_count"))
	assert.Zero(t, m.control().InferenceRequests, "nothing sent as an empty input")
}

// TestLoneTurnKeepsItsRole: a conversation of one turn whose role is not
// user is sent under that role on a messages endpoint, as AIPerf sends it
// (it was sent as a user message).
func TestLoneTurnKeepsItsRole(t *testing.T) {
	var mu sync.Mutex
	var roles []string
	m := startMockBehind(t, mock.Config{Fast: true}, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			var sent struct{ Messages []struct{ Role string } }
			if json.Unmarshal(body, &sent) == nil {
				mu.Lock()
				for _, msg := range sent.Messages {
					roles = append(roles, msg.Role)
				}
				mu.Unlock()
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			h.ServeHTTP(w, r)
		})
	})
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "st.jsonl"), []byte(`{"text": "hello", "role": "assistant"}`+"\n"), 0o644))
	inv := cli(t, dir, "profile", "-m", "m", "--url", m.URL, "--endpoint-type", "chat", "--input-file", "st.jsonl",
		"--custom-dataset-type", "single_turn", "--request-count", "1", "--ui", "none", "--no-store")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"assistant"}, roles)
}
