package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// rawSessions reads a raw export the way the viewer groups it: each
// session's conversation and number of requests, and the unique (role,
// content) pairs of every request's messages.
func rawSessions(t *testing.T, path string) (sessions map[string]string, turns map[string]int, unique int) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	sessions, turns = map[string]string{}, map[string]int{}
	seen := map[[2]string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r struct {
			Metadata struct {
				Conv string `json:"conversation_id"`
				Corr string `json:"x_correlation_id"`
			} `json:"metadata"`
			Payload struct {
				Messages []struct{ Role, Content string } `json:"messages"`
			} `json:"payload"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &r))
		sessions[r.Metadata.Corr] = r.Metadata.Conv
		turns[r.Metadata.Corr]++
		for _, m := range r.Payload.Messages {
			seen[[2]string{m.Role, m.Content}] = true
		}
	}
	return sessions, turns, len(seen)
}

// TestTurnMessagesFromProfile: a multi-turn run profiled with
// --export-level raw renders as a conversation per session, a turn per
// request, each unique message body written once; -n, --max-turns and -o
// bound and place it.
func TestTurnMessagesFromProfile(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--conversation-num", "3", "--conversation-turn-mean", "3",
		"--export-level", "raw", "--artifact-dir", "tm")...)
	require.Equal(t, ExitOK, inv.code, "stdout:\n%s\nstderr:\n%s", inv.stdout, inv.stderr)
	sessions, turns, unique := rawSessions(t, filepath.Join(dir, "tm", "profile_export_raw.jsonl"))
	require.Len(t, sessions, 3)

	inv = cli(t, dir, "analyze", "turn-messages", "--run-dirs", "tm")
	require.Equal(t, ExitOK, inv.code, "stdout:\n%s\nstderr:\n%s", inv.stdout, inv.stderr)
	assert.Contains(t, inv.stdout, "saved "+filepath.Join("tm", "turn_messages.html"))
	page := readText(t, filepath.Join(dir, "tm", "turn_messages.html"))
	assert.Equal(t, 3, strings.Count(page, `<details class="conv"`), "a conversation per session")
	requests, most := 0, 0
	for corr, conv := range sessions {
		assert.Contains(t, page, "session "+corr)
		assert.Contains(t, page, `title="`+conv+`"`)
		requests += turns[corr]
		most = max(most, turns[corr])
	}
	assert.Equal(t, requests, strings.Count(page, `<details class="turn"`), "a turn per request")
	assert.Equal(t, unique, strings.Count(page, "<pre>"), "each unique message written once")
	assert.NotContains(t, page, "not shown")

	inv = cli(t, dir, "analyze", "turn-messages", "tm", "-n", "1", "--max-turns", "1", "-o", "views/one.html")
	require.Equal(t, ExitOK, inv.code, "stdout:\n%s\nstderr:\n%s", inv.stdout, inv.stderr)
	page = readText(t, filepath.Join(dir, "views", "one.html"))
	assert.Equal(t, 1, strings.Count(page, `<details class="conv"`))
	assert.Equal(t, 1, strings.Count(page, `<details class="turn"`))
	assert.Contains(t, page, "2 more conversations not shown (-n 1)")
	if most > 1 {
		assert.Contains(t, page, "not shown (--max-turns 1)")
	}
}

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// TestTurnMessagesNoSecret: the raw export of a run whose server echoes
// every secret holds them redacted, and the viewer adds none back:
// neither the page nor the command's output holds one.
func TestTurnMessagesNoSecret(t *testing.T) {
	e := startEchoServer(t)
	dir := t.TempDir()
	args := append(quick(e.fullURL, "--api-key", leakAPIKey, "--request-count", "8", "--export-level", "raw",
		"--artifact-dir", "out"), leakHeaders()...)
	inv := cli(t, dir, args...)
	require.Equal(t, ExitOK, inv.code, "stdout:\n%s\nstderr:\n%s", inv.stdout, inv.stderr)
	inv = cli(t, dir, "analyze", "turn-messages", "--run-dirs", "out")
	require.Equal(t, ExitOK, inv.code, "stdout:\n%s\nstderr:\n%s", inv.stdout, inv.stderr)
	require.FileExists(t, filepath.Join(dir, "out", "turn_messages.html"))
	assertNoLeak(t, dir, inv.stdout, inv.stderr)
}

// turnMessagesRuns writes run directories for the refusals: good (a
// valid raw export), bad (line 2 malformed) and records (no raw export).
func turnMessagesRuns(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	good := `{"metadata":{"conversation_id":"c","x_correlation_id":"s","turn_index":0,"request_start_ns":1},` +
		`"payload":{"model":"m","messages":[{"role":"user","content":"hello"}]}}` + "\n"
	for name, files := range map[string]map[string]string{
		"good":    {"profile_export_raw.jsonl": good},
		"good2":   {"profile_export_raw.jsonl": good},
		"bad":     {"profile_export_raw.jsonl": good + `{"metadata": {"conversation_id": "c"` + "\n" + good},
		"records": {"profile_export.jsonl": "{}\n"},
	} {
		require.NoError(t, os.Mkdir(filepath.Join(dir, name), 0o755))
		for f, text := range files {
			require.NoError(t, os.WriteFile(filepath.Join(dir, name, f), []byte(text), 0o644))
		}
	}
	return dir
}

// TestTurnMessagesRefusals: every invalid input is refused with exit 2
// and a message saying what is wrong, and nothing is written.
func TestTurnMessagesRefusals(t *testing.T) {
	dir := turnMessagesRuns(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--run-dirs", "records"}, "aiperf profile --export-level raw"},
		{[]string{"--run-dirs", "missing"}, "run directory missing"},
		{nil, "give one or more run directories"},
		{[]string{"--empty-run-dirs"}, "give one or more run directories"},
		{[]string{"--run-dirs", "good", "good2", "-o", "x.html"}, "--out is only valid with a single run directory, got 2"},
		{[]string{"--run-dirs", "bad"}, filepath.Join("bad", "profile_export_raw.jsonl") + ":2: the line ends inside a JSON value"},
		{[]string{"--run-dirs", "good", "-n", "0"}, "--limit-conversations (-n) must be at least 1, got 0"},
		{[]string{"--run-dirs", "good", "--max-turns", "-1"}, "--max-turns must be at least 1, got -1"},
		{[]string{"--run-dirs", "good", "--content-cap", "0"}, "--content-cap must be at least 1 character, got 0"},
		{[]string{"--run-dirs", "good", "-o", "good"}, "--out good is a directory"},
	} {
		inv := cli(t, dir, append([]string{"analyze", "turn-messages"}, c.args...)...)
		assert.Equal(t, ExitUsage, inv.code, "%v: stdout:\n%s\nstderr:\n%s", c.args, inv.stdout, inv.stderr)
		assert.Contains(t, inv.stderr, c.want, "%v", c.args)
	}
	for _, run := range []string{"good", "good2", "bad", "records"} {
		assert.NoFileExists(t, filepath.Join(dir, run, "turn_messages.html"))
	}
	assert.NoFileExists(t, filepath.Join(dir, "x.html"))
}

// TestTurnMessagesSeveralRuns: several runs each get their viewer; one
// that cannot be read is named and skipped, the others still written,
// and the exit is 2.
func TestTurnMessagesSeveralRuns(t *testing.T) {
	dir := turnMessagesRuns(t)
	inv := cli(t, dir, "analyze", "turn-messages", "--run-dirs", "good", "bad", "good2")
	assert.Equal(t, ExitUsage, inv.code, "stdout:\n%s\nstderr:\n%s", inv.stdout, inv.stderr)
	assert.Contains(t, inv.stderr, "skip bad: ")
	assert.Contains(t, inv.stderr, "1 of 3 runs not rendered")
	assert.FileExists(t, filepath.Join(dir, "good", "turn_messages.html"))
	assert.FileExists(t, filepath.Join(dir, "good2", "turn_messages.html"))
	assert.NoFileExists(t, filepath.Join(dir, "bad", "turn_messages.html"))
	assert.Equal(t, 2, strings.Count(inv.stdout, "saved "))
}

// TestTurnMessagesInterrupted: Ctrl-C stops the reading: exit 130, no
// page and no partial file left.
func TestTurnMessagesInterrupted(t *testing.T) {
	dir := turnMessagesRuns(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	inv := cliCtx(ctx, t, dir, "analyze", "turn-messages", "--run-dirs", "good")
	assert.Equal(t, ExitInterrupted, inv.code, "stdout:\n%s\nstderr:\n%s", inv.stdout, inv.stderr)
	entries, err := os.ReadDir(filepath.Join(dir, "good"))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "the export alone")
}

// TestTurnMessagesDAG: a dag_jsonl run's conversations show roots first,
// each branch labelled with its depth and its parent's conversation,
// resolved from parent_correlation_id.
func TestTurnMessagesDAG(t *testing.T) {
	reqs, _, dir := runDAG(t, dagFile)
	inv := cli(t, dir, "analyze", "turn-messages", "--run-dirs", "out")
	require.Equal(t, ExitOK, inv.code, "stdout:\n%s\nstderr:\n%s", inv.stdout, inv.stderr)
	page := readText(t, filepath.Join(dir, "out", "turn_messages.html"))

	convOf := map[string]string{}
	for conv, rs := range reqs {
		for _, r := range rs {
			convOf[r.Metadata.Correlation] = conv
		}
	}
	lastRoot, firstBranch, branches := -1, len(page), 0
	for conv, rs := range reqs {
		at := strings.Index(page, `<summary><span title="`+conv+`">`)
		require.GreaterOrEqual(t, at, 0, "conversation %s shown", conv)
		depth := *rs[0].Metadata.Depth
		if depth == 0 {
			lastRoot = max(lastRoot, at)
			continue
		}
		branches++
		firstBranch = min(firstBranch, at)
		want := fmt.Sprintf("subagent (depth %d)", depth)
		if p := convOf[rs[0].Metadata.Parent]; p != "" {
			want += " of " + p
		}
		assert.Contains(t, page[at:], want, "branch %s", conv)
	}
	require.Positive(t, branches)
	assert.Less(t, lastRoot, firstBranch, "roots first")
}
