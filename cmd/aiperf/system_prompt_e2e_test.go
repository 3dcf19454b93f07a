package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// --system-prompt-file: its text, as it is (trailing newline kept), is the
// system message of every synthetic request, and counts in the ISL on top
// of --isl, as AIPerf's "tokens are additive".
func TestSystemPromptFileSynthetic(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	const text = "You are a terse assistant.\nAnswer in one line.\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sys.txt"), []byte(text), 0o644))
	inv := cli(t, dir, "profile", "-m", "m", "--url", m.URL, "--isl", "40", "--osl", "4", "--num-dataset-entries", "3",
		"--request-count", "5", "--concurrency", "1", "--system-prompt-file", "sys.txt", "--export-level", "raw",
		"--artifact-dir", "out", "--no-store")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	sent := sentMessages(t, filepath.Join(dir, "out", "profile_export_raw.jsonl"))
	require.Len(t, sent, 5)
	for i, msgs := range sent {
		require.Len(t, msgs, 2, "request %d", i)
		assert.Equal(t, "system", msgs[0].Role)
		assert.Equal(t, text, msgs[0].Content, "the file's text as it is")
		assert.Equal(t, "user", msgs[1].Role)
	}
	var inputs struct {
		Data []struct {
			Payloads []struct {
				Messages []struct{ Role, Content string }
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "out", "inputs.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &inputs))
	require.Len(t, inputs.Data, 3)
	for _, conv := range inputs.Data {
		require.Len(t, conv.Payloads, 1)
		require.Len(t, conv.Payloads[0].Messages, 2)
		assert.Equal(t, text, conv.Payloads[0].Messages[0].Content, "inputs.json shows the system prompt as it is sent")
	}
	lens := map[float64]bool{}
	for _, l := range jsonlMetrics(t, filepath.Join(dir, "out", "profile_export.jsonl")) {
		lens[l["input_sequence_length"]] = true
	}
	require.Len(t, lens, 1, "every prompt is 40 tokens, and the system prompt the same")
	for n := range lens {
		assert.Greater(t, n, 40.0, "the system prompt's tokens are counted on top of --isl")
	}
}

// A multi_turn file's own system message follows --system-prompt in one
// message, joined by a blank line; a messages record's leading system
// message gets it the same way, and a record without one gets it as a
// message of its own.
func TestSystemPromptMergesWithTheDatasets(t *testing.T) {
	for name, tc := range map[string]struct {
		file, kind string
		want       []string // each request's first message, in order sent
	}{
		"multi_turn": {
			file: `{"session_id": "a", "turns": [{"role": "system", "text": "Be brief."}, {"text": "hi"}, {"text": "bye"}]}` + "\n",
			kind: "multi_turn",
			want: []string{"PRE\n\nBe brief.", "PRE\n\nBe brief."},
		},
		"mooncake messages": {
			file: `{"session_id": "s", "messages": [{"role": "system", "content": "You are helpful."}, {"role": "user", "content": "Hello"}], "output_length": 4}` + "\n" +
				`{"session_id": "t", "messages": [{"role": "user", "content": "Alone"}], "output_length": 4}` + "\n",
			kind: "mooncake_trace",
			want: []string{"PRE\n\nYou are helpful.", "PRE"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			m := startMock(t, mock.Config{Fast: true})
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "data.jsonl"), []byte(tc.file), 0o644))
			inv := cli(t, dir, "profile", "-m", "m", "--url", m.URL, "--input-file", "data.jsonl", "--custom-dataset-type", tc.kind,
				"--no-fixed-schedule", "--concurrency", "1", "--request-count", "2", "--system-prompt", "PRE",
				"--export-level", "raw", "--artifact-dir", "out", "--no-store")
			require.Equal(t, ExitOK, inv.code, inv.stderr)
			sent := sentMessages(t, filepath.Join(dir, "out", "profile_export_raw.jsonl"))
			require.Len(t, sent, len(tc.want))
			for i, msgs := range sent {
				require.NotEmpty(t, msgs)
				assert.Equal(t, "system", msgs[0].Role, "request %d", i)
				assert.Equal(t, tc.want[i], msgs[0].Content, "request %d", i)
				for _, later := range msgs[1:] {
					assert.NotEqual(t, "system", later.Role, "request %d: one system message", i)
				}
			}
		})
	}
}

// Every misuse is refused before any request is sent (exit 2), naming the
// option and what to do.
func TestSystemPromptRefusals(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "blank.txt"), []byte(" \n\t\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "latin1.txt"), []byte("caf\xe9"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "payload.jsonl"),
		[]byte(`{"session_id": "q", "messages": [{"role": "user", "content": "fine"}]}`+"\n"+
			`{"session_id": "p", "payload": {"model": "m", "messages": [{"role": "user", "content": "x"}]}}`+"\n"), 0o644))
	base := []string{"profile", "-m", "m", "--url", m.URL, "--request-count", "2", "--no-store"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--system-prompt", "a", "--system-prompt-file", "blank.txt"}, "--system-prompt and --system-prompt-file cannot both be given"},
		{[]string{"--system-prompt", "  "}, "--system-prompt is empty or whitespace only"},
		{[]string{"--system-prompt", "a", "--shared-system-prompt-length", "20"}, "--system-prompt cannot be used with --shared-system-prompt-length"},
		{[]string{"--system-prompt-file", "x.txt", "--prompt-prefix-pool-size", "2", "--prompt-prefix-length", "8"}, "--system-prompt-file cannot be used with --prompt-prefix-pool-size"},
		{[]string{"--system-prompt", "a", "--endpoint-type", "completions"}, "--system-prompt needs an endpoint type whose body carries messages"},
		{[]string{"--system-prompt-file", "missing.txt"}, "--system-prompt-file"},
		{[]string{"--system-prompt-file", "blank.txt"}, "--system-prompt-file blank.txt: empty or whitespace only"},
		{[]string{"--system-prompt-file", "latin1.txt"}, "--system-prompt-file latin1.txt: not UTF-8 text"},
		{[]string{"--system-prompt", "a", "--input-file", "payload.jsonl", "--custom-dataset-type", "mooncake_trace", "--no-fixed-schedule"},
			"--system-prompt cannot be added to them"},
	} {
		inv := cli(t, dir, append(append([]string{}, base...), tc.args...)...)
		assert.Equal(t, ExitUsage, inv.code, "%v: %s", tc.args, inv.stderr)
		assert.Contains(t, inv.stderr, tc.want, "%v", tc.args)
	}
	assert.Zero(t, m.control().InferenceRequests, "nothing was sent")
}
