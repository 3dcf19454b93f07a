package main

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// TestExtraCannotReplaceThePrompt: a row's extra holding a body key that
// carries the prompt (here chat's "messages") would send something other
// than the row's text, or nothing (an empty messages list: every request
// a 400), while the ISL counted the row's text. Such a file exits 2 before
// any traffic, naming the file, line and field.
func TestExtraCannotReplaceThePrompt(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	for name, c := range map[string]struct{ rows, field string }{
		"single_turn hijack": {`{"text":"hi","extra":{"messages":[{"role":"user","content":"HIJACK"}]}}`, "extra.messages"},
		"mooncake empty":     {`{"timestamp":0,"input_length":5,"output_length":2,"extra":{"messages":[]}}`, "extra.messages"},
		"multi_turn prompt": {`{"session_id":"s","turns":[{"text":"a"}]}` + "\n" +
			`{"session_id":"t","turns":[{"text":"a"},{"text":"b","extra":{"prompt":"x"}}]}`, "turns[1].extra.prompt"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := writeFile(t, dir, "rows.jsonl", c.rows+"\n")
			before := count(m.kinds(), string(mock.EventRequestStart))
			r := cli(t, dir, "profile", "-m", "mock-model", "-u", m.URL, "--endpoint-type", "chat", "--input-file", path,
				"--request-count", "1", "--ui", "none", "--artifact-dir", filepath.Join(dir, "out"), "--no-store")
			require.Equal(t, 2, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			line := 1
			if name == "multi_turn prompt" {
				line = 2
			}
			assert.Contains(t, r.stderr, fmt.Sprintf("%s:%d: %s:", path, line, c.field))
			assert.Contains(t, r.stderr, "would replace the prompt the row sends")
			assert.Equal(t, before, count(m.kinds(), string(mock.EventRequestStart)), "a request was sent")
		})
	}
}

// TestExtraStreamStillAllowed: extra's other keys, "stream" among them
// (the client reads an SSE reply by its Content-Type), still go through.
func TestExtraStreamStillAllowed(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	path := writeFile(t, dir, "rows.jsonl", `{"text":"hi","extra":{"stream":true,"temperature":0.5}}`+"\n")
	r := cli(t, dir, "profile", "-m", "mock-model", "-u", m.URL, "--endpoint-type", "chat", "--input-file", path,
		"--request-count", "1", "--ui", "none", "--artifact-dir", filepath.Join(dir, "out"), "--no-store")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
}
