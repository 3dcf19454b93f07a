package dataset

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/aiperf-go/aiperf/internal/inputfile"
	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// TypeDAGJSONL is AIPerf's dag_jsonl: branching conversations, one a line,
// whose turns start other conversations of the file once they returned,
// as FORK children (continuing the parent's history, its live replies
// included) or SPAWN children (from an empty history, which the parent may
// wait for at a later turn). The file is read whole into memory
// (dagjsonlcheck.go checks the graph it draws).
const TypeDAGJSONL = "dag_jsonl"

// Bounds of a dag_jsonl file, which is held in memory: its size, and the
// conversations and turns it may hold (each costs its structures whatever
// its text holds). Variables for their tests.
var (
	dagMaxBytes int64 = 256 << 20 // held at about 12 times its size
	dagMaxConvs       = 1 << 21
	dagMaxTurns       = 1 << 22
)

// The keys of a dag_jsonl conversation and of its turns; the orchestrator
// keys, "orchestrator" first, are AIPerf's request-less fan-out drivers
// (dagorchestrator.go).
var (
	dagConvKeys         = []string{"session_id", "turns", "pre_session_spawns", "context_mode"}
	dagOrchestratorKeys = []string{"orchestrator", "spawns", "rounds", "think_time_ms", "think_time_sigma",
		"think_time_min_ms", "think_time_max_ms"}
	dagTurnKeys = []string{"messages", "model", "max_tokens", "tools", "extra", "forks", "spawns", "delay"}
)

// dagRef is a conversation's reference to a child: a fork or spawn of one
// of its turns, or a pre-session spawn (turn -1).
type dagRef struct {
	id     string // the child's session_id
	field  string // where it is written ("turns[0].forks[1]")
	turn   int
	fork   bool
	joinAt int
	to     int // the child's index in file order, once resolved
}

// dagConv is a conversation as read from its line, its branches by name.
type dagConv struct {
	Conversation
	line int
	refs []dagRef
	// system is the (turn, message) of each system message of a
	// DeltasWithoutResponses conversation, placed by dagjsonlcheck.go.
	system [][2]int
}

// dagSet is a dag_jsonl file read: its conversations, roots first.
type dagSet struct {
	nodes    []Conversation
	roots    int
	turns    int
	sampling string
}

// Len is the number of roots, which the sampler draws; Nodes every
// conversation of the file.
func (d *dagSet) Len() int   { return d.roots }
func (d *dagSet) Nodes() int { return len(d.nodes) }

// Conversation returns root i; its Turns are the caller's to change.
func (d *dagSet) Conversation(i int) (Conversation, error) {
	if i < 0 || i >= d.roots {
		return Conversation{}, fmt.Errorf("%s: root conversation %d out of range [0, %d)", TypeDAGJSONL, i, d.roots)
	}
	return d.Node(i)
}

// Node returns conversation i, roots first; its Turns are the caller's to
// change.
func (d *dagSet) Node(i int) (Conversation, error) {
	if i < 0 || i >= len(d.nodes) {
		return Conversation{}, fmt.Errorf("%s: conversation %d out of range [0, %d)", TypeDAGJSONL, i, len(d.nodes))
	}
	c := d.nodes[i]
	c.Turns = slices.Clone(c.Turns)
	return c, nil
}

// Schedule is nil (the turns have no timestamps), Sampling AIPerf's
// preference for the file (random) unless one is given, and Close has
// nothing to close (the file was read whole).
func (d *dagSet) Schedule() []Timed { return nil }
func (d *dagSet) Sampling() string  { return d.sampling }
func (d *dagSet) Close() error      { return nil }

// turnCount is the turns of every conversation of the file, roots and
// children: one pass over each tree sends each of its conversations once
// (a SPAWN child started by several parents counts once).
func (d *dagSet) turnCount() int { return d.turns }

// openDAGJSONL reads a dag_jsonl file whole, checks every line and then
// the graph its branches draw, and orders its conversations roots first.
func openDAGJSONL(ctx context.Context, tok tokenizer.Tokenizer, o Options) (Dataset, error) {
	if o.FixedSchedule {
		return nil, fmt.Errorf("%s dataset: a fixed schedule needs timestamps, and dag_jsonl turns have none: remove --fixed-schedule", TypeDAGJSONL)
	}
	convs, err := readDAG(ctx, o)
	if err == nil {
		err = checkDAG(ctx, o.InputFile, convs)
	}
	var d *dagSet
	if err == nil {
		d, err = buildDAG(ctx, tok, o, convs)
	}
	if err != nil {
		return nil, fmt.Errorf("%s dataset: %w", TypeDAGJSONL, err)
	}
	return d, nil
}

// dagReader collects the conversations of a file's lines.
type dagReader struct {
	o     Options
	ps    problems
	convs []*dagConv
	ids   map[string]int // session_id → its line
	turns int
	full  *LineError // a bound passed
}

// readDAG reads and checks every line of o.InputFile (problems listed
// with their line and field).
func readDAG(ctx context.Context, o Options) ([]*dagConv, error) {
	f, err := inputfile.Open(o.InputFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tooLarge := &LineError{Path: o.InputFile, Msg: fmt.Sprintf("more than %d MiB: dag_jsonl holds the whole file in memory: "+
		"split it (a conversation and the ones it starts must stay in one file)", dagMaxBytes>>20)}
	if st, err := f.Stat(); err == nil && st.Size() > dagMaxBytes {
		return nil, tooLarge
	}
	r := &dagReader{o: o, ps: problems{path: o.InputFile}, ids: map[string]int{}}
	lr := &io.LimitedReader{R: f, N: dagMaxBytes + 1}
	err = scanLines(ctx, lr, r.add)
	switch {
	case lr.N <= 0:
		return nil, tooLarge
	case err != nil && ctx.Err() != nil:
		return nil, fmt.Errorf("%s: %w", o.InputFile, err)
	case err != nil:
		return nil, fmt.Errorf("input file %s: %w", o.InputFile, err)
	case r.full != nil:
		return nil, r.full
	}
	if err := r.ps.err(); err != nil {
		return nil, err
	}
	if len(r.convs) == 0 {
		return nil, &LineError{Path: o.InputFile, Msg: "no conversations: the file is empty or holds only blank lines"}
	}
	return r.convs, nil
}

// add reads line no (at byte off); false stops the scan at a bound.
func (r *dagReader) add(line []byte, no int, off int64) bool {
	if p, bad := invalidUTF8(line); bad {
		r.ps.add(no, p)
		return true
	}
	c, ps := parseDAGLine(line, off, r.o)
	if c != nil && c.ID != "" {
		if at, dup := r.ids[c.ID]; dup {
			ps = append(ps, problemf("session_id", "duplicate session_id %s: line %d declares it already; give each conversation its own",
				brief(c.ID), at))
		} else {
			r.ids[c.ID] = no
		}
	}
	if ps != nil {
		r.ps.addAll(no, ps)
		return true
	}
	c.line = no
	r.convs = append(r.convs, c)
	r.turns += len(c.Turns)
	switch {
	case len(r.convs) > dagMaxConvs:
		r.full = &LineError{Path: r.o.InputFile, Line: no, Msg: fmt.Sprintf("more than %d conversations: more than dag_jsonl "+
			"holds in memory (split the file: a conversation and the ones it starts must stay in one file)", dagMaxConvs)}
	case r.turns > dagMaxTurns:
		r.full = &LineError{Path: r.o.InputFile, Line: no, Msg: fmt.Sprintf("more than %d turns: more than dag_jsonl "+
			"holds in memory (split the file: a conversation and the ones it starts must stay in one file)", dagMaxTurns)}
	}
	return r.full == nil
}

// parseDAGLine reads one conversation (AIPerf's DagConversation); off is
// its byte offset, which keys the output lengths drawn for its turns.
func parseDAGLine(line []byte, off int64, o Options) (*dagConv, []problem) {
	var top map[string]json.RawMessage
	if ps := decodeLine(line, &top); ps != nil {
		return nil, ps
	}
	ps := dagUnknownKeys("", top, slices.Concat(dagConvKeys, dagOrchestratorKeys), "a dag_jsonl conversation has "+
		"session_id, turns, pre_session_spawns and context_mode, and an orchestrator "+strings.Join(dagOrchestratorKeys, ", "))
	c := &dagConv{Conversation: Conversation{DAG: true, Mode: DeltasWithoutResponses}}
	id, p := dagID("session_id", top["session_id"])
	c.ID, ps = id, append(ps, p...)
	if truthy(top["orchestrator"]) {
		return c, append(ps, c.orchestrator(top)...)
	}
	for _, k := range dagOrchestratorKeys[1:] {
		if k == "spawns" && truthy(top[k]) || k != "spawns" && isSet(top[k]) {
			ps = append(ps, problemf(k, "applies to an orchestrator conversation (\"orchestrator\": true, no turns); "+
				"a conversation's turns start others with their own \"spawns\""))
		}
	}
	ps = append(ps, c.contextMode(top["context_mode"])...)
	ps = append(ps, c.preSpawns(top["pre_session_spawns"])...)
	turns, p := dagList("turns", top["turns"], "turn objects")
	switch ps = append(ps, p...); {
	case !isSet(top["turns"]):
		ps = append(ps, problemf("turns", "missing: expected a non-empty list of turn objects"))
	case p == nil && len(turns) == 0:
		ps = append(ps, problemf("turns", "expected a non-empty list of turn objects, got an empty list"))
	}
	for k, raw := range turns {
		if len(ps) >= maxProblems {
			break
		}
		ps = append(ps, c.turn(k, len(turns), raw, uint64(off)+uint64(k), o)...)
	}
	if ps != nil {
		return c, ps
	}
	return c, nil
}

// contextMode reads context_mode.
func (c *dagConv) contextMode(raw json.RawMessage) []problem {
	if !isSet(raw) {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil || s != DeltasWithoutResponses && s != MessageArrayWithResponses {
		return []problem{problemf("context_mode", "expected %q (the default: each request carries the history, live "+
			"replies included) or %q (each turn's messages sent as they are), got %s", DeltasWithoutResponses,
			MessageArrayWithResponses, dagGot(raw))}
	}
	c.Mode = s
	return nil
}

// preSpawns reads pre_session_spawns: SPAWN children started before turn 0.
func (c *dagConv) preSpawns(raw json.RawMessage) []problem {
	list, ps := dagList("pre_session_spawns", raw, "session ids")
	if len(list) == 0 {
		return ps
	}
	seen := map[string]bool{}
	for j, e := range list {
		f := fmt.Sprintf("pre_session_spawns[%d]", j)
		id, p := dagID(f, e)
		switch {
		case p != nil:
			ps = append(ps, p...)
		case seen[id]:
			ps = append(ps, problemf(f, "child %s is listed twice in pre_session_spawns: it would start twice", brief(id)))
		default:
			seen[id] = true
			c.refs = append(c.refs, dagRef{id: id, field: f, turn: -1})
		}
	}
	return ps
}

// turn reads turn k of n (AIPerf's DagTurn); row keys its drawn output
// length.
func (c *dagConv) turn(k, n int, raw json.RawMessage, row uint64, o Options) []problem {
	f := fmt.Sprintf("turns[%d]", k)
	var m map[string]json.RawMessage
	if jsonKindOf(raw) != "an object" || json.Unmarshal(raw, &m) != nil {
		return []problem{problemf(f, "expected a turn object, got %s", jsonKindOf(raw))}
	}
	ps := dagUnknownKeys(f, m, dagTurnKeys, "a turn has messages, model, max_tokens, tools, extra, forks, spawns and "+
		"delay; put other request fields in \"extra\"")
	t := Turn{MaxTokens: outputTokens(o, nil, row)}
	var p []problem
	t.Messages, p = c.messages(f, k, m["messages"])
	ps = append(ps, p...)
	if raw := m["model"]; isSet(raw) && json.Unmarshal(raw, &t.Model) != nil {
		ps = append(ps, problemf(f+".model", "expected a model name (a string), got %s", dagGot(raw)))
	}
	if raw := m["max_tokens"]; isSet(raw) {
		v, ok := dagInt(raw)
		if !ok || v < 1 {
			ps = append(ps, problemf(f+".max_tokens", "expected an integer ≥ 1, got %s", dagGot(raw)))
		}
		t.MaxTokens = int(v)
	}
	if raw := m["tools"]; isSet(raw) {
		tools, p := dagList(f+".tools", raw, "tool objects")
		for j, e := range tools {
			if jsonKindOf(e) != "an object" {
				p = append(p, problemf(fmt.Sprintf("%s.tools[%d]", f, j), "expected a tool object, got %s", jsonKindOf(e)))
				break
			}
		}
		t.Tools, ps = raw, append(ps, p...)
	}
	ps = append(ps, dagExtra(&t, f, m["extra"])...)
	ps = append(ps, dagDelay(&t, f, m["delay"], o)...)
	ps = append(ps, c.forks(f, k, n, m["forks"])...)
	ps = append(ps, c.spawns(f, k, n, m["spawns"])...)
	c.Turns = append(c.Turns, t)
	return ps
}

// messages reads a turn's messages: a non-empty list of objects with a
// string role, kept as written. A system message is placed: first in its
// turn's array when each turn is sent as it is, else by checkDAG.
func (c *dagConv) messages(f string, k int, raw json.RawMessage) (json.RawMessage, []problem) {
	f += ".messages"
	if !isSet(raw) {
		return nil, []problem{problemf(f, "missing: expected a non-empty list of messages, each an object with a string \"role\"")}
	}
	list, ps := dagList(f, raw, "message objects")
	if ps != nil {
		return nil, ps
	}
	if len(list) == 0 {
		return nil, []problem{problemf(f, "expected a non-empty list of messages, each an object with a string \"role\", got an empty list")}
	}
	for i, e := range list {
		mf := fmt.Sprintf("%s[%d]", f, i)
		var m struct {
			Role json.RawMessage `json:"role"`
		}
		var role string
		switch {
		case jsonKindOf(e) != "an object" || json.Unmarshal(e, &m) != nil:
			ps = append(ps, problemf(mf, "expected a message object with a string \"role\", got %s", jsonKindOf(e)))
		case !isSet(m.Role):
			ps = append(ps, problemf(mf+".role", "missing: each message needs a string role (system, user, assistant, tool)"))
		case json.Unmarshal(m.Role, &role) != nil:
			ps = append(ps, problemf(mf+".role", "expected a string, got %s", dagGot(m.Role)))
		case role != "system":
		case c.Mode == MessageArrayWithResponses && i > 0:
			ps = append(ps, problemf(mf, "a system message must come first in its turn's messages: context_mode %s sends "+
				"each turn's array as it is, and chat templates drop a system message after the first; move it to "+
				"messages[0] or author it as a user message", MessageArrayWithResponses))
		case c.Mode == DeltasWithoutResponses:
			c.system = append(c.system, [2]int{k, i})
		}
	}
	return raw, ps
}

// dagExtra reads a turn's extra: an object merged into the request body.
func dagExtra(t *Turn, f string, raw json.RawMessage) []problem {
	if !isSet(raw) {
		return nil
	}
	extra, err := decodeExtra(raw)
	if jsonKindOf(raw) != "an object" || err != nil {
		return []problem{problemf(f+".extra", "expected an object of request fields, got %s", jsonKindOf(raw))}
	}
	if k := promptKeyOf(extra); k != "" {
		return []problem{problemf(f+".extra."+k, "would replace the conversation the turn sends (its messages and "+
			"the history before them), which its forks would not continue: put the turn's messages in its \"messages\"")}
	}
	t.Extra = extra
	return nil
}

// dagDelay reads a turn's delay: ms to wait before it is sent (after the
// parent's turn returned, for a child's turn 0).
func dagDelay(t *Turn, f string, raw json.RawMessage, o Options) []problem {
	if !isSet(raw) {
		return nil
	}
	var delay float64
	if jsonKindOf(raw) != "a number" || json.Unmarshal(raw, &delay) != nil {
		return []problem{problemf(f+".delay", "expected a number of milliseconds ≥ 0, got %s", dagGot(raw))}
	}
	if ps := checkDelay(f+".delay", &delay); ps != nil {
		return ps
	}
	timing(o, t, nil, &delay)
	return nil
}

// dagUnknownKeys reports each key of object m (at field f) that is not
// one of allowed, in order, saying what the object has.
func dagUnknownKeys(f string, m map[string]json.RawMessage, allowed []string, has string) []problem {
	var ps []problem
	for _, key := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(allowed, key) {
			ps = append(ps, problemf(f, "unknown key %q: %s", key, has))
		}
	}
	return ps
}

// dagList decodes a list field (nil when absent or null).
func dagList(f string, raw json.RawMessage, what string) ([]json.RawMessage, []problem) {
	if !isSet(raw) {
		return nil, nil
	}
	var list []json.RawMessage
	if jsonKindOf(raw) != "a list" || json.Unmarshal(raw, &list) != nil {
		return nil, []problem{problemf(f, "expected a list of %s, got %s", what, jsonKindOf(raw))}
	}
	return list, nil
}

// dagID decodes a session id: a non-empty string.
func dagID(f string, raw json.RawMessage) (string, []problem) {
	var s string
	switch {
	case !isSet(raw):
		return "", []problem{problemf(f, "missing: expected a session id (a non-empty string)")}
	case json.Unmarshal(raw, &s) != nil:
		return "", []problem{problemf(f, "expected a session id (a non-empty string), got %s", dagGot(raw))}
	case s == "":
		return "", []problem{problemf(f, "expected a session id (a non-empty string), got an empty string")}
	}
	return s, nil
}
