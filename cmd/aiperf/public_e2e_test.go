package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// Public datasets read from a local file (issue 24, requirement 2): what
// the mock receives for each form the file comes in.

// lastUser is the text of a chat request's last user message.
func lastUser(t *testing.T, r sentRequest) string {
	t.Helper()
	msgs, _ := r.body["messages"].([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		m, _ := msgs[i].(map[string]any)
		if m["role"] == "user" {
			s, ok := m["content"].(string)
			require.True(t, ok, "%s", r.raw)
			return s
		}
	}
	t.Fatalf("no user message in %s", r.raw)
	return ""
}

// profilePublic runs a profile of n requests of public dataset name read
// from path against a capturing mock, and returns what it received.
func profilePublic(t *testing.T, name, path string, n string, extra ...string) []sentRequest {
	t.Helper()
	var c captured
	m := startMockBehind(t, mock.Config{}, c.wrap)
	args := append([]string{"profile", "-m", "mock-model", "-u", m.URL, "--streaming", "--ui", "none", "--no-store",
		"--public-dataset", name, "--input-file", path, "--request-count", n}, extra...)
	inv := cli(t, "", args...)
	require.Equal(t, ExitOK, inv.code, "%s %s: %s", name, path, inv.stderr)
	return c.all()
}

type shareGPTMessage struct {
	From  string `parquet:"from" json:"from"`
	Value string `parquet:"value" json:"value"`
}

type shareGPTParquetRow struct {
	ID            string            `parquet:"id" json:"id"`
	Conversations []shareGPTMessage `parquet:"conversations,list" json:"conversations"`
}

// TestPublicShareGPTForms: the same ShareGPT entries as a JSON array, JSON
// Lines and Parquet send the same requests: each human turn's text, with
// the recorded reply's length as max tokens, a conversation's turns in
// order.
func TestPublicShareGPTForms(t *testing.T) {
	dir := t.TempDir()
	rows := []shareGPTParquetRow{
		{ID: "a", Conversations: []shareGPTMessage{
			{"human", "How does a prism split white light into colours?"},
			{"gpt", "Each colour bends by a different amount as it passes through the glass."},
			{"human", "Which colour bends the most when it does?"},
			{"gpt", "Violet bends the most and red bends the least of them all."}}},
		{ID: "b", Conversations: []shareGPTMessage{
			{"human", "Why does a rainbow appear after the rain?"},
			{"gpt", "Sunlight is refracted and reflected inside the raindrops left in the air."}}},
	}
	jsonl := filepath.Join(dir, "sharegpt.jsonl")
	var lines []byte
	for _, r := range rows {
		lines = append(lines, mustJSON(t, map[string]any{"id": r.ID, "conversations": r.Conversations})...)
		lines = append(lines, '\n')
	}
	require.NoError(t, os.WriteFile(jsonl, lines, 0o644))
	array := filepath.Join(dir, "sharegpt.json")
	require.NoError(t, os.WriteFile(array, mustJSON(t, rows), 0o644))
	pq := filepath.Join(dir, "sharegpt.parquet")
	require.NoError(t, parquet.WriteFile(pq, rows))

	count := countTokens()
	want := []struct {
		prompt string
		max    int
	}{
		{rows[0].Conversations[0].Value, count(rows[0].Conversations[1].Value)},
		{rows[0].Conversations[2].Value, count(rows[0].Conversations[3].Value)},
		{rows[1].Conversations[0].Value, count(rows[1].Conversations[1].Value)},
	}
	for _, path := range []string{array, jsonl, pq} {
		reqs := profilePublic(t, "sharegpt", path, "3")
		require.Len(t, reqs, 3, path)
		for i, r := range reqs {
			assert.Equal(t, want[i].prompt, lastUser(t, r), "%s request %d", path, i)
			assert.EqualValues(t, want[i].max, r.body["max_completion_tokens"], "%s request %d: %s", path, i, r.raw)
		}
	}
}

// TestPublicPromptDatasets: aimo sends each record's problem, and
// instruct_coder its code and instruction in vLLM's template, as one
// request each, with --osl as max tokens; blank records are skipped.
func TestPublicPromptDatasets(t *testing.T) {
	dir := t.TempDir()
	aimo := filepath.Join(dir, "aimo.jsonl")
	require.NoError(t, os.WriteFile(aimo, []byte(`{"problem": "What is 17 times 23?", "solution": "391"}
{"problem": "", "solution": "blank: skipped"}
{"problem": "How many primes are below 30?", "solution": "10"}
`), 0o644))
	reqs := profilePublic(t, "aimo", aimo, "4", "--osl", "12")
	require.Len(t, reqs, 4)
	for i, want := range []string{"What is 17 times 23?", "How many primes are below 30?", "What is 17 times 23?", "How many primes are below 30?"} {
		assert.Equal(t, want, lastUser(t, reqs[i]), "request %d", i)
		assert.EqualValues(t, 12, reqs[i].body["max_completion_tokens"], "request %d", i)
	}

	type coderRow struct {
		Instruction string `parquet:"instruction"`
		Input       string `parquet:"input"`
	}
	coder := filepath.Join(dir, "coder.parquet")
	require.NoError(t, parquet.WriteFile(coder, []coderRow{{"Use a list comprehension.", "out = []\nfor x in xs:\n    out.append(x * 2)"}}))
	reqs = profilePublic(t, "instruct_coder", coder, "2")
	require.Len(t, reqs, 2)
	assert.Equal(t, "out = []\nfor x in xs:\n    out.append(x * 2)\n\nUse a list comprehension. Just output the code, do not include any explanation.", lastUser(t, reqs[0]))
	assert.NotContains(t, reqs[0].body, "max_completion_tokens", "no --osl, no max tokens")
}

// TestPublicDatasetRefusedBeforeTraffic: a malformed record stops the run
// before any request, with exit 2 and the record's place, field and
// expectation.
func TestPublicDatasetRefusedBeforeTraffic(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "aimo.jsonl")
	require.NoError(t, os.WriteFile(bad, []byte("{\"problem\": \"fine\"}\n{\"problem\": 7}\n"), 0o644))
	m := startMock(t, mock.Config{})
	inv := cli(t, "", "profile", "-m", "mock-model", "-u", m.URL, "--ui", "none", "--no-store",
		"--public-dataset", "aimo", "--input-file", bad, "--request-count", "2")
	assert.Equal(t, ExitUsage, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, bad+":2: problem: expected a string, got a number")
	assert.Zero(t, m.control().InferenceRequests, "nothing was sent")
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// TestPromptCorpusRandom: --prompt-corpus random sends vllm bench serve's
// random prompts, each re-tokenizing to exactly the ISL asked for (what
// the mock counts too); coding sends code and tool calls, as exact; a corpus
// not built here is refused before traffic.
func TestPromptCorpusRandom(t *testing.T) {
	var c captured
	m := startMockBehind(t, mock.Config{}, c.wrap)
	dir := t.TempDir()
	inv := cli(t, dir, "profile", "-m", "mock-model", "-u", m.URL, "--ui", "none", "--no-store", "--artifact-dir", "out",
		"--prompt-corpus", "random", "--isl", "300", "--osl", "4", "--request-count", "6", "--num-dataset-entries", "6",
		"--random-seed", "5")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	reqs := c.all()
	require.Len(t, reqs, 6)
	count := countTokens()
	prose := 0
	for i, r := range reqs {
		text := lastUser(t, r)
		assert.Equal(t, 300, count(text), "request %d re-tokenizes to the ISL: %q", i, text)
		if strings.Count(text, " the ") > 3 {
			prose++
		}
	}
	assert.Less(t, prose, 2, "vocabulary windows, not the prose corpus")
	lines := jsonlMetrics(t, filepath.Join(dir, "out", "profile_export.jsonl"))
	require.Len(t, lines, 6)
	for _, l := range lines {
		assert.Equal(t, 300.0, l["input_sequence_length"])
		assert.Equal(t, 300.0, l["usage_prompt_tokens"], "the mock counted the same")
	}

	// coding: code and tool calls, each prompt exactly its ISL too
	inv = cli(t, "", "profile", "-m", "mock-model", "-u", m.URL, "--ui", "none", "--no-store", "--prompt-corpus", "coding",
		"--isl", "200", "--osl", "4", "--request-count", "3", "--num-dataset-entries", "3")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	reqs = c.all()
	require.Len(t, reqs, 9)
	for _, r := range reqs[6:] {
		text := lastUser(t, r)
		assert.Equal(t, 200, count(text), "re-tokenizes to the ISL: %q", text)
		assert.True(t, strings.ContainsAny(text, "(){}[]=:"), "code: %q", text)
	}

	inv = cli(t, "", "profile", "-m", "mock-model", "-u", m.URL, "--ui", "none", "--no-store", "--prompt-corpus", "shakespeare")
	assert.Equal(t, ExitUsage, inv.code)
	assert.Contains(t, inv.stderr, "--prompt-corpus")
	assert.Len(t, c.all(), 9, "nothing more was sent")
}
