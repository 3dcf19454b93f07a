package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// dagFile is a dag_jsonl tree: a root that spawns a sub-agent at turn 0
// (joined at turn 2), warms up another before its turn 0, and forks two
// continuations at its last turn.
const dagFile = `{"session_id":"root","pre_session_spawns":["pre"],"turns":[{"messages":[{"role":"system","content":"You are careful."},{"role":"user","content":"Summarize the document."}],"max_tokens":8,"spawns":[{"children":["agent"],"join_at":2}]},{"messages":[{"role":"user","content":"Continue."}],"max_tokens":8},{"messages":[{"role":"user","content":"Wrap up."}],"max_tokens":8,"forks":["branch-a","branch-b"]}]}
{"session_id":"agent","turns":[{"messages":[{"role":"system","content":"You are a sub-agent."},{"role":"user","content":"Search the code."}],"max_tokens":8},{"messages":[{"role":"user","content":"Report."}],"max_tokens":8}]}
{"session_id":"pre","turns":[{"messages":[{"role":"user","content":"Warm the cache."}],"max_tokens":4}]}
{"session_id":"branch-a","turns":[{"messages":[{"role":"user","content":"Expand."}],"max_tokens":8},{"messages":[{"role":"user","content":"Tighten."}],"max_tokens":8}]}
{"session_id":"branch-b","turns":[{"messages":[{"role":"user","content":"Critique."}],"max_tokens":8,"model":"critic","extra":{"temperature":0.5}}]}
`

// dagRequest is one request of a DAG run, from the raw export.
type dagRequest struct {
	Metadata struct {
		Conversation string `json:"conversation_id"`
		Turn         int    `json:"turn_index"`
		Correlation  string `json:"x_correlation_id"`
		Parent       string `json:"parent_correlation_id"`
		Depth        *int   `json:"agent_depth"`
		Start        int64  `json:"request_start_ns"`
		End          int64  `json:"request_end_ns"`
	} `json:"metadata"`
	Status  int `json:"status"`
	Payload struct {
		Model       string       `json:"model"`
		Temperature *float64     `json:"temperature"`
		Messages    []dagMessage `json:"messages"`
	} `json:"payload"`
}

type dagMessage struct{ Role, Content string }

// runDAG writes file as a dag_jsonl input, profiles it against a fast mock
// at --concurrency 1 with flags, and returns the requests sent, by
// conversation in send order (each a success carrying agent_depth), the
// run and its directory.
func runDAG(t *testing.T, file string, flags ...string) (map[string][]dagRequest, invocation, string) {
	t.Helper()
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tree.dag.jsonl"), []byte(file), 0o644))
	args := append([]string{"profile", "-m", "m", "--url", m.URL, "--endpoint-type", "chat", "--input-file", "tree.dag.jsonl",
		"--custom-dataset-type", "dag_jsonl", "--concurrency", "1", "--export-level", "raw", "--artifact-dir", "out", "--no-store"}, flags...)
	inv := cli(t, dir, args...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	b, err := os.ReadFile(filepath.Join(dir, "out", "profile_export_raw.jsonl"))
	require.NoError(t, err)
	reqs := map[string][]dagRequest{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r dagRequest
		require.NoError(t, json.Unmarshal([]byte(l), &r), l)
		assert.Equal(t, 200, r.Status, l)
		require.NotNil(t, r.Metadata.Depth, "a DAG request carries agent_depth: %s", l)
		reqs[r.Metadata.Conversation] = append(reqs[r.Metadata.Conversation], r)
	}
	return reqs, inv, dir
}

// TestDAGRunsForksSpawnsAndJoins replays a dag_jsonl tree against the mock
// and checks, from what was sent: every conversation's turns, a fork's
// request continuing its parent's conversation with the parent's live
// replies, a spawn starting from nothing and its join holding the
// parent's turn, the tree's depths and parents, a turn's model and extra.
func TestDAGRunsForksSpawnsAndJoins(t *testing.T) {
	reqs, inv, dir := runDAG(t, dagFile, "--streaming")
	turns := map[string]int{"root": 3, "agent": 2, "pre": 1, "branch-a": 2, "branch-b": 1}
	for conv, n := range turns {
		require.Len(t, reqs[conv], n, "one root's tree, once (the sessions default to the roots): %s", conv)
		for i, r := range reqs[conv] {
			require.Equal(t, i, r.Metadata.Turn, "%s's turns in order", conv)
		}
	}
	root, agent, a := reqs["root"], reqs["agent"], reqs["branch-a"]
	// The fork continues the root's conversation: its turn 2's messages,
	// the live reply to it, then its own.
	last := root[2].Payload.Messages
	require.Equal(t, []string{"system", "user", "assistant", "user", "assistant", "user"}, roles(last))
	fork := a[0].Payload.Messages
	require.Len(t, fork, len(last)+2)
	assert.Equal(t, last, fork[:len(last)], "a fork sends its parent's conversation as it was sent")
	assert.Equal(t, "assistant", fork[len(last)].Role)
	assert.NotEmpty(t, fork[len(last)].Content, "the parent's live reply")
	assert.Equal(t, dagMessage{"user", "Expand."}, fork[len(last)+1])
	assert.Len(t, a[1].Payload.Messages, len(fork)+2, "the fork's own turns accumulate")
	// The spawn starts from nothing; the root's turn 2 waits for it.
	assert.Equal(t, []dagMessage{{"system", "You are a sub-agent."}, {"user", "Search the code."}}, agent[0].Payload.Messages)
	assert.GreaterOrEqual(t, agent[0].Metadata.Start, root[0].Metadata.End, "a spawn starts once its turn returned")
	assert.GreaterOrEqual(t, root[2].Metadata.Start, agent[1].Metadata.End, "the joined turn waits for the sub-agent's last turn")
	assert.Equal(t, []dagMessage{{"user", "Warm the cache."}}, reqs["pre"][0].Payload.Messages)
	// Depths and parents.
	rootID := root[0].Metadata.Correlation
	for conv, want := range map[string]struct {
		depth  int
		parent string
	}{"root": {0, ""}, "agent": {1, rootID}, "pre": {1, ""}, "branch-a": {1, rootID}, "branch-b": {1, rootID}} {
		r := reqs[conv][0]
		assert.Equal(t, want.depth, *r.Metadata.Depth, conv)
		assert.Equal(t, want.parent, r.Metadata.Parent, conv)
	}
	assert.NotEqual(t, rootID, a[0].Metadata.Correlation, "a branch is a session of its own")
	b0 := reqs["branch-b"][0].Payload
	assert.Equal(t, "critic", b0.Model, "a turn's model")
	require.NotNil(t, b0.Temperature)
	assert.Equal(t, 0.5, *b0.Temperature, "a turn's extra")
	assert.Equal(t, "m", root[0].Payload.Model)

	// The fork's input length counts the root's conversation, its replies
	// included; the JSON export has AIPerf's branch_stats.
	jl, err := os.ReadFile(filepath.Join(dir, "out", "profile_export.jsonl"))
	require.NoError(t, err)
	isl := map[string]float64{}
	for _, l := range strings.Split(strings.TrimSpace(string(jl)), "\n") {
		var line struct {
			Metadata struct {
				Conversation string `json:"conversation_id"`
				Turn         int    `json:"turn_index"`
			} `json:"metadata"`
			Metrics struct {
				ISL struct{ Value float64 } `json:"input_sequence_length"`
			} `json:"metrics"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &line), l)
		isl[fmt.Sprintf("%s/%d", line.Metadata.Conversation, line.Metadata.Turn)] = line.Metrics.ISL.Value
	}
	assert.Greater(t, isl["branch-a/0"], isl["root/2"]+8, "8 reply tokens and the fork's own prompt on top of the root's last request")
	var doc struct {
		Branches map[string]int `json:"branch_stats"`
	}
	raw, err := os.ReadFile(filepath.Join(dir, "out", "profile_export_aiperf.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &doc))
	assert.Equal(t, 4, doc.Branches["children_spawned"], "agent, pre, branch-a, branch-b")
	assert.Equal(t, 4, doc.Branches["children_completed"])
	assert.Zero(t, doc.Branches["children_truncated"])
	assert.Equal(t, doc.Branches["parents_suspended"], doc.Branches["parents_resumed"])
	assert.Contains(t, inv.stdout, "DAG branches: 4 started, 4 completed")
}

func roles(msgs []dagMessage) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Role
	}
	return out
}

// A background fork runs beside its parent: each continues from the fork
// point on its own (neither sees the other's later messages), and
// --system-prompt opens the root and a spawn, not again the fork, which
// continues the root's conversation.
func TestDAGBackgroundForkAndSystemPrompt(t *testing.T) {
	file := `{"session_id":"root","turns":[{"messages":[{"role":"user","content":"Start."}],"max_tokens":4,"forks":[{"child":"bg","background":true}],"spawns":["sub"]},{"messages":[{"role":"user","content":"Parent goes on."}],"max_tokens":4}]}
{"session_id":"bg","turns":[{"messages":[{"role":"user","content":"Background work."}],"max_tokens":4},{"messages":[{"role":"user","content":"More background."}],"max_tokens":4}]}
{"session_id":"sub","turns":[{"messages":[{"role":"user","content":"Sub-agent."}],"max_tokens":4}]}
`
	reqs, _, _ := runDAG(t, file, "--system-prompt", "PRE")
	sent := map[string][][]dagMessage{}
	for conv, rs := range reqs {
		for _, r := range rs {
			sent[conv] = append(sent[conv], r.Payload.Messages)
		}
	}
	require.Len(t, sent["root"], 2)
	require.Len(t, sent["bg"], 2)
	require.Len(t, sent["sub"], 1)
	root0, root1, bg0, bg1 := sent["root"][0], sent["root"][1], sent["bg"][0], sent["bg"][1]
	assert.Equal(t, []dagMessage{{"system", "PRE"}, {"user", "Start."}}, root0)
	require.Len(t, root1, 4)
	assert.Equal(t, root0, root1[:2])
	assert.Equal(t, dagMessage{"user", "Parent goes on."}, root1[3], "the parent goes on without the fork's messages")
	require.Len(t, bg0, 4)
	assert.Equal(t, root1[:3], bg0[:3], "the fork continues from the fork point: the root's turn and its reply")
	assert.Equal(t, dagMessage{"user", "Background work."}, bg0[3])
	require.Len(t, bg1, 6)
	assert.Equal(t, bg0, bg1[:4])
	assert.Equal(t, dagMessage{"user", "More background."}, bg1[5], "without the parent's later turn")
	assert.Equal(t, []dagMessage{{"system", "PRE"}, {"user", "Sub-agent."}}, sent["sub"][0], "a spawn opens with the system prompt")
}

// An orchestrator (AIPerf's gated spine) sends nothing itself: its rounds
// spawn their conversations, the next round once the previous one's have
// all returned and its think time has passed.
func TestDAGOrchestratorRounds(t *testing.T) {
	file := `{"session_id":"spine","orchestrator":true,"rounds":[{"spawns":["plan-a","plan-b"],"think_time_ms":5},{"spawns":["review"],"think_time_ms":40}]}
{"session_id":"plan-a","turns":[{"messages":[{"role":"user","content":"Plan part A."}],"max_tokens":4},{"messages":[{"role":"user","content":"Refine A."}],"max_tokens":4}]}
{"session_id":"plan-b","turns":[{"messages":[{"role":"user","content":"Plan part B."}],"max_tokens":4}]}
{"session_id":"review","turns":[{"messages":[{"role":"user","content":"Review both plans."}],"max_tokens":4}]}
`
	reqs, inv, _ := runDAG(t, file)
	assert.Empty(t, reqs["spine"], "the orchestrator sends nothing")
	require.Len(t, reqs["plan-a"], 2)
	require.Len(t, reqs["plan-b"], 1)
	require.Len(t, reqs["review"], 1)
	round0 := max(reqs["plan-a"][1].Metadata.End, reqs["plan-b"][0].Metadata.End)
	assert.GreaterOrEqual(t, reqs["review"][0].Metadata.Start, round0+int64(40*time.Millisecond),
		"round 1 waits for all of round 0 and its think time")
	for conv, rs := range reqs {
		assert.Equal(t, 1, *rs[0].Metadata.Depth, conv)
		assert.Empty(t, rs[0].Metadata.Parent, "%s: an orchestrator has no correlation id to name", conv)
	}
	assert.Contains(t, inv.stdout, "DAG branches: 3 started, 3 completed")
}

// --cache-bust with a DAG file: a branch's conversation is a node past the
// roots, which the cache-bust passes once did not count (a panic as soon as
// a branch sent).
func TestDAGCacheBust(t *testing.T) {
	reqs, _, _ := runDAG(t, dagFile, "--cache-bust", "first_turn_prefix")
	n := 0
	for _, rs := range reqs {
		n += len(rs)
	}
	assert.Equal(t, 9, n, "every turn of the tree, each a success")
}
