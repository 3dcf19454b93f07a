package dataset

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// The trees of a dag_jsonl file, once its lines and graph are checked:
// its conversations ordered roots first, what one pass over each root's
// tree sends, and the input tokens of every turn.

// buildDAG orders convs (checked) roots first, in file order, then the
// children in file order, and resolves their branches to node indices.
func buildDAG(ctx context.Context, tok tokenizer.Tokenizer, o Options, convs []*dagConv) (*dagSet, error) {
	child := make([]bool, len(convs))
	for _, c := range convs {
		for _, ref := range c.refs {
			child[ref.to] = true
		}
	}
	node := make([]int, len(convs))
	d := &dagSet{nodes: make([]Conversation, 0, len(convs)), sampling: samplingOr(o, SamplingRandom)}
	for _, roots := range []bool{true, false} {
		for i, c := range convs {
			if child[i] != roots {
				node[i] = len(d.nodes)
				d.nodes = append(d.nodes, c.Conversation)
				d.turns += len(c.Turns)
			}
		}
		if roots {
			d.roots = len(d.nodes)
		}
	}
	if d.roots == 0 {
		return nil, &LineError{Path: o.InputFile, Msg: "no root conversation: every conversation is started by another " +
			"(forks, spawns or pre_session_spawns), so nothing starts the trees; remove a reference"}
	}
	for i, c := range convs {
		n := &d.nodes[node[i]]
		for _, ref := range c.refs {
			if ref.turn < 0 {
				n.PreSpawns = append(n.PreSpawns, node[ref.to])
				continue
			}
			t := &n.Turns[ref.turn]
			t.Branches = append(t.Branches, Branch{Node: node[ref.to], Fork: ref.fork, JoinAt: ref.joinAt})
		}
	}
	if err := d.expand(o.InputFile, convs, node); err != nil {
		return nil, err
	}
	if err := countDAGTokens(ctx, tok, d.nodes); err != nil {
		return nil, fmt.Errorf("%s: %w", o.InputFile, err)
	}
	return d, nil
}

// dagMaxTree bounds the sessions one root's tree starts: a conversation
// spawned by several turns (or forked and spawned by one) runs once for
// each, so a few lines can draw a tree of billions.
var dagMaxTree = 100_000

// expand counts what one pass over each root's tree sends, a branch once
// per reference to it (computed children first, over the acyclic graph),
// refusing a tree past dagMaxTree sessions; d.turns becomes the turns of
// every root's tree.
func (d *dagSet) expand(path string, convs []*dagConv, node []int) error {
	sessions, turns := make([]int, len(d.nodes)), make([]int, len(d.nodes))
	for _, i := range dagPostOrder(d) {
		n := &d.nodes[i]
		sessions[i] = 1
		for t := range n.Turns {
			if !n.Turns[t].NoRequest { // an orchestrator's rounds send nothing
				turns[i]++
			}
		}
		add := func(child int) {
			sessions[i] = min(sessions[i]+sessions[child], dagMaxTree+1)
			turns[i] = min(turns[i]+turns[child], 1<<40)
		}
		for _, c := range n.PreSpawns {
			add(c)
		}
		for t := range n.Turns {
			for _, b := range n.Turns[t].Branches {
				add(b.Node)
			}
		}
	}
	line := make([]int, len(d.nodes))
	for i, c := range convs {
		line[node[i]] = c.line
	}
	d.turns = 0
	for r := range d.roots {
		if sessions[r] > dagMaxTree {
			return &LineError{Path: path, Line: line[r], Field: "session_id", Msg: fmt.Sprintf("session %s starts a tree of "+
				"more than %d sessions (a conversation spawned or forked by several turns runs once for each): "+
				"split the tree", brief(d.nodes[r].ID), dagMaxTree)}
		}
		d.turns += turns[r]
	}
	return nil
}

// dagPostOrder lists d's nodes children first (the graph is acyclic),
// with an explicit stack: a long chain costs no goroutine stack.
func dagPostOrder(d *dagSet) []int {
	kids := func(i int) []int {
		n := &d.nodes[i]
		out := slices.Clone(n.PreSpawns)
		for t := range n.Turns {
			for _, b := range n.Turns[t].Branches {
				out = append(out, b.Node)
			}
		}
		return out
	}
	order := make([]int, 0, len(d.nodes))
	seen := make([]bool, len(d.nodes))
	type frame struct {
		node int
		next []int
	}
	for root := range d.nodes {
		if seen[root] {
			continue
		}
		seen[root] = true
		stack := []frame{{root, kids(root)}}
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if len(top.next) == 0 {
				order = append(order, top.node)
				stack = stack[:len(stack)-1]
				continue
			}
			c := top.next[0]
			top.next = top.next[1:]
			if !seen[c] {
				seen[c] = true
				stack = append(stack, frame{c, kids(c)})
			}
		}
	}
	return order
}

// countDAGTokens counts the input tokens of every turn, on every CPU.
func countDAGTokens(ctx context.Context, tok tokenizer.Tokenizer, nodes []Conversation) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(nodes) && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				for k := range nodes[i].Turns {
					t := &nodes[i].Turns[k]
					t.InputTokens = messagesTokens(tok, t.Messages)
				}
			}
		})
	}
	wg.Wait()
	return ctx.Err()
}
