package bench

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/aiperf-go/aiperf/internal/dataset"
	"github.com/aiperf-go/aiperf/internal/load"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// dagSession is a session of a dag_jsonl conversation, whose turns start
// other conversations' sessions (load.Brancher): AIPerf's FORK children
// from the history so far, its live replies included, and SPAWN children
// from nothing. A branch is sent to its parent's URL with its parent's
// model (the server that holds the parent's prefix), unless its turns
// name their own model.
type dagSession struct {
	*session
	// depth is AIPerf's agent_depth: 0 for a root, its parent's + 1 for a
	// branch; parent is the parent's correlation id ("" for a root and a
	// pre-session spawn).
	depth  int
	parent string
	// replies is the client count of the live replies in the history, for
	// a fork's input length, counted up to the last turn that forks
	// (lastFork, -1 for none, once forksKnown).
	replies    int
	lastFork   int
	forksKnown bool
	// draws are an orchestrator session's think times (nil until drawn).
	draws *rand.Rand
}

// Silent reports that turn i is an orchestrator's round, which sends
// nothing. A root orchestrator is placed (its URL and model, which its
// branches take) as its session starts, by the run's count of them.
func (d *dagSession) Silent(i int) bool {
	if !d.loaded {
		d.load()
	}
	if d.err != nil || !d.c.Turns[i].NoRequest {
		return false
	}
	if !d.placed {
		n := int(d.src.orchestrators.Add(1) - 1)
		d.url, d.model, d.placed = n%len(d.src.urls), d.src.modelOf(n), true
	}
	return true
}

// Due is the turn's delay; an orchestrator's round with a think-time
// distribution draws it, once per session and round, from a stream of
// --random-seed's (the set of draws is reproducible, not which session
// gets which), at most a day.
func (d *dagSession) Due(i int) (time.Duration, int64, bool) {
	delay, at, abs := d.session.Due(i)
	th := d.c.Think
	if th == nil || abs || d.err != nil || d.c.Turns[i].DelayMs == 0 { // the last gate has no think time
		return delay, at, abs
	}
	if d.draws == nil {
		d.draws = rand.New(rand.NewPCG(uint64(d.src.p.RandomSeed), thinkSalt^uint64(d.src.thinks.Add(1))))
	}
	ms := d.c.Turns[i].DelayMs * math.Exp(th.Sigma*d.draws.NormFloat64())
	if th.MinMs > 0 {
		ms = max(ms, th.MinMs)
	}
	if th.MaxMs > 0 {
		ms = min(ms, th.MaxMs)
	}
	ms = min(ms, plan.MaxDelayMs) // sigma ≤ 10 may still draw past any duration
	return time.Duration(ms * float64(time.Millisecond)), 0, false
}

// thinkSalt keeps the think-time draws apart from the other draws of the
// seed.
const thinkSalt = 0x7468696e6b // "think"

// Send sends turn i and marks its record as a DAG request.
func (d *dagSession) Send(ctx context.Context, i int, c load.Credit) metrics.Record {
	rec := d.session.Send(ctx, i, c)
	rec.DAG, rec.AgentDepth, rec.ParentCorrelationID = true, d.depth, d.parent
	return rec
}

// Branches are the sessions turn i starts (i = -1: the pre-session spawns),
// whether it succeeded or not, as AIPerf's: a failed turn's forks inherit
// its history without a reply.
func (d *dagSession) Branches(i int, rec metrics.Record) []load.Branch {
	if !d.loaded { // a root is read when its turn 0 is sent: its pre-session spawns are asked for first
		d.load()
	}
	if d.err != nil {
		return nil
	}
	if i < 0 {
		out := make([]load.Branch, 0, len(d.c.PreSpawns))
		for _, n := range d.c.PreSpawns {
			out = append(out, load.Branch{Session: d.child(n, false, "")})
		}
		return out
	}
	if !d.forksKnown {
		d.lastFork, d.forksKnown = lastFork(&d.c), true
	}
	if i <= d.lastFork && rec.OK() && d.deltas != nil && strings.TrimSpace(d.reply) != "" {
		d.replies += d.src.fin.tok.Count(d.reply)
	}
	bs := d.c.Turns[i].Branches
	out := make([]load.Branch, 0, len(bs))
	for _, b := range bs {
		out = append(out, load.Branch{Session: d.child(b.Node, b.Fork, d.id), JoinAt: b.JoinAt})
	}
	return out
}

// child is the session of node n started by d: a fork with d's history so
// far, else from nothing; parent is its parent's correlation id.
func (d *dagSession) child(n int, fork bool, parent string) *dagSession {
	s := &session{src: d.src, conv: n, url: d.url, model: d.model, placed: true, loaded: true}
	s.c, s.err = d.src.tree.Node(n)
	if s.err == nil && !fork && d.src.systemPrompt != "" { // a fork's history holds it already
		s.err = addSystemPrompt(&s.c, d.src.systemPrompt, d.src.system)
	}
	if fork && d.deltas != nil {
		s.deltas = &deltaHistory{msgs: slices.Clone(d.deltas.msgs), tools: d.deltas.tools}
		s.sent = d.sent + d.replies
	}
	return &dagSession{session: s, depth: d.depth + 1, parent: parent}
}

// lastFork is the last turn of c that forks, -1 for none.
func lastFork(c *dataset.Conversation) int {
	for i := len(c.Turns) - 1; i >= 0; i-- {
		if slices.ContainsFunc(c.Turns[i].Branches, func(b dataset.Branch) bool { return b.Fork }) {
			return i
		}
	}
	return -1
}
