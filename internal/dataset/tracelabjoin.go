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
// An identity's windows are kept by duration class (a power of two), each
// class sorted by start, so a session looks only at the windows of each
// class that start in [its last stamp − the class's longest window, its
// first stamp]: about linear in the corpus, not quadratic, even beside a
// window as long as the corpus. It stops, with ctx's error, when ctx is
// done.
func (c *tlCorpus) joinIndex(ctx context.Context, join traceLabJoin) (map[int32]tlWindow, tlJoinStats, error) {
	var stats tlJoinStats
	ix := tlWindowIndex{classes: map[tlIdent][]int{}, windows: map[tlClassKey][]tlWindow{}, longest: map[tlClassKey]float64{}}
	for i := range c.sessions {
		s := &c.sessions[i]
		id := tlIdent{}
		if !math.IsNaN(s.lo) { // a session without a time stamp has no identity of its own (AIPerf's (None, None))
			id = identOf(s)
		}
		switch {
		case s.codex && join.codex && !math.IsNaN(s.spawn) && !math.IsNaN(s.wait) && s.wait > s.spawn:
			ix.add(id, tlWindow{start: s.spawn, end: s.wait, durMs: int64((s.wait - s.spawn) * 1000), parent: int32(i), codex: true})
			stats.windowsCodex++
		case !s.codex:
			for _, w := range s.windows {
				ix.add(id, w)
			}
			stats.windowsClaude += len(s.windows)
		}
	}
	stats.windows = stats.windowsClaude + stats.windowsCodex
	for _, ws := range ix.windows {
		slices.SortFunc(ws, func(a, b tlWindow) int { return cmp.Compare(a.start, b.start) })
	}
	links := map[int32]tlWindow{}
	hit := map[[2]float64]map[int32]bool{}
	visited, check := 0, 0
	for i := range c.sessions {
		if visited >= check {
			if err := ctx.Err(); err != nil {
				return nil, stats, err
			}
			check = visited + 1<<16
		}
		s := &c.sessions[i]
		if math.IsNaN(s.lo) {
			continue
		}
		best, n := tlWindow{}, 0
		id := identOf(s)
		for _, class := range ix.classes[id] {
			k := tlClassKey{id, class}
			ws := ix.windows[k]
			from, _ := slices.BinarySearchFunc(ws, s.hi-ix.longest[k], func(w tlWindow, t float64) int { return cmp.Compare(w.start, t) })
			for _, w := range ws[from:] {
				if visited++; w.start > s.lo {
					break // sorted by start: none later contains s
				}
				if w.parent == int32(i) || s.hi > w.end {
					continue
				}
				if n++; n == 1 || c.tighter(w, best) {
					best = w
				}
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

// tlWindowIndex is the spawn windows of each identity by duration class.
type tlWindowIndex struct {
	classes map[tlIdent][]int // the identity's classes, in order of first window
	windows map[tlClassKey][]tlWindow
	longest map[tlClassKey]float64 // the class's longest window (s)
}

type tlClassKey struct {
	id    tlIdent
	class int // math.Ilogb of the duration (s)
}

func (ix *tlWindowIndex) add(id tlIdent, w tlWindow) {
	k := tlClassKey{id, math.Ilogb(w.end - w.start)}
	if _, ok := ix.windows[k]; !ok {
		ix.classes[id] = append(ix.classes[id], k.class)
	}
	ix.windows[k] = append(ix.windows[k], w)
	ix.longest[k] = max(ix.longest[k], w.end-w.start)
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
