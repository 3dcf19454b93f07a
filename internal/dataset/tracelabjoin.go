package dataset

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
)

// tlWindow is a spawn window of a parent session: an Agent/Task call
// (claude) or the span from its earliest spawn_agent to its latest
// wait_agent result (codex), in s since the epoch.
type tlWindow struct {
	start, end float64
	durMs      int64
	parent     int32
	codex      bool
}

// tlKid is a child session found in one of its parent's windows.
type tlKid struct {
	sess int32
	w    tlWindow
}

// tlJoinStats counts what the subagent join did, for its note.
type tlJoinStats struct {
	windows, windowsClaude, windowsCodex, windowsMatched int
	matched, matchedClaude, matchedCodex, ambiguous      int
	grandchildren                                        int
}

// summary is AIPerf's summary of a join.
func (s tlJoinStats) summary() string {
	barren := s.windows - s.windowsMatched
	pct := ""
	if s.windows > 0 {
		pct = fmt.Sprintf(" (%.1f%%)", float64(barren)/float64(s.windows)*100)
	}
	return fmt.Sprintf("%d spawn windows (%d claude, %d codex), %d children matched (%d claude, %d codex), "+
		"%d ambiguous (tightest window kept), %d windows matched no child%s, %d grandchildren kept as standalone traces",
		s.windows, s.windowsClaude, s.windowsCodex, s.matched, s.matchedClaude, s.matchedCodex, s.ambiguous, barren, pct, s.grandchildren)
}

// tlIdent is a session's identity for the join: its first row's user and
// project (absent is a value of its own, as AIPerf's None).
type tlIdent struct {
	user, project       string
	hasUser, hasProject bool
}

func identOf(s *tlSession) tlIdent {
	return tlIdent{deref(s.user), deref(s.project), s.user != nil, s.project != nil}
}

// joinIndex recovers subagent links by timing containment, as AIPerf does
// (TraceLab records no parent link): a session whose whole span lies
// inside a window of another session of the same user and project is that
// window's child; of several windows the tightest wins (then the earliest,
// then the parent's id), and the ambiguity is counted. It returns each
// child's window (its parent in it).
//
// Each identity's windows are sorted by start, so a session looks only at
// those that start in [its last stamp − the identity's longest window, its
// first stamp]: the join is about linear in the corpus, not quadratic, for
// windows of minutes among weeks. It stops, with ctx's error, when ctx is
// done.
func (c *tlCorpus) joinIndex(ctx context.Context, join traceLabJoin) (map[int32]tlWindow, tlJoinStats, error) {
	var stats tlJoinStats
	byIdent := map[tlIdent][]tlWindow{}
	for i := range c.sessions {
		s := &c.sessions[i]
		id := tlIdent{}
		if !math.IsNaN(s.lo) { // a session without a time stamp has no identity of its own (AIPerf's (None, None))
			id = identOf(s)
		}
		var ws []tlWindow
		switch {
		case s.codex && join.codex && !math.IsNaN(s.spawn) && !math.IsNaN(s.wait) && s.wait > s.spawn:
			ws = []tlWindow{{start: s.spawn, end: s.wait, durMs: int64((s.wait - s.spawn) * 1000), parent: int32(i), codex: true}}
			stats.windowsCodex++
		case !s.codex:
			ws = s.windows
			stats.windowsClaude += len(ws)
		}
		byIdent[id] = append(byIdent[id], ws...)
	}
	stats.windows = stats.windowsClaude + stats.windowsCodex
	longest := map[tlIdent]float64{}
	for id, ws := range byIdent {
		slices.SortFunc(ws, func(a, b tlWindow) int { return cmp.Compare(a.start, b.start) })
		for _, w := range ws {
			longest[id] = max(longest[id], w.end-w.start)
		}
	}
	links := map[int32]tlWindow{}
	hit := map[[2]float64]map[int32]bool{}
	for i := range c.sessions {
		if i%4096 == 0 && ctx.Err() != nil {
			return nil, stats, ctx.Err()
		}
		s := &c.sessions[i]
		if math.IsNaN(s.lo) {
			continue
		}
		id := identOf(s)
		ws := byIdent[id]
		from, _ := slices.BinarySearchFunc(ws, s.hi-longest[id], func(w tlWindow, t float64) int { return cmp.Compare(w.start, t) })
		best, n := tlWindow{}, 0
		for _, w := range ws[from:] {
			if w.start > s.lo {
				break // sorted by start: none later contains s
			}
			if w.parent == int32(i) || s.hi > w.end {
				continue
			}
			if n++; n == 1 || c.tighter(w, best) {
				best = w
			}
		}
		if n == 0 {
			continue
		}
		if n > 1 {
			stats.ambiguous++
		}
		links[int32(i)] = best
		key := [2]float64{best.start, best.end}
		if hit[key] == nil {
			hit[key] = map[int32]bool{}
		}
		if !hit[key][best.parent] {
			hit[key][best.parent] = true
			stats.windowsMatched++
		}
		stats.matched++
		if best.codex {
			stats.matchedCodex++
		} else {
			stats.matchedClaude++
		}
	}
	return links, stats, nil
}

// tighter orders windows as AIPerf picks among them: shorter first, then
// earlier, then by the parent's session id.
func (c *tlCorpus) tighter(a, b tlWindow) bool {
	return cmp.Or(cmp.Compare(a.end-a.start, b.end-b.start), cmp.Compare(a.start, b.start),
		cmp.Compare(c.sessions[a.parent].id, c.sessions[b.parent].id)) < 0
}

// group buckets the linked children under their parents, in session
// order. The trace schema nests one level: a child whose parent is itself
// a child (a grandchild) is not nested, and becomes a trace of its own.
func (c *tlCorpus) group(links map[int32]tlWindow, stats *tlJoinStats) map[int32][]tlKid {
	out := map[int32][]tlKid{}
	for i := range c.sessions {
		w, ok := links[int32(i)]
		if !ok {
			continue
		}
		if _, parentIsChild := links[w.parent]; parentIsChild {
			stats.grandchildren++
			continue
		}
		out[w.parent] = append(out[w.parent], tlKid{sess: int32(i), w: w})
	}
	return out
}
