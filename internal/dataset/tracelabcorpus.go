package dataset

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"time"
)

// tlCorpus is a TraceLab corpus read: its sessions in order of their first
// rows, each its dated rounds and what the subagent join needs of it.
type tlCorpus struct {
	path     string
	sessions []tlSession
	byID     map[string]int32
	models   []string
	modelIx  map[string]int32
	strs     map[string]string // user and project names, kept once each
	t0       float64           // the earliest submit of a round (s since the epoch)
}

// tlSession is one session_id's rows.
type tlSession struct {
	id            string
	line          int // its first row's
	user, project *string
	codex         bool      // its first row's provider is codex
	rounds        []tlRound // dated rounds, in replay order once finished
	lo, hi        float64   // the span of all its time stamps (NaN: none)
	windows       []tlWindow
	spawn, wait   float64 // codex: earliest spawn_agent, latest wait_agent result
	tools         int
}

func newTLCorpus(path string) *tlCorpus {
	return &tlCorpus{path: path, byID: map[string]int32{}, modelIx: map[string]int32{}, strs: map[string]string{}, t0: math.Inf(1)}
}

// add adds a checked row of a session; false, adding nothing, when it
// would be a session past traceLabMaxSessions.
func (c *tlCorpus) add(r *traceLabRow, info tlRowInfo, line int) bool {
	id := *r.SessionID
	k, ok := c.byID[id]
	if !ok {
		if len(c.sessions) >= traceLabMaxSessions {
			return false
		}
		k = int32(len(c.sessions))
		c.byID[id] = k
		c.sessions = append(c.sessions, tlSession{id: id, line: line, user: c.intern(r.User), project: c.intern(r.Project),
			codex: deref(r.Provider) == "codex", lo: math.NaN(), hi: math.NaN(), spawn: math.NaN(), wait: math.NaN()})
	}
	s := &c.sessions[k]
	s.lo, s.hi = minNaN(s.lo, info.lo), maxNaN(s.hi, info.hi)
	s.tools += info.tools
	if s.codex {
		s.spawn, s.wait = minNaN(s.spawn, info.spawn), maxNaN(s.wait, info.wait)
	} else {
		for _, w := range info.windows {
			w.parent = k
			s.windows = append(s.windows, w)
		}
	}
	if !info.dated {
		return true
	}
	model := cmp.Or(deref(r.Model), "unknown")
	m, ok := c.modelIx[model]
	if !ok {
		m = int32(len(c.models))
		c.modelIx[model] = m
		c.models = append(c.models, model)
	}
	info.round.model = m
	s.rounds = append(s.rounds, info.round)
	c.t0 = min(c.t0, info.round.submit)
	return true
}

// intern keeps one copy of each user and project name.
func (c *tlCorpus) intern(p *string) *string {
	if p == nil {
		return nil
	}
	s, ok := c.strs[*p]
	if !ok {
		s = *p
		c.strs[s] = s
	}
	return &s
}

// finish puts every session's rounds in replay order: by submit time,
// then round_index, then file order (AIPerf's; round_index alone can
// disagree with the times, and the prefix chain grows in time order).
func (c *tlCorpus) finish() {
	for i := range c.sessions {
		s := &c.sessions[i]
		slices.SortStableFunc(s.rounds, func(a, b tlRound) int {
			return cmp.Or(cmp.Compare(a.submit, b.submit), cmp.Compare(a.index, b.index))
		})
		s.rounds = slices.Clip(s.rounds)
	}
}

// tlTrace is a planned trace: a root session and the subagents nested in
// it, placed in its requests.
type tlTrace struct {
	root int32
	kids []tlKid
}

// plan joins subagents to their parents (when join.on), nests each child
// whose parent is a root and that has a parent request at or before its
// spawn, and lists the traces: the roots in session order, then the
// children that failed to nest, as standalone traces. A session without a
// dated round makes none. Two traces (or two subagents of one) whose ids
// are the same once made safe are refused.
func (c *tlCorpus) plan(ctx context.Context, block int, join traceLabJoin) (*traceLabSource, string, error) {
	if err := c.checkSpan(); err != nil {
		return nil, "", err
	}
	children := map[int32][]tlKid{}
	var stats tlJoinStats
	if join.on {
		var links map[int32]tlWindow
		var err error
		if links, stats, err = c.joinIndex(ctx, join); err != nil {
			return nil, "", err
		}
		children = c.group(links, &stats)
	}
	nested := map[int32]bool{}
	for _, kids := range children {
		for _, k := range kids {
			nested[k.sess] = true
		}
	}
	src := &traceLabSource{path: c.path, block: block, t0: c.t0, sessions: c.sessions, models: c.models}
	placed := map[int32]bool{}
	for i := range c.sessions {
		if k := int32(i); !nested[k] && len(c.sessions[k].rounds) > 0 {
			src.traces = append(src.traces, tlTrace{root: k, kids: c.place(k, children[k], placed)})
		}
	}
	fallback := 0
	for i := range c.sessions {
		if k := int32(i); nested[k] && !placed[k] && len(c.sessions[k].rounds) > 0 {
			src.traces = append(src.traces, tlTrace{root: k})
			fallback++
		}
	}
	if err := src.checkIDs(); err != nil {
		return nil, "", err
	}
	note := fmt.Sprintf("%s: %d sessions -> %d traces (block_size=%d)", TypeTraceLab, len(c.sessions), len(src.traces), block)
	switch {
	case !join.on:
		note += "; subagent join off (" + envTraceLabJoin + ")"
	default:
		note += "; subagent join: " + stats.summary()
	}
	if fallback > 0 {
		note += fmt.Sprintf("; %d subagent session(s) failed to nest and are replayed as standalone traces", fallback)
	}
	return src, note, nil
}

// place keeps the children of root that nest: those with a dated round and
// a request of root at or before their spawn (AIPerf's anchor), marking
// them placed.
func (c *tlCorpus) place(root int32, kids []tlKid, placed map[int32]bool) []tlKid {
	var out []tlKid
	first := round6(c.sessions[root].rounds[0].submit - c.t0)
	for _, k := range kids {
		if len(c.sessions[k.sess].rounds) == 0 || first > round6(k.w.start-c.t0) {
			continue
		}
		out = append(out, k)
		placed[k.sess] = true
	}
	return out
}

// traceLabUnsafe are the runs of characters a trace or agent id may not
// hold.
var traceLabUnsafe = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// safeTraceID is a session id made a trace or agent id, as AIPerf makes
// it: every run of other characters than letters, digits, '.', '_' and
// '-' replaced by '_', cut to 150 characters.
func safeTraceID(id string) string {
	s := traceLabUnsafe.ReplaceAllString(id, "_")
	return s[:min(len(s), 150)]
}

// checkIDs refuses two traces, or two subagents of one trace, whose ids
// are the same (AIPerf's error), at the later session's first line.
func (s *traceLabSource) checkIDs() error {
	ps := problems{path: s.path}
	seen := map[string]string{}
	for _, t := range s.traces {
		root := &s.sessions[t.root]
		id := safeTraceID(root.id)
		if other, dup := seen[id]; dup {
			ps.add(root.line, problemf("session_id", "duplicate TraceLab trace id '%s': session '%s' collides with an earlier session ('%s')", id, root.id, other))
		}
		seen[id] = root.id
		agents := map[string]bool{}
		for _, k := range t.kids {
			kid := &s.sessions[k.sess]
			if a := safeTraceID(kid.id); agents[a] {
				ps.add(kid.line, problemf("session_id", "duplicate TraceLab subagent id '%s' in trace '%s': session '%s' collides with an earlier subagent", a, id, kid.id))
			} else {
				agents[a] = true
			}
		}
	}
	return ps.err()
}

// checkSpan refuses a corpus whose rounds span more than the year a replay
// may last (its times count from the earliest round): a session dated far
// from the others, a clock reset to 1970 say, would hold every other one
// back for decades. The problem is placed at the earliest session's line.
func (c *tlCorpus) checkSpan() error {
	first, last := -1, -1
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range c.sessions {
		for _, r := range c.sessions[i].rounds {
			if r.submit < lo {
				first, lo = i, r.submit
			}
			if r.submit > hi {
				last, hi = i, r.submit
			}
		}
	}
	if first < 0 || (hi-lo)*1000 <= MaxScheduleMs {
		return nil
	}
	at := func(s float64) string { return time.UnixMilli(int64(s * 1000)).UTC().Format(time.RFC3339) }
	ps := problems{path: c.path}
	ps.add(c.sessions[first].line, problemf("timing_events", "the corpus's rounds span %s, from session %s at %s to session %s (line %d) "+
		"at %s: beyond the year a replay may last (its times count from the earliest round); a session dated far from the "+
		"others (a clock reset to 1970, say) is the usual cause: drop or fix its rows", days((hi-lo)*1000), brief(c.sessions[first].id), at(lo),
		brief(c.sessions[last].id), c.sessions[last].line, at(hi)))
	return ps.err()
}
