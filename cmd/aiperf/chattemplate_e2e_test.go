package main

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// repoRoot is the repository's directory (the tests change directory).
var repoRoot = func() string {
	wd, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	return filepath.Join(wd, "..", "..")
}()

// qwenDir lays out a Qwen model's tokenizer directory: Qwen3's tokenizer.json
// and, as its tokenizer_config.json, config (Qwen 2.5's, with its ChatML
// template, when empty).
func qwenDir(t *testing.T, config string) string {
	t.Helper()
	dir := t.TempDir()
	f, err := os.Open(filepath.Join(repoRoot, "internal/tokenizer/testdata/qwen3.tokenizer.json.gz"))
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	data, err := io.ReadAll(zr)
	require.NoError(t, err)
	writeFile(t, dir, "tokenizer.json", string(data))
	if config == "" {
		b, err := os.ReadFile(filepath.Join(repoRoot, "internal/chattemplate/testdata/qwen2_5/tokenizer_config.json"))
		require.NoError(t, err)
		config = string(b)
	}
	writeFile(t, dir, "tokenizer_config.json", config)
	return dir
}

// tinyTokenizerDir is a tokenizer directory with a small tokenizer.json
// (loaded in milliseconds, where Qwen's takes seconds under -race) and
// config as its tokenizer_config.json: for what does not depend on the
// tokenizer.
func tinyTokenizerDir(t *testing.T, config string) string {
	t.Helper()
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join(repoRoot, "internal/tokenizer/testdata/gpt2-tiny.tokenizer.json"))
	require.NoError(t, err)
	writeFile(t, dir, "tokenizer.json", string(b))
	writeFile(t, dir, "tokenizer_config.json", config)
	return dir
}

// sentChat is each request's conversation as inputs.json recorded it, by
// conversation id and turn.
func sentChat(t *testing.T, path string) map[string][][]struct{ Role, Content string } {
	t.Helper()
	var doc struct {
		Data []struct {
			SessionID string `json:"session_id"`
			Payloads  []struct {
				Messages []struct{ Role, Content string } `json:"messages"`
			} `json:"payloads"`
		} `json:"data"`
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &doc))
	out := map[string][][]struct{ Role, Content string }{}
	for _, d := range doc.Data {
		for _, p := range d.Payloads {
			out[d.SessionID] = append(out[d.SessionID], p.Messages)
		}
	}
	return out
}

// TestApplyChatTemplate: with --apply-chat-template each chat request's ISL
// is the count of its conversation as Qwen's ChatML template renders it,
// checked against a rendering built by hand here (not by the template
// engine) and counted with the same tokenizer; synthetic prompts are sized
// so that the rendered conversation has --isl tokens; the console says the
// template counted.
func TestApplyChatTemplate(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	tokDir := qwenDir(t, "")
	tok, err := tokenizer.Load(tokDir)
	require.NoError(t, err)
	for _, system := range []bool{false, true} {
		dir := t.TempDir()
		args := []string{"profile", "-m", "Qwen/Qwen2.5-7B-Instruct", "-u", m.URL, "--endpoint-type", "chat", "--streaming", "--ui", "simple",
			"--isl", "64", "--osl", "4", "--request-count", "8", "--num-dataset-entries", "4",
			"--tokenizer", tokDir, "--apply-chat-template", "--artifact-dir", "out", "--no-store"}
		if system {
			args = append(args, "--shared-system-prompt-length", "10", "--isl-stddev", "6")
		}
		inv := cli(t, dir, args...)
		require.Equal(t, ExitOK, inv.code, inv.stderr)
		assert.Contains(t, lineContaining(t, inv.stderr, "tokens counted with"),
			"chat ISL through its chat template ("+filepath.Join(tokDir, "tokenizer_config.json")+")")

		sent := sentChat(t, filepath.Join(dir, "out", "inputs.json"))
		f, err := os.Open(filepath.Join(dir, "out", "profile_export.jsonl"))
		require.NoError(t, err)
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		lines := 0
		for sc.Scan() {
			var line struct {
				Metadata struct {
					ConversationID string `json:"conversation_id"`
					TurnIndex      int    `json:"turn_index"`
				} `json:"metadata"`
				Metrics struct {
					ISL struct{ Value int } `json:"input_sequence_length"`
				} `json:"metrics"`
			}
			require.NoError(t, json.Unmarshal(sc.Bytes(), &line))
			msgs := sent[line.Metadata.ConversationID][line.Metadata.TurnIndex]
			require.NotEmpty(t, msgs)
			// Qwen 2.5's ChatML: a default system prompt unless one is sent.
			var b strings.Builder
			bare := 0
			if msgs[0].Role != "system" {
				b.WriteString("<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n")
			}
			for _, msg := range msgs {
				b.WriteString("<|im_start|>" + msg.Role + "\n" + msg.Content + "<|im_end|>\n")
				bare += tok.Count(msg.Content)
			}
			b.WriteString("<|im_start|>assistant\n")
			assert.Equal(t, tok.Count(b.String()), line.Metrics.ISL.Value, "%q", b.String())
			assert.Greater(t, line.Metrics.ISL.Value, bare+10, "the template's tokens are counted")
			if !system {
				// The synthetic prompt was shortened by the template's
				// overhead, so the model reads --isl tokens, give or take
				// one where the prompt's first token merges with the
				// template's "\n" before it (as in AIPerf).
				assert.InDelta(t, 64, line.Metrics.ISL.Value, 1)
			}
			lines++
		}
		require.NoError(t, sc.Err())
		f.Close()
		assert.Equal(t, 8, lines)
	}
}

// Without a chat template in tokenizer_config.json the ISL is the bare
// count, as AIPerf falls back, and the console says so; a template that
// does not render is refused before any traffic, naming the tokenizer.
// (Which tokenizer does not matter here: a small one.)
func TestApplyChatTemplateRefusals(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	args := func(tokDir string) []string {
		return []string{"profile", "-m", "Qwen/Qwen2.5-7B-Instruct", "-u", m.URL, "--endpoint-type", "chat", "--ui", "simple",
			"--isl", "16", "--osl", "4", "--request-count", "2", "--tokenizer", tokDir, "--apply-chat-template", "--no-store"}
	}
	base := tinyTokenizerDir(t, `{"eos_token": "<|endoftext|>"}`)
	inv := cli(t, "", args(base)...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, lineContaining(t, inv.stderr, "warning: --apply-chat-template"), "no chat_template")
	assert.Contains(t, inv.stderr, "ISL is the bare prompt's count")

	inv = cli(t, "", append(args(base), "--endpoint-type", "completions")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, "--endpoint-type completions sends no chat messages")

	sent := m.control().InferenceRequests
	broken := tinyTokenizerDir(t, `{"chat_template": "{% for m in messages %}{{ raise_exception('no ' + m.role + ' here') }}{% endfor %}"}`)
	inv = cli(t, "", args(broken)...)
	assert.Equal(t, ExitUsage, inv.code)
	assert.Contains(t, inv.stderr, "--apply-chat-template: the chat template of tokenizer "+filepath.Join(broken, "tokenizer.json"))
	assert.Contains(t, inv.stderr, "no user here")
	assert.Contains(t, inv.stderr, "nothing was sent")

	syntax := tinyTokenizerDir(t, `{"chat_template": "{% for m in messages %}\n{{ m.content }\n{% endfor %}"}`)
	inv = cli(t, "", args(syntax)...)
	assert.Equal(t, ExitUsage, inv.code)
	assert.Contains(t, inv.stderr, "line 2")
	assert.Equal(t, sent, m.control().InferenceRequests, "nothing was sent")
}
