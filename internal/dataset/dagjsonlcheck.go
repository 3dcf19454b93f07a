package dataset

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// The branches of a dag_jsonl file: each turn's forks and spawns as read
// from its line, then the graph they draw, checked whole (every child
// declared, a FORK child of one parent, no cycle) before the conversations
// are ordered roots first.

// forks reads turn k's forks (of n turns): a bare session id, or
// {"child", "background"}. A foreground fork ends its parent, so only the
// last turn may hold one.
func (c *dagConv) forks(f string, k, n int, raw json.RawMessage) []problem {
	list, ps := dagList(f+".forks", raw, `session ids or {"child": …, "background": …} objects`)
	if len(list) == 0 {
		return ps
	}
	seen, foreground := map[string]bool{}, false
	for j, e := range list {
		ef := fmt.Sprintf("%s.forks[%d]", f, j)
		child, background, p := dagForkEntry(ef, e)
		switch {
		case p != nil:
			ps = append(ps, p...)
			continue
		case seen[child]:
			ps = append(ps, problemf(ef, "child %s is listed twice in this turn's forks: it would start twice", brief(child)))
			continue
		case !background && k < n-1 && !foreground:
			foreground = true
			ps = append(ps, problemf(ef, "session %s turn %d has foreground FORK branches but is not the last turn; use "+
				`{"child": ..., "background": true} to keep the parent running, or move the fork to the last turn`, brief(c.ID), k))
		}
		seen[child] = true
		c.refs = append(c.refs, dagRef{id: child, field: ef, turn: k, fork: true})
	}
	return ps
}

// dagForkEntry reads one entry of forks.
func dagForkEntry(f string, raw json.RawMessage) (child string, background bool, ps []problem) {
	if jsonKindOf(raw) == "a string" {
		child, ps = dagID(f, raw)
		return child, false, ps
	}
	var m map[string]json.RawMessage
	if jsonKindOf(raw) != "an object" || json.Unmarshal(raw, &m) != nil {
		return "", false, []problem{problemf(f, `expected a session id or a {"child": …, "background": …} object, got %s`, jsonKindOf(raw))}
	}
	ps = dagUnknownKeys(f, m, []string{"child", "background"}, `a fork is a session id or {"child": …, "background": …}`)
	child, p := dagID(f+".child", m["child"])
	ps = append(ps, p...)
	if raw := m["background"]; isSet(raw) && json.Unmarshal(raw, &background) != nil {
		ps = append(ps, problemf(f+".background", "expected true or false, got %s", dagGot(raw)))
	}
	return child, background, ps
}

// spawns reads turn k's spawns (of n turns): a bare session id, joined at
// the next turn (none after the last), or {"children", "join_at"}.
func (c *dagConv) spawns(f string, k, n int, raw json.RawMessage) []problem {
	list, ps := dagList(f+".spawns", raw, `session ids or {"children": […], "join_at": …} objects`)
	if len(list) == 0 {
		return ps
	}
	seen := map[string]bool{}
	next := 0 // the bare form's join: the next turn, none after the last
	if k+1 < n {
		next = k + 1
	}
	for j, e := range list {
		ef := fmt.Sprintf("%s.spawns[%d]", f, j)
		if jsonKindOf(e) == "a string" {
			child, p := dagID(ef, e)
			ps = append(ps, p...)
			ps = append(ps, c.spawn(seen, ef, child, k, next, p == nil)...)
			continue
		}
		children, join, p := dagSpawnGroup(ef, e, k, n)
		ps = append(ps, p...)
		if join < 0 {
			join = next
		}
		for i, child := range children {
			ps = append(ps, c.spawn(seen, fmt.Sprintf("%s.children[%d]", ef, i), child, k, join, p == nil)...)
		}
	}
	return ps
}

// spawn adds a SPAWN child of turn k joined at turn join (0: none), once.
func (c *dagConv) spawn(seen map[string]bool, f, child string, k, join int, ok bool) []problem {
	switch {
	case !ok:
		return nil
	case seen[child]:
		return []problem{problemf(f, "child %s is listed twice in this turn's spawns: it would start twice", brief(child))}
	}
	seen[child] = true
	c.refs = append(c.refs, dagRef{id: child, field: f, turn: k, joinAt: join})
	return nil
}

// dagSpawnGroup reads a {"children", "join_at"} entry of turn k's spawns
// (of n turns); join is -1 when join_at is not given.
func dagSpawnGroup(f string, raw json.RawMessage, k, n int) (children []string, join int, ps []problem) {
	var m map[string]json.RawMessage
	if jsonKindOf(raw) != "an object" || json.Unmarshal(raw, &m) != nil {
		return nil, -1, []problem{problemf(f, `expected a session id or a {"children": […], "join_at": …} object, got %s`, jsonKindOf(raw))}
	}
	ps = dagUnknownKeys(f, m, []string{"children", "join_at"}, `a spawn is a session id or {"children": […], "join_at": …}`)
	list, p := dagList(f+".children", m["children"], "session ids")
	if ps = append(ps, p...); p == nil && len(list) == 0 {
		ps = append(ps, problemf(f+".children", "expected a non-empty list of session ids"))
	}
	for i, e := range list {
		id, p := dagID(fmt.Sprintf("%s.children[%d]", f, i), e)
		children, ps = append(children, id), append(ps, p...)
	}
	join = -1
	if raw := m["join_at"]; isSet(raw) {
		v, ok := dagInt(raw)
		switch {
		case !ok:
			ps = append(ps, problemf(f+".join_at", "expected the index of a later turn of this conversation (an integer), got %s", dagGot(raw)))
		case v <= int64(k):
			ps = append(ps, problemf(f+".join_at", "join_at=%d must be strictly greater than the spawning turn index %d", v, k))
		case v >= int64(n):
			ps = append(ps, problemf(f+".join_at", "join_at=%d is out of range (the conversation has %d turns)", v, n))
		default:
			join = int(v)
		}
	}
	return children, join, ps
}

// dagParent is where a FORK child is forked.
type dagParent struct{ conv, turn int }

// checkDAG checks the graph of convs: every child declared, a FORK child
// forked once and never pre-spawned, system messages where the history
// starts, no cycle. It resolves each reference's target.
func checkDAG(ctx context.Context, path string, convs []*dagConv) error {
	ix := make(map[string]int, len(convs))
	for i, c := range convs {
		ix[c.ID] = i
	}
	ps := problems{path: path}
	forked := map[int]dagParent{}
	for i, c := range convs {
		if i%4096 == 0 && ctx.Err() != nil {
			return fmt.Errorf("%s: %w", path, ctx.Err())
		}
		for r := range c.refs {
			ref := &c.refs[r]
			to, ok := ix[ref.id]
			if !ok {
				ps.add(c.line, problemf(ref.field, "branch target %s is not declared: no line of the file has that "+
					"session_id (known: %s)", brief(ref.id), dagKnown(convs)))
				continue
			}
			ref.to = to
			if p, twice := forked[to]; ref.fork && twice {
				ps.add(c.line, problemf(ref.field, "session %s is forked by both %s turn %d (line %d) and %s turn %d: "+
					"FORK children need one parent, whose history they continue; spawn it instead, or copy it under "+
					"another session_id", brief(ref.id), brief(convs[p.conv].ID), p.turn, convs[p.conv].line, brief(c.ID), ref.turn))
			} else if ref.fork {
				forked[to] = dagParent{i, ref.turn}
			}
		}
	}
	if err := ps.err(); err != nil {
		return err
	}
	checkDAGForked(&ps, convs, forked)
	if err := ps.err(); err != nil {
		return err
	}
	return dagCycle(ctx, path, convs)
}

// checkDAGForked checks what a FORK child may not be: pre-spawned (which
// starts it from nothing), or holding a system message (which only a
// root's or a spawned conversation's turn 0 may hold, where the history
// starts).
func checkDAGForked(ps *problems, convs []*dagConv, forked map[int]dagParent) {
	for i, c := range convs {
		for _, ref := range c.refs {
			if p, ok := forked[ref.to]; ok && ref.turn < 0 {
				ps.add(c.line, problemf(ref.field, "session %s is referenced by %s pre_session_spawns but is also a FORK "+
					"target (of %s turn %d, line %d): pre-session children must be SPAWN-mode, started from an empty history",
					brief(ref.id), brief(c.ID), brief(convs[p.conv].ID), p.turn, convs[p.conv].line))
			}
		}
		if c.Mode == MessageArrayWithResponses {
			for _, ref := range c.refs {
				if ref.fork {
					ps.add(c.line, problemf(ref.field, "session %s forks %s, but its context_mode %s keeps no history for a "+
						"fork to continue: spawn it instead, or drop context_mode", brief(c.ID), brief(ref.id), MessageArrayWithResponses))
				}
			}
		}
		_, fork := forked[i]
		if fork && c.Mode == MessageArrayWithResponses {
			p := forked[i]
			ps.add(c.line, problemf("context_mode", "session %s is forked (by %s turn %d, line %d) and would drop the history "+
				"it continues: a fork sends its parent's conversation first; drop context_mode, or spawn it",
				brief(c.ID), brief(convs[p.conv].ID), p.turn, convs[p.conv].line))
		}
		for _, at := range c.system {
			if at[0] > 0 || fork {
				ps.add(c.line, problemf(fmt.Sprintf("turns[%d].messages[%d]", at[0], at[1]), "session %s turn %d: only a "+
					"root's or a spawned conversation's turn 0 may hold a system message: a forked conversation inherits "+
					"its parent's, and a later system message is dropped by chat templates; author it as a user message",
					brief(c.ID), at[0]))
			}
		}
	}
}

// dagKnown lists the first session ids of the file, for an error.
func dagKnown(convs []*dagConv) string {
	const shown = 10
	var ids []string
	for _, c := range convs[:min(shown, len(convs))] {
		ids = append(ids, brief(c.ID))
	}
	if len(convs) > shown {
		ids = append(ids, fmt.Sprintf("and %d more", len(convs)-shown))
	}
	return strings.Join(ids, ", ")
}

// dagCycle finds a cycle of references with an iterative depth-first
// search (a long chain costs no stack), in time linear in conversations
// and references.
func dagCycle(ctx context.Context, path string, convs []*dagConv) error {
	const (
		white = iota
		grey
		black
	)
	state, pos := make([]uint8, len(convs)), make([]int, len(convs))
	type frame struct{ node, next int }
	var stack []frame
	steps := 0
	for s := range convs {
		if state[s] != white {
			continue
		}
		state[s], pos[s], stack = grey, 0, append(stack[:0], frame{s, 0})
		for len(stack) > 0 {
			if steps++; steps%4096 == 0 && ctx.Err() != nil {
				return fmt.Errorf("%s: %w", path, ctx.Err())
			}
			top := &stack[len(stack)-1]
			c := convs[top.node]
			if top.next == len(c.refs) {
				state[top.node], stack = black, stack[:len(stack)-1]
				continue
			}
			ref := c.refs[top.next]
			top.next++
			switch state[ref.to] {
			case grey:
				ids := make([]int, 0, len(stack)-pos[ref.to]+1)
				for _, f := range stack[pos[ref.to]:] {
					ids = append(ids, f.node)
				}
				return &LineError{Path: path, Line: c.line, Field: ref.field, Msg: "cycle detected: " +
					dagPath(convs, append(ids, ref.to)) + ": a conversation cannot start itself, directly or through " +
					"the conversations it starts; remove one of these references"}
			case white:
				state[ref.to], pos[ref.to] = grey, len(stack)
				stack = append(stack, frame{ref.to, 0})
			}
		}
	}
	return nil
}

// dagPath writes a cycle's session ids joined by arrows, the middle of a
// long one elided.
func dagPath(convs []*dagConv, ids []int) string {
	var names []string
	for i, id := range ids {
		if len(ids) > 9 && i == 4 {
			names = append(names, fmt.Sprintf("… (%d more)", len(ids)-8))
		}
		if len(ids) <= 9 || i < 4 || i >= len(ids)-4 {
			names = append(names, brief(convs[id].ID))
		}
	}
	return strings.Join(names, " -> ")
}

// dagInt decodes an integer written as one (not a boolean, not 1.0).
func dagInt(raw json.RawMessage) (int64, bool) {
	if jsonKindOf(raw) != "a number" {
		return 0, false
	}
	v, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
	return v, err == nil
}

// dagGot names a JSON value for an error: as written when short.
func dagGot(raw json.RawMessage) string {
	if s := bytes.TrimSpace(raw); len(s) <= 24 {
		return string(s)
	}
	return jsonKindOf(raw)
}

// isDAGLine reports whether a first record that no other type accepts has
// the shape of a dag_jsonl conversation, as AIPerf's loader probes one: a
// string session_id and a non-empty list of turn objects, one of which has
// a messages list, forks or spawns.
func isDAGLine(line []byte) bool {
	var rec struct {
		SessionID json.RawMessage              `json:"session_id"`
		Turns     []map[string]json.RawMessage `json:"turns"`
	}
	if json.Unmarshal(line, &rec) != nil || jsonKindOf(rec.SessionID) != "a string" {
		return false
	}
	for _, t := range rec.Turns {
		_, forks := t["forks"]
		_, spawns := t["spawns"]
		if jsonKindOf(t["messages"]) == "a list" || forks || spawns {
			return true
		}
	}
	return false
}
