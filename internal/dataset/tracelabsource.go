package dataset

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
)

// traceLabSource is a TraceLab corpus as a weka set's source: the planned
// traces and their sessions' rounds, each trace rebuilt as AIPerf's
// conversion builds it (a Weka trace of "n" calls and "subagent" entries)
// when it is read, its hash ids synthesised then. What is kept is 48 bytes
// a dated round and a few words a session; a trace's hash ids exist only
// while it is read back (and kept parsed by the set's wekaCache).
type traceLabSource struct {
	path     string
	block    int
	t0       float64 // the corpus's clock: its earliest submit (s since the epoch)
	sessions []tlSession
	models   []string
	traces   []tlTrace
}

func (s *traceLabSource) count() int { return len(s.traces) }

func (s *traceLabSource) name(i int) string {
	return fmt.Sprintf("%s (session %s)", s.path, s.sessions[s.traces[i].root].id)
}

// tlMinter hands out a trace's fresh block ids: one namespace for a parent
// and every subagent nested in it (hash_id_scope "local").
type tlMinter struct{ next int64 }

func (m *tlMinter) take(ids []int64, n int) []int64 {
	for range n {
		m.next++
		ids = append(ids, m.next)
	}
	return ids
}

// read builds trace i: its root session's rounds as API calls, each of
// its subagents as a "subagent" entry right after the last call at or
// before its spawn (entries after one call in time order). Times are
// seconds on the corpus's clock, rounded to the microsecond.
func (s *traceLabSource) read(_ context.Context, i int, ids bool) (wekaTrace, int, error) {
	t := s.traces[i]
	mint := &tlMinter{}
	reqs, models := s.requests(&s.sessions[t.root], mint, ids, math.NaN(), nil)
	pending := map[int][]wekaRequest{}
	for _, k := range t.kids {
		e := s.subagent(k, mint, ids, &models)
		// the last call at or before the spawn (the calls are in time order)
		after := sort.Search(len(reqs), func(j int) bool { return reqs[j].T > e.T })
		anchor := max(0, after-1)
		pending[anchor] = append(pending[anchor], e)
	}
	size := 0
	requests := make([]wekaRequest, 0, len(reqs)+len(t.kids))
	for j, r := range reqs {
		requests = append(requests, r)
		es := pending[j]
		slices.SortStableFunc(es, func(a, b wekaRequest) int { return cmpFloat(a.T, b.T) })
		requests = append(requests, es...)
	}
	var in, out int64
	for _, r := range reqs {
		in, out = in+r.In, out+r.Out
	}
	for _, r := range requests {
		size += 160 + 8*len(r.HashIDs)
		for _, c := range r.Inner {
			size += 160 + 8*len(c.HashIDs)
		}
	}
	tr := wekaTrace{ID: safeTraceID(s.sessions[t.root].id), Models: models, BlockSize: int64(s.block), Scope: "local", Requests: requests,
		Totals: map[string]any{"rounds": len(reqs), "subagents": len(t.kids), "input_tokens": in, "output_tokens": out, "source": TypeTraceLab}}
	return tr, size, nil
}

// requests builds the API calls of a session's rounds: t its submit, in
// its input tokens and out its output and reasoning tokens (each at least
// 1), api_time the reply's span, think_time the gap since the previous
// call ended, stop tool_use when it called a tool. With ids, each call's
// hash ids are floor(input/block) blocks, the first prefix/block of them
// the previous call's, the rest fresh from mint. A subagent's calls
// (entry, its spawn time, not NaN) are never before its spawn. models
// gathers the models used, in order of first use.
func (s *traceLabSource) requests(sess *tlSession, mint *tlMinter, ids bool, entry float64, models []string) ([]wekaRequest, []string) {
	out := make([]wekaRequest, 0, len(sess.rounds))
	var prev []int64
	prevEnd := math.NaN()
	for _, r := range sess.rounds {
		t := round6(r.submit - s.t0)
		req := wekaRequest{T: t, Type: "n", Model: s.models[r.model], In: max(int64(r.in), 1), Out: max(int64(r.out), 1),
			InputTypes: []string{"text"}, OutputTypes: []string{"text"}, Stop: "end_turn"}
		if !slices.Contains(models, req.Model) {
			models = append(models, req.Model)
		}
		if r.toolIn {
			req.InputTypes = []string{"tool_result"}
		}
		if r.tool {
			req.Stop = "tool_use"
		}
		if !math.IsNaN(prevEnd) {
			req.ThinkTime = new(round6(max(t-prevEnd, 0)))
		}
		api := 0.0
		if !math.IsNaN(r.api) {
			api = r.api
			req.APITime = new(round6(r.api))
		}
		prevEnd = t + api
		if ids {
			n := int(r.in) / s.block
			reuse := min(int(r.prefix)/s.block, len(prev), n)
			req.HashIDs = mint.take(append(make([]int64, 0, n), prev[:reuse]...), n-reuse)
			prev = req.HashIDs
		}
		if !math.IsNaN(entry) && req.T < entry {
			req.T = entry
		}
		out = append(out, req)
	}
	return out, models
}

// subagent builds the "subagent" entry of child k: its spawn time, the
// child's calls (the first without think time: there is no call before
// it), completed when its last reply ended within the spawn window.
func (s *traceLabSource) subagent(k tlKid, mint *tlMinter, ids bool, models *[]string) wekaRequest {
	c := &s.sessions[k.sess]
	entry := round6(k.w.start - s.t0)
	inner, own := s.requests(c, mint, ids, entry, nil)
	inner[0].ThinkTime = nil
	for _, m := range own {
		if !slices.Contains(*models, m) {
			*models = append(*models, m)
		}
	}
	end, total := math.Inf(-1), int64(0)
	for _, r := range c.rounds {
		api := 0.0
		if !math.IsNaN(r.api) {
			api = r.api
		}
		end = max(end, r.submit+api)
	}
	for _, r := range inner {
		total += r.In + r.Out
	}
	status := "incomplete"
	if end <= k.w.end {
		status = "completed"
	}
	tools := int64(c.tools)
	return wekaRequest{T: entry, Type: "subagent", AgentID: safeTraceID(c.id), SubagentType: own[0], DurationMs: new(k.w.durMs),
		TotalTokens: &total, ToolUseCount: &tools, Status: status, Inner: inner, Models: own}
}
