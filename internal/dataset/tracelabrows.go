package dataset

import (
	"fmt"
	"math"
	"slices"
)

// traceLabRow is one TraceLab JSONL row (one LLM round): the fields replay
// reads; the corpus's other fields are ignored, as AIPerf ignores them.
type traceLabRow struct {
	SessionID  *string         `json:"session_id"`
	RoundIndex *int64          `json:"round_index"`
	Provider   *string         `json:"provider"`
	User       *string         `json:"user"`
	Project    *string         `json:"project"`
	Model      *string         `json:"model"`
	Input      *int64          `json:"input_tokens_total"`
	Prefix     *int64          `json:"prefix_tokens"`
	Newly      *int64          `json:"newly_append_tokens"`
	Output     *int64          `json:"output_tokens"`
	Reasoning  *int64          `json:"reasoning_output_tokens"`
	FirstInput *string         `json:"first_input_event_type"`
	Events     []traceLabEvent `json:"timing_events"`
	Tools      []traceLabTool  `json:"tools"`
}

// traceLabEvent is an element of a row's timing_events.
type traceLabEvent struct {
	Type      *string `json:"event_type"`
	Timestamp *string `json:"timestamp"`
}

// traceLabTool is an element of a row's tools: a tool call and its wall
// clock window.
type traceLabTool struct {
	Name      *string  `json:"tool_name"`
	EmittedAt *string  `json:"emitted_at"`
	ResultAt  *string  `json:"result_at"`
	LatencyMs *float64 `json:"tool_wall_latency_ms"`
}

// The event types of a round's input (the request was sent after the
// latest) and of its output (the reply ended with the last).
var (
	traceLabInputEvents  = []string{"user_message", "tool_result"}
	traceLabOutputEvents = []string{"text", "reasoning", "tool_call"}
	// traceLabSpawnTools are the blocking tool calls Claude Code spawns a
	// subagent with.
	traceLabSpawnTools = []string{"Agent", "Task"}
)

// tlRound is a dated round of a session, as replay needs it (48 bytes).
type tlRound struct {
	submit float64 // when it was sent: its latest input event (s since the epoch)
	api    float64 // its last output event after submit (s); NaN: no output event
	index  int64   // round_index (0 when absent): the tie-break at equal submits
	in     int32   // input_tokens_total
	prefix int32   // prefix_tokens, at most in
	out    int32   // output_tokens + reasoning_output_tokens
	model  int32   // index into the corpus's models
	tool   bool    // it emitted a tool_call (stop tool_use)
	toolIn bool    // its first input was a tool_result
}

// tlRowInfo is what a checked row adds to its session.
type tlRowInfo struct {
	round       tlRound
	dated       bool
	lo, hi      float64    // its earliest and latest time stamps (NaN: none)
	windows     []tlWindow // its Agent/Task calls of at least the minimum spawn time
	spawn, wait float64    // codex: its earliest spawn_agent emission, latest wait_agent result (NaN: none)
	tools       int
}

// checkTraceLabRow checks a decoded row and reads its round: every
// timestamp must be ISO 8601 and every token count a non-negative integer
// a request may hold. minSpawnMs is the shortest Agent/Task call taken for
// a subagent's window.
func checkTraceLabRow(r *traceLabRow, minSpawnMs float64) (tlRowInfo, []problem) {
	var ps []problem
	count := func(field string, v *int64, hi int64) int64 {
		if v == nil {
			return 0
		}
		if *v < 0 || *v > hi {
			ps = append(ps, problemf(field, "expected a non-negative integer up to %d, got %d", hi, *v))
			return 0
		}
		return *v
	}
	in := count("input_tokens_total", r.Input, maxInputLength)
	prefix := count("prefix_tokens", r.Prefix, math.MaxInt64)
	count("newly_append_tokens", r.Newly, math.MaxInt64)
	out := count("output_tokens", r.Output, maxInputLength)
	if reasoning := count("reasoning_output_tokens", r.Reasoning, maxInputLength); out+reasoning > maxInputLength {
		ps = append(ps, problemf("reasoning_output_tokens", "output_tokens + reasoning_output_tokens is %d, more than the %d a request may generate",
			out+reasoning, maxInputLength))
	} else {
		out += reasoning
	}
	info := tlRowInfo{lo: math.NaN(), hi: math.NaN(), spawn: math.NaN(), wait: math.NaN(), tools: len(r.Tools)}
	stamp := func(field string, s *string) float64 {
		if s == nil || *s == "" {
			return math.NaN()
		}
		ms := parseCaptureTime(*s)
		if math.IsNaN(ms) {
			ps = append(ps, problemf(field, "expected an ISO 8601 time (2026-01-01T00:00:00Z, or without a zone for UTC), got %s", brief(*s)))
			return math.NaN()
		}
		sec := ms / 1000
		info.lo, info.hi = minNaN(info.lo, sec), maxNaN(info.hi, sec)
		return sec
	}
	ins, outs := math.NaN(), math.NaN() // latest input; earliest and latest output
	firstOut := math.NaN()
	for k, e := range r.Events {
		t := stamp(fmt.Sprintf("timing_events[%d].timestamp", k), e.Timestamp)
		if math.IsNaN(t) || e.Type == nil {
			continue
		}
		switch {
		case slices.Contains(traceLabInputEvents, *e.Type):
			ins = maxNaN(ins, t)
		case slices.Contains(traceLabOutputEvents, *e.Type):
			outs, firstOut = maxNaN(outs, t), minNaN(firstOut, t)
			info.round.tool = info.round.tool || *e.Type == "tool_call"
		}
	}
	for k, tool := range r.Tools {
		emitted := stamp(fmt.Sprintf("tools[%d].emitted_at", k), tool.EmittedAt)
		result := stamp(fmt.Sprintf("tools[%d].result_at", k), tool.ResultAt)
		switch name := deref(tool.Name); {
		case slices.Contains(traceLabSpawnTools, name):
			if l := tool.LatencyMs; l != nil && *l >= minSpawnMs && !math.IsNaN(emitted) && !math.IsNaN(result) {
				info.windows = append(info.windows, tlWindow{start: emitted, end: result, durMs: int64(*l)})
			}
		case name == "spawn_agent":
			info.spawn = minNaN(info.spawn, emitted)
		case name == "wait_agent":
			info.wait = maxNaN(info.wait, result)
		}
	}
	if ps != nil {
		return tlRowInfo{}, ps
	}
	info.round.in, info.round.prefix, info.round.out = int32(in), int32(min(prefix, in)), int32(out)
	info.round.index = deref(r.RoundIndex)
	info.round.toolIn = deref(r.FirstInput) == "tool_result"
	info.round.api = math.NaN()
	switch {
	case !math.IsNaN(ins):
		info.round.submit, info.dated = ins, true
	case !math.IsNaN(firstOut): // output only: sent at its first output
		info.round.submit, info.dated = firstOut, true
	}
	if info.dated && !math.IsNaN(outs) {
		info.round.api = max(outs-info.round.submit, 0)
	}
	return info, nil
}

// deref is *p, or the zero value for nil.
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// minNaN and maxNaN are min and max where NaN is "none yet".
func minNaN(a, b float64) float64 {
	if math.IsNaN(a) || b < a {
		return b
	}
	return a
}

func maxNaN(a, b float64) float64 {
	if math.IsNaN(a) || b > a {
		return b
	}
	return a
}
