package dataset

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dagExample is AIPerf's minimal FORK example (docs/benchmark-modes/dag.md).
var dagExample = []string{
	`{"session_id":"root","turns":[{"model":"Qwen3-0.6B","messages":[{"role":"system","content":"You are a careful assistant."},{"role":"user","content":"Please summarize the attached document."}],"max_tokens":128,"forks":["branch-a","branch-b"]}]}`,
	`{"session_id":"branch-a","turns":[{"model":"Qwen3-0.6B","messages":[{"role":"user","content":"Expand on the first section in more detail."},{"role":"user","content":"Add a brief counter-argument."}],"max_tokens":96},{"model":"Qwen3-0.6B","messages":[{"role":"user","content":"Now tighten the expansion."},{"role":"user","content":"Keep the counter-argument intact."}],"max_tokens":64}]}`,
	`{"session_id":"branch-b","turns":[{"model":"Qwen3-0.6B","messages":[{"role":"user","content":"Point out weaknesses in the summary."}],"max_tokens":128},{"model":"Qwen3-0.6B","messages":[{"role":"user","content":"Fold the critique into a revised summary."}],"max_tokens":96}]}`,
}

// openDAG opens a dag_jsonl file of lines with o's options.
func openDAG(t *testing.T, o Options, lines ...string) Tree {
	t.Helper()
	if o.InputFile == "" {
		o.InputFile = writeFile(t, "dag.jsonl", lines...)
	}
	if o.CustomType == "" {
		o.CustomType = TypeDAGJSONL
	}
	d, err := Open(context.Background(), o200k(t), o)
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	tree, ok := d.(Tree)
	require.True(t, ok, "a dag_jsonl dataset is a Tree")
	return tree
}

// dagNodes reads every node of d.
func dagNodes(t *testing.T, d Tree) []Conversation {
	t.Helper()
	out := make([]Conversation, d.Nodes())
	for i := range out {
		var err error
		out[i], err = d.Node(i)
		require.NoError(t, err)
	}
	return out
}

// dagMessages is the messages array of the first turn of line (as written).
func dagMessages(t *testing.T, line string, turn int) string {
	var rec struct {
		Turns []struct {
			Messages json.RawMessage `json:"messages"`
		} `json:"turns"`
	}
	require.NoError(t, json.Unmarshal([]byte(line), &rec))
	return string(rec.Turns[turn].Messages)
}

// AIPerf's example: one root forking two branches at its only turn; the
// root's turn-0 system message is where the history starts.
func TestDAGMinimalExample(t *testing.T) {
	d := openDAG(t, Options{}, dagExample...)
	assert.Equal(t, TypeDAGJSONL, Kind(d))
	assert.Equal(t, 1, d.Len(), "one root")
	assert.Equal(t, 3, d.Nodes())
	assert.Equal(t, 5, Turns(d), "every conversation's turns")
	assert.Equal(t, SamplingRandom, d.Sampling(), "AIPerf's dag loader prefers random")
	assert.Nil(t, d.Schedule())
	assert.False(t, IsTrace(d))
	nodes := dagNodes(t, d)
	assert.Equal(t, []string{"root", "branch-a", "branch-b"}, convIDs(nodes))
	root := nodes[0]
	assert.True(t, root.DAG)
	assert.Equal(t, DeltasWithoutResponses, root.Mode)
	assert.Empty(t, root.System, "messages are sent as written, nothing hoisted")
	require.Len(t, root.Turns, 1)
	assert.Equal(t, []Branch{{Node: 1, Fork: true}, {Node: 2, Fork: true}}, root.Turns[0].Branches)
	assert.Equal(t, dagMessages(t, dagExample[0], 0), string(root.Turns[0].Messages), "verbatim")
	tok := o200k(t)
	want := tok.Count("You are a careful assistant.") + tok.Count("Please summarize the attached document.")
	assert.Equal(t, want, root.Turns[0].InputTokens)
	assert.Equal(t, 128, root.Turns[0].MaxTokens)
	assert.Equal(t, "Qwen3-0.6B", root.Turns[0].Model)
	for _, c := range nodes[1:] {
		assert.True(t, c.DAG, c.ID)
		require.Len(t, c.Turns, 2, c.ID)
		for _, turn := range c.Turns {
			assert.Empty(t, turn.Branches, c.ID)
			assert.Positive(t, turn.InputTokens, c.ID)
		}
	}
	assert.Equal(t, dagMessages(t, dagExample[1], 1), string(nodes[1].Turns[1].Messages))
	assert.Equal(t, []int{96, 64}, []int{nodes[1].Turns[0].MaxTokens, nodes[1].Turns[1].MaxTokens})

	first, err := d.Conversation(0)
	require.NoError(t, err)
	assert.Equal(t, root, first, "Conversation(i) is root i")
	_, err = d.Conversation(1)
	assert.ErrorContains(t, err, "out of range")
	_, err = d.Node(3)
	assert.ErrorContains(t, err, "out of range")
}

// Spawns join at the next turn (none after the last), at join_at when
// given; background forks leave the parent running; pre-session spawns,
// context_mode and the request fields are carried.
func TestDAGBranchesAndFields(t *testing.T) {
	lines := []string{
		`{"session_id":"r","pre_session_spawns":["p"],"turns":[` +
			`{"messages":[{"role":"system","content":"s"},{"role":"user","content":"zero"}],"spawns":["a",{"children":["b","c"],"join_at":2},{"children":["f"],"join_at":null}],"delay":40},` +
			`{"messages":[{"role":"user","content":"one"}],"forks":[{"child":"d","background":true}],"model":"m1","max_tokens":7,"tools":[{"type":"function","function":{"name":"f"}}],"extra":{"temperature":0.5,"seed":42},"delay":250},` +
			`{"messages":[{"role":"user","content":"two"}],"spawns":["e"],"forks":["g"]}]}`,
		`{"session_id":"p","turns":[{"messages":[{"role":"system","content":"own"},{"role":"user","content":"pre"}]}]}`,
		`{"session_id":"a","turns":[{"messages":[{"role":"user","content":"a"}]}]}`,
		`{"session_id":"b","context_mode":"message_array_with_responses","turns":[{"messages":[{"role":"user","content":"b0"}]},{"messages":[{"role":"system","content":"again"},{"role":"user","content":"b1"}]}]}`,
		`{"session_id":"c","turns":[{"messages":[{"role":"user","content":"c"}]}]}`,
		`{"session_id":"d","turns":[{"messages":[{"role":"user","content":"d"}]}]}`,
		`{"session_id":"e","turns":[{"messages":[{"role":"user","content":"e"}]}]}`,
		`{"session_id":"f","turns":[{"messages":[{"role":"user","content":"f"}]}]}`,
		`{"session_id":"g","turns":[{"messages":[{"role":"user","content":"g"}],"delay":5}]}`,
	}
	delayCap := 100.0
	d := openDAG(t, Options{OSLMean: 33, DelayCapMs: &delayCap}, lines...)
	nodes := dagNodes(t, d)
	require.Equal(t, []string{"r", "p", "a", "b", "c", "d", "e", "f", "g"}, convIDs(nodes))
	r := nodes[0]
	assert.Equal(t, []int{1}, r.PreSpawns)
	assert.Equal(t, []Branch{{Node: 2, JoinAt: 1}, {Node: 3, JoinAt: 2}, {Node: 4, JoinAt: 2}, {Node: 7, JoinAt: 1}}, r.Turns[0].Branches)
	assert.Equal(t, []Branch{{Node: 5, Fork: true}}, r.Turns[1].Branches, "a background fork on a turn that is not the last")
	assert.Equal(t, []Branch{{Node: 8, Fork: true}, {Node: 6}}, r.Turns[2].Branches, "forks, then spawns; no join after the last turn")

	assert.Equal(t, 40.0, r.Turns[0].DelayMs, "a turn-0 delay is kept")
	assert.Equal(t, 100.0, r.Turns[1].DelayMs, "--inter-turn-delay-cap")
	assert.Equal(t, 5.0, nodes[8].Turns[0].DelayMs, "a child's wait after its parent's turn")
	one := r.Turns[1]
	assert.Equal(t, "m1", one.Model)
	assert.Equal(t, 7, one.MaxTokens)
	assert.JSONEq(t, `[{"type":"function","function":{"name":"f"}}]`, string(one.Tools))
	assert.Equal(t, map[string]any{"temperature": json.Number("0.5"), "seed": json.Number("42")}, one.Extra)
	assert.Positive(t, r.Turns[0].MaxTokens, "--osl draws the turns without max_tokens")
	assert.Empty(t, r.Turns[0].Model)
	assert.Equal(t, MessageArrayWithResponses, nodes[3].Mode)
	assert.Equal(t, DeltasWithoutResponses, nodes[2].Mode)
	assert.Equal(t, 12, Turns(d))

	ignored := openDAG(t, Options{IgnoreDelays: true}, lines...)
	c, err := ignored.Node(0)
	require.NoError(t, err)
	assert.Zero(t, c.Turns[0].DelayMs, "--ignore-trace-delays")
	assert.Zero(t, c.Turns[0].MaxTokens, "no --osl: no max_tokens")
}

// Roots come first, in file order, then the children in file order; a
// SPAWN child of several parents is one node.
func TestDAGMultiRootOrder(t *testing.T) {
	d := openDAG(t, Options{},
		`{"session_id":"shared","turns":[{"messages":[{"role":"user","content":"x"}]}]}`,
		`{"session_id":"rA","turns":[{"messages":[{"role":"user","content":"x"}],"forks":["a1"],"spawns":["shared"]}]}`,
		`{"session_id":"a1","turns":[{"messages":[{"role":"user","content":"x"}]}]}`,
		`{"session_id":"rB","turns":[{"messages":[{"role":"user","content":"x"}],"spawns":["shared"]}]}`,
		`{"session_id":"rC","turns":[{"messages":[{"role":"user","content":"x"}]}]}`,
	)
	assert.Equal(t, 3, d.Len())
	nodes := dagNodes(t, d)
	assert.Equal(t, []string{"rA", "rB", "rC", "shared", "a1"}, convIDs(nodes))
	for i := range d.Len() {
		c, err := d.Conversation(i)
		require.NoError(t, err)
		assert.Equal(t, nodes[i], c)
	}
	assert.Equal(t, []Branch{{Node: 4, Fork: true}, {Node: 3}}, nodes[0].Turns[0].Branches)
	assert.Equal(t, []Branch{{Node: 3}}, nodes[1].Turns[0].Branches)
	assert.Equal(t, 6, Turns(d), "one pass over each root's tree: shared runs under rA and under rB")
}

// A tree runs a conversation once per reference to it: a few lines can
// draw billions of sessions, refused past dagMaxTree at the root's line.
func TestDAGTreeBounded(t *testing.T) {
	lines := []string{}
	for i := range 20 { // each conversation spawns the next from both of its turns: 2^20 sessions
		next := fmt.Sprintf(`"spawns":["s%d"]`, i+1)
		if i == 19 {
			next = `"max_tokens":1`
		}
		lines = append(lines, fmt.Sprintf(`{"session_id":"s%d","turns":[{"messages":[{"role":"user","content":"a"}],%s},`+
			`{"messages":[{"role":"user","content":"b"}],%s}]}`, i, next, next))
	}
	path := writeFile(t, "wide.jsonl", lines...)
	_, err := Open(context.Background(), o200k(t), Options{InputFile: path, CustomType: TypeDAGJSONL})
	assert.ErrorContains(t, err, path+`:1: session_id: session "s0" starts a tree of more than 100000 sessions`)
	d := openDAG(t, Options{}, lines[12:]...) // 2^8 - 1 sessions of 2 turns
	assert.Equal(t, 2*(1<<8-1), Turns(d))
}

// A dag_jsonl file is detected by its shape: AIPerf's probe (a session_id
// and turns with messages), no other type accepting it.
func TestDAGDetected(t *testing.T) {
	path := writeFile(t, "dag.jsonl", dagExample...)
	det, err := Detect(path, "")
	require.NoError(t, err)
	assert.Equal(t, Detected{Type: TypeDAGJSONL}, det)
	d, _ := open(t, Options{InputFile: path})
	assert.Equal(t, TypeDAGJSONL, Kind(d))
	_, err = Open(context.Background(), o200k(t), Options{InputFile: path, CustomType: TypeMultiTurn})
	assert.ErrorContains(t, err, "a dag_jsonl record in a multi_turn file")
}

// A 50,000-conversation chain loads (no recursion), and a long chain
// closed into a cycle is reported with its middle elided.
func TestDAGLongChain(t *testing.T) {
	chain := func(n int, closed bool) []string {
		lines := make([]string, n)
		for i := range n {
			next := fmt.Sprintf(`,"spawns":["s%d"]`, i+1)
			if i == n-1 {
				next = map[bool]string{true: `,"spawns":["s0"]`, false: ""}[closed]
			}
			lines[i] = fmt.Sprintf(`{"session_id":"s%d","turns":[{"messages":[{"role":"user","content":"c"}]%s}]}`, i, next)
		}
		return lines
	}
	const n = 50_000
	d := openDAG(t, Options{}, chain(n, false)...)
	assert.Equal(t, 1, d.Len())
	assert.Equal(t, n, d.Nodes())
	assert.Equal(t, n, Turns(d))
	last, err := d.Node(n - 2)
	require.NoError(t, err)
	assert.Equal(t, []Branch{{Node: n - 1}}, last.Turns[0].Branches)

	path := writeFile(t, "cycle.jsonl", chain(20_000, true)...)
	_, err = Open(context.Background(), o200k(t), Options{InputFile: path, CustomType: TypeDAGJSONL})
	assert.ErrorContains(t, err, path+`:20000: turns[0].spawns[0]: cycle detected: "s0" -> "s1" -> "s2" -> "s3" -> … (19993 more) -> "s19997" -> "s19998" -> "s19999" -> "s0"`)
}

// dagTurn is a valid turn with extra keys.
func dagTurn(extra string) string {
	return `{"messages":[{"role":"user","content":"hi"}]` + extra + `}`
}

// dagLine is a conversation of turns.
func dagLine(id string, turns ...string) string {
	return fmt.Sprintf(`{"session_id":%q,"turns":[%s]}`, id, strings.Join(turns, ","))
}

// Every problem is reported at its line and field, saying what to do.
func TestDAGProblems(t *testing.T) {
	ok := dagLine("ok", dagTurn(""))
	cases := map[string]dagProblem{
		"invalid JSON":       {[]string{ok, `{"session_id":"a",`}, 2, "invalid JSON"},
		"not an object":      {[]string{`[1]`}, 1, "expected a JSON object, got a list"},
		"missing session_id": {[]string{`{"turns":[` + dagTurn("") + `]}`}, 1, "session_id: missing: expected a session id"},
		"empty session_id":   {[]string{dagLine("", dagTurn(""))}, 1, "session_id: expected a session id (a non-empty string), got an empty string"},
		"duplicate":          {[]string{ok, dagLine("x", dagTurn("")), ok}, 3, `session_id: duplicate session_id "ok": line 1 declares it already`},
		"missing turns":      {[]string{`{"session_id":"a"}`}, 1, "turns: missing: expected a non-empty list of turn objects"},
		"empty turns":        {[]string{dagLine("a")}, 1, "turns: expected a non-empty list of turn objects, got an empty list"},
		"turn not object":    {[]string{dagLine("a", `3`)}, 1, "turns[0]: expected a turn object, got a number"},
		"no messages":        {[]string{dagLine("a", dagTurn(""), `{"model":"m"}`)}, 1, "turns[1].messages: missing: expected a non-empty list of messages"},
		"messages not list":  {[]string{dagLine("a", `{"messages":"hi"}`)}, 1, "turns[0].messages: expected a list of message objects, got a string"},
		"messages empty":     {[]string{dagLine("a", `{"messages":[]}`)}, 1, "turns[0].messages: expected a non-empty list of messages"},
		"message not object": {[]string{dagLine("a", `{"messages":["hi"]}`)}, 1, `turns[0].messages[0]: expected a message object with a string "role", got a string`},
		"no role":            {[]string{dagLine("a", `{"messages":[{"role":"user"},{"content":"x"}]}`)}, 1, "turns[0].messages[1].role: missing: each message needs a string role"},
		"role not string":    {[]string{dagLine("a", `{"messages":[{"role":3}]}`)}, 1, "turns[0].messages[0].role: expected a string, got 3"},
		"unknown conv key":   {[]string{`{"session_id":"a","not_a_real_field":1,"turns":[` + dagTurn("") + `]}`}, 1, `unknown key "not_a_real_field": a dag_jsonl conversation has session_id, turns, pre_session_spawns and context_mode`},
		"unknown turn key":   {[]string{dagLine("a", dagTurn(`,"max_token":5`))}, 1, `turns[0]: unknown key "max_token": a turn has messages, model, max_tokens, tools, extra, forks, spawns and delay; put other request fields in "extra"`},
		"max_tokens bool":    {[]string{dagLine("a", dagTurn(`,"max_tokens":true`))}, 1, "turns[0].max_tokens: expected an integer ≥ 1, got true"},
		"max_tokens float":   {[]string{dagLine("a", dagTurn(`,"max_tokens":1.5`))}, 1, "turns[0].max_tokens: expected an integer ≥ 1, got 1.5"},
		"max_tokens zero":    {[]string{dagLine("a", dagTurn(`,"max_tokens":0`))}, 1, "turns[0].max_tokens: expected an integer ≥ 1, got 0"},
		"model not string":   {[]string{dagLine("a", dagTurn(`,"model":1`))}, 1, "turns[0].model: expected a model name (a string), got 1"},
		"tools not list":     {[]string{dagLine("a", dagTurn(`,"tools":{}`))}, 1, "turns[0].tools: expected a list of tool objects, got an object"},
		"extra not object":   {[]string{dagLine("a", dagTurn(`,"extra":[1]`))}, 1, "turns[0].extra: expected an object of request fields, got a list"},
		"negative delay":     {[]string{dagLine("a", dagTurn(`,"delay":-1`))}, 1, "turns[0].delay: expected a number of milliseconds ≥ 0, got -1"},
		"delay string":       {[]string{dagLine("a", dagTurn(`,"delay":"5"`))}, 1, `turns[0].delay: expected a number of milliseconds ≥ 0, got "5"`},
		"context_mode":       {[]string{`{"session_id":"a","context_mode":"x","turns":[` + dagTurn("") + `]}`}, 1, `context_mode: expected "deltas_without_responses"`},
		"undeclared target":  {[]string{ok, dagLine("root", dagTurn(`,"forks":["brnch-a"]`))}, 2, `turns[0].forks[0]: branch target "brnch-a" is not declared: no line of the file has that session_id (known: "ok", "root")`},
		"undeclared spawn":   {[]string{ok, dagLine("root", dagTurn(`,"spawns":[{"children":["ok","zz"]}]`))}, 2, `turns[0].spawns[0].children[1]: branch target "zz" is not declared`},
		"undeclared pre":     {[]string{`{"session_id":"a","pre_session_spawns":["zz"],"turns":[` + dagTurn("") + `]}`}, 1, `pre_session_spawns[0]: branch target "zz" is not declared`},
		"two fork parents": {[]string{dagLine("A", dagTurn(`,"forks":["Y"]`)), dagLine("B", dagTurn(`,"forks":["Y"]`)), dagLine("Y", dagTurn(""))}, 2,
			`turns[0].forks[0]: session "Y" is forked by both "A" turn 0 (line 1) and "B" turn 0: FORK children need one parent`},
		"pre-spawned fork target": {[]string{dagLine("A", dagTurn(`,"forks":["Y"]`)), `{"session_id":"B","pre_session_spawns":["Y"],"turns":[` + dagTurn("") + `]}`, dagLine("Y", dagTurn(""))}, 2,
			`pre_session_spawns[0]: session "Y" is referenced by "B" pre_session_spawns but is also a FORK target (of "A" turn 0, line 1): pre-session children must be SPAWN-mode`},
		"duplicate fork":  {[]string{ok, dagLine("a", dagTurn(`,"forks":["ok",{"child":"ok","background":true}]`))}, 2, `turns[0].forks[1]: child "ok" is listed twice in this turn's forks`},
		"duplicate spawn": {[]string{ok, dagLine("a", dagTurn(`,"spawns":["ok",{"children":["ok"]}]`))}, 2, `turns[0].spawns[1].children[0]: child "ok" is listed twice in this turn's spawns`},
		"duplicate pre":   {[]string{ok, `{"session_id":"a","pre_session_spawns":["ok","ok"],"turns":[` + dagTurn("") + `]}`}, 2, `pre_session_spawns[1]: child "ok" is listed twice in pre_session_spawns`},
		"cycle":           {[]string{ok, dagLine("a", dagTurn(`,"spawns":["b"]`)), dagLine("b", dagTurn(`,"forks":["a"]`))}, 3, `turns[0].forks[0]: cycle detected: "a" -> "b" -> "a"`},
		"self reference":  {[]string{ok, dagLine("a", dagTurn(`,"spawns":["a"]`))}, 2, `turns[0].spawns[0]: cycle detected: "a" -> "a"`},
		"pre-spawn cycle": {[]string{ok, `{"session_id":"a","pre_session_spawns":["a"],"turns":[` + dagTurn("") + `]}`}, 2, `pre_session_spawns[0]: cycle detected: "a" -> "a"`},
		"later system": {[]string{dagLine("a", dagTurn(""), `{"messages":[{"role":"system","content":"s"}]}`)}, 1,
			`turns[1].messages[0]: session "a" turn 1: only a root's or a spawned conversation's turn 0 may hold a system message: a forked conversation inherits its parent's, and a later system message is dropped by chat templates; author it as a user message`},
		"forked system": {[]string{dagLine("a", dagTurn(`,"forks":["b"]`)), dagLine("b", `{"messages":[{"role":"user","content":"u"},{"role":"system","content":"s"}]}`)}, 2,
			`turns[0].messages[1]: session "b" turn 0: only a root's or a spawned conversation's turn 0 may hold a system message`},
		"isolated system not first": {[]string{`{"session_id":"a","context_mode":"message_array_with_responses","turns":[{"messages":[{"role":"user","content":"u"},{"role":"system","content":"s"}]}]}`}, 1,
			"turns[0].messages[1]: a system message must come first in its turn's messages"},
		"foreground fork": {[]string{ok, dagLine("X", dagTurn(`,"forks":["ok"]`), dagTurn(""))}, 2,
			`turns[0].forks[0]: session "X" turn 0 has foreground FORK branches but is not the last turn; use {"child": ..., "background": true} to keep the parent running`},
		"background false": {[]string{ok, dagLine("X", dagTurn(`,"forks":[{"child":"ok","background":false}]`), dagTurn(""))}, 2, "has foreground FORK branches but is not the last turn"},
		"fork unknown key": {[]string{ok, dagLine("X", dagTurn(`,"forks":[{"child":"ok","join_at":1}]`))}, 2, `turns[0].forks[0]: unknown key "join_at": a fork is a session id or {"child": …, "background": …}`},
		"join_at early": {[]string{ok, dagLine("X", dagTurn(""), dagTurn(`,"spawns":[{"children":["ok"],"join_at":1}]`), dagTurn(""))}, 2,
			"turns[1].spawns[0].join_at: join_at=1 must be strictly greater than the spawning turn index 1"},
		"join_at late": {[]string{ok, dagLine("X", dagTurn(`,"spawns":[{"children":["ok"],"join_at":2}]`), dagTurn(""))}, 2,
			"turns[0].spawns[0].join_at: join_at=2 is out of range (the conversation has 2 turns)"},
		"join_at bool":     {[]string{ok, dagLine("X", dagTurn(`,"spawns":[{"children":["ok"],"join_at":true}]`), dagTurn(""))}, 2, "turns[0].spawns[0].join_at: expected the index of a later turn"},
		"empty children":   {[]string{ok, dagLine("X", dagTurn(`,"spawns":[{"children":[]}]`))}, 2, "turns[0].spawns[0].children: expected a non-empty list of session ids"},
		"no conversations": {[]string{"", "  "}, 0, "no conversations: the file is empty or holds only blank lines"},
		"extra messages":   {[]string{dagLine("a", dagTurn(`,"extra":{"messages":[]}`))}, 1, "turns[0].extra.messages: would replace the conversation the turn sends"},
		"extra input":      {[]string{dagLine("a", dagTurn(`,"extra":{"input":"x"}`))}, 1, "turns[0].extra.input: would replace the conversation"},
		"extra system":     {[]string{dagLine("a", dagTurn(`,"extra":{"system":"x"}`))}, 1, "turns[0].extra.system: would replace the conversation"},
		"isolated parent forks": {[]string{`{"session_id":"a","context_mode":"message_array_with_responses","turns":[` + dagTurn(`,"forks":["b"]`) + `]}`, dagLine("b", dagTurn(""))}, 1,
			`turns[0].forks[0]: session "a" forks "b", but its context_mode message_array_with_responses keeps no history for a fork to continue`},
		"isolated fork": {[]string{dagLine("a", dagTurn(`,"forks":["b"]`)), `{"session_id":"b","context_mode":"message_array_with_responses","turns":[` + dagTurn("") + `]}`}, 2,
			`context_mode: session "b" is forked (by "a" turn 0, line 1) and would drop the history it continues`},
	}
	checkDAGProblems(t, cases)
}

// dagProblem is a file's lines and its first problem: its line and what
// its message says.
type dagProblem struct {
	lines []string
	line  int
	want  string
}

// checkDAGProblems opens each case's file and checks its first problem.
func checkDAGProblems(t *testing.T, cases map[string]dagProblem) {
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			path := writeFile(t, "dag.jsonl", c.lines...)
			_, err := Open(context.Background(), o200k(t), Options{InputFile: path, CustomType: TypeDAGJSONL})
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), "dag_jsonl dataset: "), err.Error())
			les := lineErrors(err)
			require.NotEmpty(t, les, err.Error())
			assert.Equal(t, c.line, les[0].Line, err.Error())
			assert.Contains(t, les[0].Error(), c.want)
			assert.True(t, strings.HasPrefix(les[0].Error(), path+":"), les[0].Error())
		})
	}
}

// An orchestrator's problems, and an orchestrator's keys elsewhere.
func TestDAGOrchestratorProblems(t *testing.T) {
	ok := dagLine("ok", dagTurn(""))
	checkDAGProblems(t, map[string]dagProblem{
		"rounds without orchestrator": {[]string{`{"session_id":"a","rounds":3,"turns":[` + dagTurn("") + `]}`}, 1, `rounds: applies to an orchestrator conversation ("orchestrator": true, no turns)`},
		"orchestrator turns":          {[]string{ok, `{"session_id":"o","orchestrator":true,"spawns":["ok"],"turns":[` + dagTurn("") + `]}`}, 2, "turns: an orchestrator sends no request of its own"},
		"orchestrator no spawns":      {[]string{`{"session_id":"o","orchestrator":true}`}, 1, "spawns: an orchestrator needs the conversations it starts"},
		"orchestrator pre":            {[]string{ok, `{"session_id":"o","orchestrator":true,"spawns":["ok"],"pre_session_spawns":["ok"]}`}, 2, "pre_session_spawns: an orchestrator starts its conversations in spawns"},
		"orchestrator not bool":       {[]string{ok, `{"session_id":"o","orchestrator":1,"spawns":["ok"]}`}, 2, "orchestrator: expected true (an orchestrator conversation) or false, got 1"},
		"negative sigma":              {[]string{ok, `{"session_id":"o","orchestrator":true,"rounds":2,"spawns":["ok"],"think_time_ms":5,"think_time_sigma":-1}`}, 2, "think_time_sigma: expected a number from 0 to 10, got -1"},
		"sigma past the bound":        {[]string{ok, `{"session_id":"o","orchestrator":true,"rounds":2,"spawns":["ok"],"think_time_ms":5,"think_time_sigma":11}`}, 2, "think_time_sigma: expected at most 10, got 11"},
		"think past a day":            {[]string{ok, `{"session_id":"o","orchestrator":true,"rounds":2,"spawns":["ok"],"think_time_ms":1e12}`}, 2, "think_time_ms: expected at most 86400000 milliseconds (a day)"},
		"sigma alone":                 {[]string{ok, `{"session_id":"o","orchestrator":true,"spawns":["ok"],"think_time_sigma":1}`}, 2, "think_time_sigma: think times pace rounds: give rounds too"},
		"zero think, no orchestrator": {[]string{`{"session_id":"a","think_time_ms":0,"turns":[` + dagTurn("") + `]}`}, 1, `think_time_ms: applies to an orchestrator conversation`},
		"orchestrator context_mode":   {[]string{ok, `{"session_id":"o","orchestrator":true,"spawns":["ok"],"context_mode":"garbage"}`}, 2, `context_mode: expected "deltas_without_responses"`},
		"rounds past the bound":       {[]string{ok, `{"session_id":"o","orchestrator":true,"rounds":60000,"spawns":["ok","ok2"]}`, dagLine("ok2", dagTurn(""))}, 2, "rounds: 60000 rounds of 2 conversations start more than 100000 sessions"},
		"rounds zero":                 {[]string{ok, `{"session_id":"o","orchestrator":true,"rounds":0,"spawns":["ok"]}`}, 2, "rounds: expected a number of rounds (an integer from 1"},
		"rounds list and spawns":      {[]string{ok, `{"session_id":"o","orchestrator":true,"rounds":[{"spawns":["ok"]}],"spawns":["ok"]}`}, 2, "spawns: a list of rounds names each round's spawns"},
		"round unknown key":           {[]string{ok, `{"session_id":"o","orchestrator":true,"rounds":[{"spawns":["ok"],"think":1}]}`}, 2, `rounds[0]: unknown key "think": a round has spawns and think_time_ms`},
		"round undeclared":            {[]string{ok, `{"session_id":"o","orchestrator":true,"rounds":[{"spawns":["ok"]},{"spawns":["zz"]}]}`}, 2, `rounds[1].spawns[0]: branch target "zz" is not declared`},
		"think without rounds":        {[]string{ok, `{"session_id":"o","orchestrator":true,"spawns":["ok"],"think_time_ms":5}`}, 2, "think_time_ms: think times pace rounds: give rounds too"},
		"sigma without median":        {[]string{ok, `{"session_id":"o","orchestrator":true,"rounds":2,"spawns":["ok"],"think_time_sigma":0.5}`}, 2, "think_time_sigma: draws around think_time_ms"},
		"clamp without sigma":         {[]string{ok, `{"session_id":"o","orchestrator":true,"rounds":2,"spawns":["ok"],"think_time_ms":5,"think_time_max_ms":9}`}, 2, "think_time_max_ms: think_time_min_ms and think_time_max_ms clamp the draws"},
		"clamp reversed": {[]string{ok, `{"session_id":"o","orchestrator":true,"rounds":2,"spawns":["ok"],"think_time_ms":5,"think_time_sigma":1,"think_time_min_ms":9,"think_time_max_ms":2}`}, 2,
			"think_time_min_ms: must be at most think_time_max_ms (2), got 9"},
		"negative think": {[]string{ok, `{"session_id":"o","orchestrator":true,"rounds":2,"spawns":["ok"],"think_time_ms":-5}`}, 2, "think_time_ms: expected a number of milliseconds ≥ 0, got -5"},
	})
}

// Every problem of a file's lines is listed, not the first only.
func TestDAGProblemsListed(t *testing.T) {
	path := writeFile(t, "dag.jsonl", dagLine("a", `{"messages":[]}`), `{"session_id":"b"}`, dagLine("c", dagTurn(`,"max_tokens":0`)))
	_, err := Open(context.Background(), o200k(t), Options{InputFile: path, CustomType: TypeDAGJSONL})
	require.Error(t, err)
	var lines []int
	for _, le := range lineErrors(err) {
		lines = append(lines, le.Line)
	}
	assert.Equal(t, []int{1, 2, 3}, lines)
}

// What dag_jsonl does not read is refused before it is read.
func TestDAGRefusedOptions(t *testing.T) {
	path := writeFile(t, "dag.jsonl", dagExample...)
	tok := o200k(t)
	for name, c := range map[string]struct {
		o    Options
		want string
	}{
		"directory":      {Options{InputFile: t.TempDir(), CustomType: TypeDAGJSONL}, "dag_jsonl dataset: " + "%s is a directory: give one JSONL file"},
		"fixed schedule": {Options{InputFile: path, CustomType: TypeDAGJSONL, FixedSchedule: true}, "a fixed schedule needs timestamps, and dag_jsonl turns have none"},
		"sample ratio":   {Options{InputFile: path, CustomType: TypeDAGJSONL, Replay: Replay{SampleRatio: 0.5}}, "--trace-session-sample-ratio replays the sessions of a JSONL file"},
		"think time":     {Options{InputFile: path, CustomType: TypeDAGJSONL, Replay: Replay{ThinkTimeOnly: true}}, "--use-think-time-only applies to weka_trace"},
		"weka basis":     {Options{InputFile: path, CustomType: TypeDAGJSONL, WekaBasis: "absolute"}, "applies to weka_trace"},
		"uuid strip":     {Options{InputFile: path, CustomType: TypeDAGJSONL, UUIDAndStrip: true}, "uuid"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Open(context.Background(), tok, c.o)
			require.Error(t, err)
			want := c.want
			if strings.Contains(want, "%s") {
				want = fmt.Sprintf(want, c.o.InputFile)
			}
			assert.Contains(t, err.Error(), want)
		})
	}
}

// The file, its conversations and its turns are bounded.
func TestDAGBounds(t *testing.T) {
	lines := []string{dagLine("a", dagTurn("")), dagLine("b", dagTurn(""), dagTurn("")), dagLine("c", dagTurn(""))}
	path := writeFile(t, "dag.jsonl", lines...)
	open := func() error {
		_, err := Open(context.Background(), o200k(t), Options{InputFile: path, CustomType: TypeDAGJSONL})
		return err
	}
	defer func(b int64, c, n int) { dagMaxBytes, dagMaxConvs, dagMaxTurns = b, c, n }(dagMaxBytes, dagMaxConvs, dagMaxTurns)
	dagMaxBytes = 10
	assert.ErrorContains(t, open(), path+": more than 0 MiB: dag_jsonl holds the whole file in memory: split it")
	dagMaxBytes, dagMaxConvs = 1<<20, 2
	assert.ErrorContains(t, open(), path+":3: more than 2 conversations")
	dagMaxConvs, dagMaxTurns = 10, 2
	assert.ErrorContains(t, open(), path+":2: more than 2 turns")
	dagMaxTurns = 10
	assert.NoError(t, open())
}

// Ctrl-C stops the reading.
func TestDAGCancelled(t *testing.T) {
	path := writeFile(t, "dag.jsonl", dagExample...)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Open(ctx, o200k(t), Options{InputFile: path, CustomType: TypeDAGJSONL})
	assert.ErrorIs(t, err, context.Canceled)
}

// An orchestrator sends nothing: its rounds are silent turns, each
// spawning its children joined at the next, the last a gate that joins
// the last round; rounds N repeat the spawns, a list gives each round its
// own, and think times become the rounds' delays.
func TestDAGOrchestrator(t *testing.T) {
	child := func(id string) string { return dagLine(id, dagTurn("")) }
	d := openDAG(t, Options{},
		`{"session_id":"spine","orchestrator":true,"rounds":2,"think_time_ms":40,"think_time_sigma":0.5,"think_time_min_ms":10,"think_time_max_ms":90,"spawns":["a","b"]}`,
		`{"session_id":"plain","orchestrator":true,"spawns":["a"]}`,
		`{"session_id":"staged","orchestrator":true,"rounds":[{"spawns":["a"],"think_time_ms":7},{"spawns":["b","c"]}]}`,
		child("a"), child("b"), child("c"))
	assert.Equal(t, 3, d.Len(), "the orchestrators are the roots")
	spine, err := d.Conversation(0)
	require.NoError(t, err)
	assert.Equal(t, &ThinkTime{Sigma: 0.5, MinMs: 10, MaxMs: 90}, spine.Think)
	require.Len(t, spine.Turns, 3)
	a, b, c := 3, 4, 5
	for k, want := range [][]Branch{{{Node: a, JoinAt: 1}, {Node: b, JoinAt: 1}}, {{Node: a, JoinAt: 2}, {Node: b, JoinAt: 2}}, nil} {
		tr := spine.Turns[k]
		assert.True(t, tr.NoRequest, "round %d", k)
		assert.Equal(t, want, tr.Branches, "round %d", k)
		assert.Empty(t, tr.Messages)
	}
	assert.Equal(t, 40.0, spine.Turns[0].DelayMs)
	assert.Equal(t, 40.0, spine.Turns[1].DelayMs)
	assert.Zero(t, spine.Turns[2].DelayMs, "the last gate has no think time")
	plain, _ := d.Conversation(1)
	require.Len(t, plain.Turns, 2, "one round and its gate")
	assert.Equal(t, []Branch{{Node: a, JoinAt: 1}}, plain.Turns[0].Branches)
	assert.Nil(t, plain.Think)
	staged, _ := d.Conversation(2)
	require.Len(t, staged.Turns, 3)
	assert.Equal(t, 7.0, staged.Turns[0].DelayMs)
	assert.Equal(t, []Branch{{Node: b, JoinAt: 2}, {Node: c, JoinAt: 2}}, staged.Turns[1].Branches)
	assert.Equal(t, 4+1+3, Turns(d), "the requests of one pass over each tree: a round sends none")
}
