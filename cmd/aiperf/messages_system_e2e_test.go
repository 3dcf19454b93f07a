package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// --endpoint-type messages with a messages dataset and --system-prompt: the
// Anthropic Messages API takes only user and assistant messages (the mock
// refuses others, as Anthropic does), so the leading system messages, the
// record's own with --system-prompt merged before it, go in the body's
// top-level "system" and every request succeeds.
func TestMessagesEndpointLiftsSystem(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	file := `{"session_id": "s", "messages": [{"role": "system", "content": "You are helpful."}, {"role": "user", "content": "Hello"}], "output_length": 4}` + "\n" +
		`{"session_id": "t", "messages": [{"role": "user", "content": "Alone"}], "output_length": 4}` + "\n" +
		`{"session_id": "u", "messages": [{"role": "system", "content": "A"}, {"role": "system", "content": "B"}, {"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Yo"}, {"role": "user", "content": "Again"}], "output_length": 4}` + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "data.jsonl"), []byte(file), 0o644))
	inv := cli(t, dir, "profile", "-m", "m", "--url", m.URL, "--endpoint-type", "messages", "--input-file", "data.jsonl",
		"--custom-dataset-type", "mooncake_trace", "--no-fixed-schedule", "--concurrency", "1", "--request-count", "3",
		"--system-prompt", "PRE", "--export-level", "raw", "--artifact-dir", "out", "--no-store")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	b, err := os.ReadFile(filepath.Join(dir, "out", "profile_export_raw.jsonl"))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	want := []struct {
		system string
		roles  []string
	}{
		{"PRE\n\nYou are helpful.", []string{"user"}},
		{"PRE", []string{"user"}},
		{"PRE\n\nA\n\nB", []string{"user", "assistant", "user"}},
	}
	require.Len(t, lines, len(want))
	for i, l := range lines {
		var rec struct {
			Status  int             `json:"status"`
			Error   json.RawMessage `json:"error"`
			Payload struct {
				System   *string                          `json:"system"`
				Messages []struct{ Role, Content string } `json:"messages"`
			} `json:"payload"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &rec), l)
		assert.Equal(t, 200, rec.Status, "request %d succeeded: %s", i, l)
		assert.Empty(t, rec.Error, "request %d", i)
		require.NotNil(t, rec.Payload.System, "request %d: a top-level system: %s", i, l)
		assert.Equal(t, want[i].system, *rec.Payload.System, "request %d", i)
		var roles []string
		for _, msg := range rec.Payload.Messages {
			roles = append(roles, msg.Role)
		}
		assert.Equal(t, want[i].roles, roles, "request %d: no system message in messages", i)
	}
	assert.NotContains(t, inv.stdout+inv.stderr, "Errors:", "no request failed")
}

// With --apply-chat-template, the ISL of a messages or responses request
// counts its system prompt (the body's "system" or "instructions") as the
// chat request's does: the same prompts give the same ISL.
func TestChatTemplateCountsTopLevelSystem(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	tokDir := qwenDir(t, "")
	isl := map[string][]float64{}
	for _, typ := range []string{"chat", "messages", "responses"} {
		dir := t.TempDir()
		inv := cli(t, dir, "profile", "-m", "m", "-u", m.URL, "--endpoint-type", typ, "--isl", "20", "--osl", "4",
			"--request-count", "2", "--concurrency", "1", "--tokenizer", tokDir, "--apply-chat-template",
			"--system-prompt", strings.Repeat("You are a terse assistant. ", 10), "--artifact-dir", "out", "--no-store")
		require.Equal(t, ExitOK, inv.code, "%s: %s", typ, inv.stderr)
		for _, l := range jsonlMetrics(t, filepath.Join(dir, "out", "profile_export.jsonl")) {
			isl[typ] = append(isl[typ], l["input_sequence_length"])
		}
	}
	require.Len(t, isl["chat"], 2)
	assert.Greater(t, isl["chat"][0], 60.0, "the system prompt's tokens are in the chat ISL")
	assert.Equal(t, isl["chat"], isl["messages"], "messages: the top-level system is counted")
	assert.Equal(t, isl["chat"], isl["responses"], "responses: the instructions are counted")
}
